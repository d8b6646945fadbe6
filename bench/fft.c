/* ocal benchmark — FFT plans on both engines at the shapes of issue 5.
 *
 * For each shape and engine: single-precision C2C, out of place, forward (the call
 * torch.fft.fft / fft2 makes, which bench/fft_torch.py times for cuFFT). Prints one JSON line
 * per measurement: milliseconds per execution (the whole batch), GFLOP/s counted as
 * 5 N log2 N per complex transform of N points, GB/s counted as bytes read + written once,
 * and the plan creation time cold (empty disk cache) and from the disk cache (a second
 * context, so the memory cache is empty too).
 *
 *   bench/fft [SELECTOR] [shape ...]       shapes like 4096x32768 or 2d:4096x4096
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ocal.h>

typedef struct shape {
  int ndim;       /* 1 or 2 */
  size_t n[2];    /* transform lengths (row-major) */
  size_t batch;
} shape;

static const shape default_shapes[] = {
    {1, {1024, 0}, 65536},      {1, {4096, 0}, 32768}, {1, {1u << 20, 0}, 128},
    {1, {1u << 24, 0}, 8},      {2, {4096, 4096}, 1},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail_line(const char *engine, const shape *s, const char *what, ocal_status st) {
  printf("{\"bench\":\"fft\",\"engine\":\"%s\",\"shape\":\"%zu%s%zu\",\"batch\":%zu,"
         "\"error\":\"%s: %s\"}\n",
         engine, s->n[0], s->ndim == 2 ? "x" : "", s->ndim == 2 ? s->n[1] : (size_t)0, s->batch,
         what, ocal_status_string(st));
  fprintf(stderr, "bench/fft: %s %s: %s\n", engine, what, ocal_last_error());
  fflush(stdout);
}

static ocal_status make_context(const char *selector, const char *cache_dir, ocal_context *ctx) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = selector;
  o.cache_dir = cache_dir;
  o.disk_cache = 1;
  return ocal_context_create(ctx, &o);
}

static void bench_one(const char *selector, const char *dir, ocal_fft_engine engine,
                      const shape *s) {
  const char *name;
  ocal_fft_engine_name(engine, &name);
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = s->ndim;
  d.lengths[0] = s->n[0];
  d.lengths[1] = s->n[1];
  d.batch = s->batch;
  d.engine = engine;

  /* Cold: a fresh context and an empty cache directory. */
  ocal_context ctx;
  ocal_status st = make_context(selector, dir, &ctx);
  if (st != OCAL_OK) return fail_line(name, s, "context", st);
  ocal_fft_plan plan;
  double t0 = now();
  st = ocal_fft_plan_create(ctx, &d, &plan);
  double cold = now() - t0;
  if (st != OCAL_OK) {
    ocal_context_release(ctx);
    return fail_line(name, s, "plan", st);
  }
  /* Warm: another context (empty memory cache) on the same directory. */
  ocal_context ctx2;
  double warm = -1;
  int from_disk = 0;
  if (make_context(selector, dir, &ctx2) == OCAL_OK) {
    ocal_fft_plan plan2;
    t0 = now();
    if (ocal_fft_plan_create(ctx2, &d, &plan2) == OCAL_OK) {
      warm = now() - t0;
      ocal_fft_plan_info info;
      ocal_fft_plan_info_get(plan2, &info);
      from_disk = info.from_disk_cache;
      ocal_fft_plan_release(plan2);
    }
    ocal_context_release(ctx2);
  }

  size_t n = s->n[0] * (s->ndim == 2 ? s->n[1] : 1), total = n * s->batch;
  ocal_buffer in = NULL, out = NULL;
  float one[2] = {1.0f, 0.5f};
  st = ocal_buffer_create(ctx, OCAL_C32, 1, &total, &in);
  if (st == OCAL_OK) st = ocal_buffer_create(ctx, OCAL_C32, 1, &total, &out);
  if (st == OCAL_OK) st = ocal_buffer_fill(in, one);
  double ms = -1;
  if (st == OCAL_OK) {
    for (int i = 0; i < 3 && st == OCAL_OK; i++)
      st = ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out);
    if (st == OCAL_OK) st = ocal_finish(ctx);
    /* One timed execution sizes the run to about half a second. */
    t0 = now();
    if (st == OCAL_OK) st = ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out);
    if (st == OCAL_OK) st = ocal_finish(ctx);
    double one_s = now() - t0;
    int reps = one_s > 0 ? (int)(0.5 / one_s) : 100;
    if (reps < 10) reps = 10;
    if (reps > 2000) reps = 2000;
    t0 = now();
    for (int i = 0; i < reps && st == OCAL_OK; i++)
      st = ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out);
    if (st == OCAL_OK) st = ocal_finish(ctx);
    ms = (now() - t0) / reps * 1e3;
  }
  if (st != OCAL_OK) {
    fail_line(name, s, "execute", st);
  } else {
    double flops = 5.0 * (double)n * log2((double)n) * (double)s->batch;
    double bytes = 2.0 * (double)total * 8.0;
    ocal_device_info info;
    ocal_context_device(ctx, &info);
    printf("{\"bench\":\"fft\",\"engine\":\"%s\",\"device\":\"%s\",\"kind\":\"c2c\","
           "\"precision\":\"f32\",\"shape\":\"%s%zu%s%.0zu\",\"batch\":%zu,\"ms\":%.4f,"
           "\"gflops\":%.1f,\"gbs\":%.1f,\"plan_cold_s\":%.3f,\"plan_disk_s\":%.3f,"
           "\"plan_from_disk\":%d}\n",
           name, info.name, s->ndim == 2 ? "2d:" : "", s->n[0], s->ndim == 2 ? "x" : "",
           s->ndim == 2 ? s->n[1] : (size_t)0, s->batch, ms, flops / (ms * 1e-3) / 1e9,
           bytes / (ms * 1e-3) / 1e9, cold, warm, from_disk);
    fflush(stdout);
  }
  ocal_buffer_release(in);
  ocal_buffer_release(out);
  ocal_fft_plan_release(plan);
  ocal_context_release(ctx);
}

static int parse_shape(const char *arg, shape *s) {
  memset(s, 0, sizeof *s);
  s->ndim = 1;
  if (strncmp(arg, "2d:", 3) == 0) {
    s->ndim = 2;
    s->batch = 1;
    return sscanf(arg + 3, "%zux%zu", &s->n[0], &s->n[1]) == 2 ? 0 : -1;
  }
  return sscanf(arg, "%zux%zu", &s->n[0], &s->batch) == 2 ? 0 : -1;
}

int main(int argc, char **argv) {
  const char *selector = argc > 1 && strchr(argv[1], 'x') == NULL ? argv[1] : NULL;
  int first = selector ? 2 : 1;
  char dir[] = "/tmp/ocal-bench-fft-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  shape shapes[16];
  size_t count = 0;
  for (int i = first; i < argc && count < 16; i++)
    if (parse_shape(argv[i], &shapes[count]) == 0) count++;
  if (count == 0) {
    count = sizeof default_shapes / sizeof default_shapes[0];
    memcpy(shapes, default_shapes, sizeof default_shapes);
  }
  const ocal_fft_engine engines[] = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_ENGINE_CLFFT};
  for (size_t i = 0; i < count; i++) {
    for (size_t e = 0; e < 2; e++) {
      int available = 0;
      ocal_fft_engine_available(engines[e], &available);
      if (available) bench_one(selector, dir, engines[e], &shapes[i]);
    }
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
