/* fft_filter — low-pass filters a noisy signal on the device: forward FFT, zero the high
 * frequencies, inverse FFT.
 *
 * The signal is a sum of three sines under white noise. A real-to-complex FFT gives its
 * spectrum, bins 0 .. N/2; the bins from --cutoff up hold only noise, and since they are one
 * contiguous range, a view of them filled with zeros is the whole filter. The inverse
 * (complex-to-real) FFT brings the cleaned signal back. The host checks the device's spectrum
 * against a direct DFT at the sines' frequencies and the signal-to-noise ratio before and
 * after. White noise spreads evenly over the bins, so keeping `cutoff` of them leaves that
 * share of its power: the filter must improve the ratio to within 3 dB of
 * 10 log10(bins / cutoff) (27 dB for the defaults).
 *
 *   ./fft_filter [--device SELECTOR] [--n N] [--cutoff K] [--noise SIGMA]
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

#include "example_args.h"

#define TRY(call)                                                                        \
  do {                                                                                   \
    ocal_status s_ = (call);                                                             \
    if (s_ != OCAL_OK) {                                                                 \
      fprintf(stderr, "fft_filter: %s failed: %s\n%s\n", #call, ocal_status_name(s_),  \
              ocal_last_error());                                                        \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: fft_filter [--device SELECTOR] [--n N] [--cutoff K] [--noise SIGMA]\n"
          "Low-pass filters N samples (default 65536) of three sines (at 7, 19 and 42 cycles\n"
          "per window) under white noise of standard deviation SIGMA (default 1) through an\n"
          "FFT on the device, keeping frequency bins below K (default 64), and prints the\n"
          "signal-to-noise ratio before and after.\n"
          "--device picks the device (gpu, cpu, pocl, P:D, ...; default OCAL_DEVICE, else the\n"
          "first GPU, accelerator, CPU). Exit status 1 when a check fails, 2 for bad arguments.\n");
  return status;
}

static uint64_t next_u64(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double next_normal(uint64_t *s) {
  double u = (double)(next_u64(s) >> 11) * 0x1p-53, v = (double)(next_u64(s) >> 11) * 0x1p-53;
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* 10 log10(signal power / power of the error against the clean signal). */
static double snr_db(const float *clean, const float *x, size_t n) {
  double ps = 0, pe = 0;
  for (size_t i = 0; i < n; i++) {
    ps += (double)clean[i] * clean[i];
    pe += ((double)x[i] - clean[i]) * ((double)x[i] - clean[i]);
  }
  return 10.0 * log10(ps / pe);
}

int main(int argc, char **argv) {
  const char *device = NULL;
  size_t n = 65536, cutoff = 64;
  double noise = 1.0;
  static const double freq[3] = {7, 19, 42}, amp[3] = {1.0, 0.6, 0.4};
  for (int i = 1; i < argc; i++) {
    int common = example_common_arg(argc, argv, &i, "fft_filter", usage, &device);
    if (common == 1) return 0;
    if (common < 0) return usage(stderr, 2);
    if (common == 2) continue;
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(argv[i], "--n") == 0 && v && v[0] != '-') {
      n = (size_t)strtoull(v, &end, 10);
    } else if (strcmp(argv[i], "--cutoff") == 0 && v && v[0] != '-') {
      cutoff = (size_t)strtoull(v, &end, 10);
    } else if (strcmp(argv[i], "--noise") == 0 && v) {
      noise = strtod(v, &end);
      if (!(noise > 0) || !isfinite(noise)) end = NULL;
    } else {
      end = NULL;
    }
    if (!end || *end || (end == v)) {
      fprintf(stderr, "fft_filter: bad argument '%s%s%s'\n", argv[i], v ? " " : "", v ? v : "");
      return usage(stderr, 2);
    }
    i++;
  }
  if (cutoff <= 42 || cutoff > n / 2 || n < 128) {
    fprintf(stderr,
            "fft_filter: want N >= 128 and 42 < cutoff <= N/2 (the highest sine is at bin 42); "
            "got N = %zu, cutoff = %zu\n",
            n, cutoff);
    return 2;
  }

  /* The clean and the noisy signal, on the host. */
  float *clean = malloc(n * sizeof *clean), *noisy = malloc(n * sizeof *noisy);
  float *filtered = malloc(n * sizeof *filtered);
  float complex *spec = malloc((n / 2 + 1) * sizeof *spec);
  if (!clean || !noisy || !filtered || !spec) {
    fprintf(stderr, "fft_filter: out of host memory\n");
    return 1;
  }
  uint64_t rng = 12345;
  for (size_t i = 0; i < n; i++) {
    double t = (double)i / (double)n, s = 0;
    for (int k = 0; k < 3; k++) s += amp[k] * sin(6.283185307179586 * freq[k] * t);
    clean[i] = (float)s;
    noisy[i] = (float)(s + noise * next_normal(&rng));
  }

  ocal_context ctx;
  if (example_context("fft_filter", device, &ctx) != OCAL_OK) return 1;

  /* One plan for each direction: R2C forward, C2R inverse (scaled by 1/N, NumPy's rule). */
  ocal_fft_desc d;
  TRY(ocal_fft_desc_init(&d));
  d.lengths[0] = n;
  d.kind = OCAL_FFT_R2C;
  ocal_fft_plan forward, inverse;
  TRY(ocal_fft_plan_create(ctx, &d, &forward));
  d.kind = OCAL_FFT_C2R;
  TRY(ocal_fft_plan_create(ctx, &d, &inverse));
  ocal_fft_plan_info pi = {.struct_size = sizeof pi};
  TRY(ocal_fft_plan_get_info(forward, &pi));

  size_t bins = n / 2 + 1, high = bins - cutoff;
  ocal_buffer x, X, X_high, y;
  TRY(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, noisy, &x));
  TRY(ocal_buffer_create(ctx, OCAL_C32, 1, &bins, &X));
  TRY(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &y));
  TRY(ocal_fft_execute(forward, OCAL_FFT_FORWARD, x, X));
  TRY(ocal_buffer_read(X, 0, bins, spec, NULL)); /* for the check below */
  /* The filter: bins cutoff .. N/2 set to 0 through a view of them. */
  const float zero[2] = {0.0f, 0.0f};
  TRY(ocal_buffer_view(X, cutoff, 1, &high, &X_high));
  TRY(ocal_buffer_fill(X_high, zero));
  TRY(ocal_fft_execute(inverse, OCAL_FFT_INVERSE, X, y));
  TRY(ocal_buffer_read(y, 0, n, filtered, NULL));

  /* The device's spectrum against a direct DFT (in double) at the sines' bins: each holds
   * amp * N / 2, plus noise. */
  double worst = 0;
  for (int k = 0; k < 3; k++) {
    size_t b = (size_t)freq[k];
    double complex want = 0;
    for (size_t i = 0; i < n; i++)
      want += noisy[i] * cexp(-I * 6.283185307179586 * (double)((b * i) % n) / (double)n);
    double err = cabs(spec[b] - want) / cabs(want);
    if (!(err <= worst)) worst = err;
  }
  double before = snr_db(clean, noisy, n), after = snr_db(clean, filtered, n);
  double expected = 10.0 * log10((double)bins / (double)cutoff);
  int ok = worst <= 1e-4 && after >= before + expected - 3.0;
  printf("FFT engine %s, %zu samples, %zu of %zu frequency bins kept\n", pi.engine_name, n,
         cutoff, bins);
  printf("spectrum at the sines' bins against a direct DFT: relative error %.1e (limit 1e-4)\n",
         worst);
  printf("SNR before: %.2f dB, after: %.2f dB, improvement %.2f dB (white noise: %.2f; want "
         ">= %.2f): %s\n",
         before, after, after - before, expected, expected - 3.0, ok ? "ok" : "FAILED");

  ocal_buffer_release(X_high);
  ocal_buffer_release(X);
  ocal_buffer_release(x);
  ocal_buffer_release(y);
  ocal_fft_plan_release(forward);
  ocal_fft_plan_release(inverse);
  ocal_context_release(ctx);
  free(clean);
  free(noisy);
  free(filtered);
  free(spec);
  return ok ? 0 : 1;
}
