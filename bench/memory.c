/* ocal benchmark — memory: one JSON line per measurement.
 *
 *   bench/memory [--quick]
 *
 * alloc:     10,000 buffer creations and releases of mixed sizes (log-uniform, 64 B to 64 MiB,
 *            up to 16 alive at a time, the same seeded sequence for every mode), pooled and
 *            unpooled (the pool option, as OCAL_POOL=0 sets it). "touch" modes also write one
 *            byte into each new buffer (drivers that allocate lazily pay at first use) and end
 *            with ocal_context_finish; the same fills on buffers made beforehand give the allocation's
 *            share. Each mode runs the sequence once to warm up, then 5 times timed, and
 *            reports the best pass (hits, misses and allocations count all 5).
 * transfer:  host-to-device and device-to-host GB/s of blocking ocal_buffer_write/read at
 *            1 MiB to 1 GiB from pageable memory (malloc, staging off), pageable memory as a
 *            default context moves it (staging as decided for the device), pageable memory through
 *            the staging ring (staging on; several chunk sizes and host threads), pinned memory
 *            (ocal_pinned_alloc); median of the repetitions. (clEnqueueCopyBuffer from the
 *            pinned block's cl_mem is no yardstick: NVIDIA keeps CL_MEM_ALLOC_HOST_PTR buffers
 *            in device memory and that copy never crosses the bus.)
 * pipeline:  chunks uploaded, computed on (an abs and 24 in-place scalings) and downloaded,
 *            in sequence (blocking calls) and overlapped (transfer queues and events, two
 *            buffers per direction), from and to pinned memory. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#define BENCH_NAME "bench/memory"
#include "common.h"

static ocal_context make_ctx(int pool, int staging) {
  ocal_context_options o;
  CHECK(ocal_context_options_init(&o));
  o.pool = pool;
  o.staging = staging;
  ocal_context ctx;
  CHECK(ocal_context_create(&o, &ctx));
  return ctx;
}

static uint64_t rng(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dull;
}

/* ---- allocation ------------------------------------------------------------------------ */

#define WINDOW 16

static double max_log2 = 26.0; /* 64 MiB; less for --quick */

/* The sequence of (slot, size) every mode replays, drawn before the clock starts so that
 * the random numbers are not part of what is timed. */
static int *seq_slot;
static size_t *seq_size;

static void make_sequence(int ops) {
  seq_slot = malloc((size_t)ops * sizeof *seq_slot);
  seq_size = malloc((size_t)ops * sizeof *seq_size);
  if (!seq_slot || !seq_size) {
    fprintf(stderr, "bench/memory: out of host memory\n");
    exit(1);
  }
  uint64_t seed = 12345;
  for (int i = 0; i < ops; i++) {
    seq_slot[i] = (int)(rng(&seed) % WINDOW);
    /* log-uniform in [2^6, 2^max_log2] bytes */
    double l2 = 6.0 + (max_log2 - 6.0) * (double)(rng(&seed) >> 11) / 9007199254740992.0;
    seq_size[i] = (size_t)exp2(l2);
  }
}

static double alloc_pass(ocal_context ctx, int ops, int touch) {
  ocal_buffer live[WINDOW] = {0};
  cl_command_queue q;
  CHECK(ocal_context_get_cl_queue(ctx, &q));
  double t0 = now();
  for (int i = 0; i < ops; i++) {
    int slot = seq_slot[i];
    if (live[slot]) CHECK(ocal_buffer_release(live[slot]));
    CHECK(ocal_buffer_create(ctx, OCAL_U8, 1, &seq_size[i], &live[slot]));
    if (touch) {
      cl_mem m;
      size_t off;
      CHECK(ocal_buffer_get_cl_mem(live[slot], &m, &off));
      unsigned char zero = 0;
      if (clEnqueueFillBuffer(q, m, &zero, 1, off, 1, 0, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "bench/memory: clEnqueueFillBuffer failed\n");
        exit(1);
      }
    }
  }
  for (int i = 0; i < WINDOW; i++) CHECK(ocal_buffer_release(live[i]));
  CHECK(ocal_context_finish(ctx));
  return now() - t0;
}

/* The same sequence of one-byte fills on buffers made beforehand: what "touch" costs without
 * any allocation, to tell the allocation's share. */
static double touch_only(ocal_context ctx, int ops) {
  ocal_buffer live[WINDOW];
  cl_mem mem[WINDOW];
  size_t n = 64;
  for (int i = 0; i < WINDOW; i++) {
    CHECK(ocal_buffer_create(ctx, OCAL_U8, 1, &n, &live[i]));
    CHECK(ocal_buffer_get_cl_mem(live[i], &mem[i], NULL));
  }
  cl_command_queue q;
  CHECK(ocal_context_get_cl_queue(ctx, &q));
  unsigned char zero = 0;
  CHECK(ocal_context_finish(ctx));
  double t0 = now();
  for (int i = 0; i < ops; i++) {
    clEnqueueFillBuffer(q, mem[seq_slot[i]], &zero, 1, 0, 1, 0, NULL, NULL);
  }
  CHECK(ocal_context_finish(ctx));
  double t = now() - t0;
  for (int i = 0; i < WINDOW; i++) CHECK(ocal_buffer_release(live[i]));
  return t;
}

#define ROUNDS 5

static void bench_alloc(int ops) {
  make_sequence(ops);
  for (int touch = 0; touch <= 1; touch++) {
    double us[2];
    for (int pool = 1; pool >= 0; pool--) {
      ocal_context ctx = make_ctx(pool, 0);
      alloc_pass(ctx, ops, touch); /* warm up: the driver's first allocations, the pool */
      ocal_memory_stats before = {sizeof before}, after = {sizeof after};
      CHECK(ocal_memory_get_stats(ctx, &before));
      /* The best of ROUNDS passes: one pass takes about a millisecond, which one preemption
       * on a busy host would distort. */
      double t = alloc_pass(ctx, ops, touch);
      for (int r = 1; r < ROUNDS; r++) {
        double again = alloc_pass(ctx, ops, touch);
        if (again < t) t = again;
      }
      CHECK(ocal_memory_get_stats(ctx, &after));
      us[pool] = t / ops * 1e6;
      printf("{\"bench\":\"alloc\",\"mode\":\"%s%s\",\"buffers\":%d,\"us_per_alloc_release\":%.3f,"
             "\"best_pass_ms\":%.2f,\"hits\":%llu,\"misses\":%llu,\"device_allocs\":%llu,"
             "\"peak_reserved_mib\":%.1f}\n",
             pool ? "pooled" : "unpooled", touch ? "_touch" : "", ops, us[pool], t * 1e3,
             (unsigned long long)(after.hits - before.hits),
             (unsigned long long)(after.misses - before.misses),
             (unsigned long long)(after.device_allocs - before.device_allocs),
             after.peak_bytes_reserved / 1048576.0);
      fflush(stdout);
      CHECK(ocal_context_release(ctx));
    }
    printf("{\"bench\":\"alloc_speedup\",\"mode\":\"%s\",\"pooled_vs_unpooled\":%.1f",
           touch ? "touch" : "plain", us[0] / us[1]);
    if (touch) {
      ocal_context ctx = make_ctx(1, 0);
      double base = touch_only(ctx, ops);
      for (int r = 1; r < ROUNDS; r++) {
        double again = touch_only(ctx, ops);
        if (again < base) base = again;
      }
      base = base / ops * 1e6;
      CHECK(ocal_context_release(ctx));
      double pooled = us[1] - base, unpooled = us[0] - base;
      /* The allocation's share of a first use: near zero when pooled (within noise). */
      printf(",\"touch_only_us\":%.3f,\"pooled_alloc_us\":%.3f,\"unpooled_alloc_us\":%.3f",
             base, pooled, unpooled);
    }
    printf("}\n");
  }
  free(seq_slot);
  free(seq_size);
}

/* ---- transfers ------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef enum { M_WRITE, M_READ } xfer_kind;

static double time_transfer(ocal_context ctx, ocal_buffer dev, void *host, size_t bytes,
                            xfer_kind kind, int reps) {
  double t[32];
  for (int r = -1; r < reps; r++) {
    double t0 = now();
    switch (kind) {
      case M_WRITE: CHECK(ocal_buffer_write(dev, 0, bytes, host, NULL)); break;
      case M_READ: CHECK(ocal_buffer_read(dev, 0, bytes, host, NULL)); break;
    }
    CHECK(ocal_context_finish(ctx));
    if (r >= 0) t[r] = now() - t0;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  return t[reps / 2];
}

typedef struct {
  size_t chunk;
  int threads;
} staging_kind;

static void bench_transfer(size_t max_bytes, const staging_kind *chunks, int nchunks) {
  ocal_context plain = make_ctx(1, 0);
  ocal_device_info info = {sizeof info};
  CHECK(ocal_context_get_device_info(plain, &info));
  unsigned char *pageable = malloc(max_bytes);
  if (!pageable) exit(1);
  memset(pageable, 1, max_bytes); /* touch every page: no first-touch faults in the timing */
  void *pinned;
  CHECK(ocal_pinned_alloc(plain, max_bytes, &pinned));
  memset(pinned, 1, max_bytes);
  int is_pinned;
  CHECK(ocal_pinned_query(plain, pinned, &is_pinned, NULL, NULL));
  ocal_context automatic = make_ctx(1, -1);
  ocal_context staged[8];
  char env[32];
  setenv("OCAL_STAGING_MIN", "0", 1);
  for (int c = 0; c < nchunks; c++) {
    snprintf(env, sizeof env, "%zu", chunks[c].chunk);
    setenv("OCAL_STAGING_CHUNK", env, 1);
    snprintf(env, sizeof env, "%d", chunks[c].threads);
    setenv("OCAL_STAGING_THREADS", env, 1);
    staged[c] = make_ctx(1, 1);
  }
  unsetenv("OCAL_STAGING_CHUNK");
  unsetenv("OCAL_STAGING_MIN");
  unsetenv("OCAL_STAGING_THREADS");

  for (size_t bytes = 1 << 20; bytes <= max_bytes; bytes *= 4) {
    int reps = bytes >= ((size_t)256 << 20) ? 5 : 11;
    ocal_buffer dev;
    CHECK(ocal_buffer_create(plain, OCAL_U8, 1, &bytes, &dev));
    for (int dir = 0; dir < 2; dir++) {
      const char *d = dir ? "d2h" : "h2d";
      xfer_kind k = dir ? M_READ : M_WRITE;
      double tp = time_transfer(plain, dev, pageable, bytes, k, reps);
      double tpin = time_transfer(plain, dev, pinned, bytes, k, reps);
      /* What a program gets without asking: the context's own staging decision. */
      ocal_buffer ad;
      CHECK(ocal_buffer_create(automatic, OCAL_U8, 1, &bytes, &ad));
      double ta = time_transfer(automatic, ad, pageable, bytes, k, reps);
      CHECK(ocal_buffer_release(ad));
      printf("{\"bench\":\"transfer\",\"dir\":\"%s\",\"bytes\":%zu,\"pageable_gbs\":%.2f,"
             "\"pinned_gbs\":%.2f,\"pinned_vs_pageable\":%.2f,\"default_pageable_gbs\":%.2f",
             d, bytes, bytes / tp / 1e9, bytes / tpin / 1e9, tp / tpin, bytes / ta / 1e9);
      for (int c = 0; c < nchunks; c++) {
        ocal_buffer sd;
        CHECK(ocal_buffer_create(staged[c], OCAL_U8, 1, &bytes, &sd));
        double ts = time_transfer(staged[c], sd, pageable, bytes, k, reps);
        printf(",\"staged_t%d_%zuk_gbs\":%.2f", chunks[c].threads, chunks[c].chunk >> 10,
               bytes / ts / 1e9);
        CHECK(ocal_buffer_release(sd));
      }
      printf("}\n");
      fflush(stdout);
    }
    CHECK(ocal_buffer_release(dev));
  }
  for (int c = 0; c < nchunks; c++) CHECK(ocal_context_release(staged[c]));
  CHECK(ocal_context_release(automatic));
  CHECK(ocal_pinned_free(plain, pinned));
  free(pageable);
  CHECK(ocal_context_release(plain));
}

/* ---- pipeline -------------------------------------------------------------------------- */

#define SCALES 24

static void compute(ocal_buffer in, ocal_buffer out) {
  CHECK(ocal_unary(OCAL_UNARY_ABS, in, out));
  for (int i = 0; i < SCALES; i++) CHECK(ocal_scale(1.0001, out));
}

static void bench_pipeline(size_t chunk_elems, int chunks) {
  ocal_context ctx = make_ctx(1, -1);
  size_t bytes = chunk_elems * sizeof(float);
  float *hin, *hout;
  CHECK(ocal_pinned_alloc(ctx, bytes * (size_t)chunks, (void **)&hin));
  CHECK(ocal_pinned_alloc(ctx, bytes * (size_t)chunks, (void **)&hout));
  for (size_t i = 0; i < chunk_elems * (size_t)chunks; i++) hin[i] = (float)(i % 1000) - 500.0f;
  ocal_buffer in[2], out[2];
  for (int k = 0; k < 2; k++) {
    CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &chunk_elems, &in[k]));
    CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &chunk_elems, &out[k]));
  }
  /* The parts alone, for scale (after one round that builds the kernels). */
  compute(in[0], out[0]);
  CHECK(ocal_context_finish(ctx));
  double t0 = now();
  CHECK(ocal_buffer_write(in[0], 0, chunk_elems, hin, NULL));
  double t_up = now() - t0;
  t0 = now();
  compute(in[0], out[0]);
  CHECK(ocal_context_finish(ctx));
  double t_comp = now() - t0;
  t0 = now();
  CHECK(ocal_buffer_read(out[0], 0, chunk_elems, hout, NULL));
  double t_down = now() - t0;

  double best_seq = 1e9, best_ovl = 1e9;
  for (int trial = 0; trial < 3; trial++) {
    t0 = now();
    for (int s = 0; s < chunks; s++) {
      int k = s % 2;
      CHECK(ocal_buffer_write(in[k], 0, chunk_elems, hin + (size_t)s * chunk_elems, NULL));
      compute(in[k], out[k]);
      CHECK(ocal_buffer_read(out[k], 0, chunk_elems, hout + (size_t)s * chunk_elems, NULL));
    }
    double t = now() - t0;
    if (t < best_seq) best_seq = t;

    ocal_event up[64] = {0}, done[64] = {0}, down[64] = {0};
    t0 = now();
    for (int s = 0; s < chunks; s++) {
      int k = s % 2;
      CHECK(ocal_transfer_write(in[k], 0, chunk_elems, hin + (size_t)s * chunk_elems,
                                s >= 2 ? 1 : 0, s >= 2 ? &done[s - 2] : NULL, &up[s]));
      ocal_event w[2] = {up[s], s >= 2 ? down[s - 2] : NULL};
      CHECK(ocal_context_enqueue_wait(ctx, s >= 2 ? 2 : 1, w));
      compute(in[k], out[k]);
      CHECK(ocal_context_enqueue_marker(ctx, &done[s]));
      CHECK(ocal_transfer_read(out[k], 0, chunk_elems, hout + (size_t)s * chunk_elems, 1,
                               &done[s], &down[s]));
    }
    CHECK(ocal_event_wait(down[chunks - 1]));
    CHECK(ocal_context_finish(ctx));
    t = now() - t0;
    for (int s = 0; s < chunks; s++) {
      CHECK(ocal_event_wait(down[s]));
      ocal_event_release(up[s]);
      ocal_event_release(done[s]);
      ocal_event_release(down[s]);
    }
    if (t < best_ovl) best_ovl = t;
  }
  /* The result must be right: |x| scaled SCALES times. */
  double f = pow(1.0001, SCALES);
  for (size_t i = 0; i < chunk_elems * (size_t)chunks; i += 9973) {
    double want = fabs((double)hin[i]) * f;
    if (fabs(hout[i] - want) > 1e-3 * (want + 1)) {
      fprintf(stderr, "bench/memory: pipeline result %zu is %g, expected %g\n", i, hout[i], want);
      exit(1);
    }
  }
  printf("{\"bench\":\"pipeline\",\"chunks\":%d,\"chunk_bytes\":%zu,\"upload_ms\":%.3f,"
         "\"compute_ms\":%.3f,\"download_ms\":%.3f,\"sequential_ms\":%.3f,\"overlapped_ms\":%.3f,"
         "\"speedup\":%.2f}\n",
         chunks, bytes, t_up * 1e3, t_comp * 1e3, t_down * 1e3, best_seq * 1e3, best_ovl * 1e3,
         best_seq / best_ovl);
  for (int k = 0; k < 2; k++) {
    CHECK(ocal_buffer_release(in[k]));
    CHECK(ocal_buffer_release(out[k]));
  }
  CHECK(ocal_pinned_free(ctx, hin));
  CHECK(ocal_pinned_free(ctx, hout));
  CHECK(ocal_context_release(ctx));
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  ocal_device_info info = {sizeof info};
  CHECK(ocal_device_select(NULL, &info));
  printf("{\"bench\":\"device\",\"name\":\"%s\",\"platform\":\"%s\",\"driver\":\"%s\"}\n",
         info.name, info.platform_name, info.driver_version);
  fflush(stdout);
  if (quick) max_log2 = 20.0;
  bench_alloc(quick ? 300 : 10000);
  static const staging_kind kinds[] = {{(size_t)4 << 20, 1}, {(size_t)4 << 20, 4},
                                        {(size_t)1 << 20, 8}, {(size_t)4 << 20, 8},
                                        {(size_t)16 << 20, 8}};
  static const staging_kind quick_kinds[] = {{(size_t)1 << 20, 2}};
  if (quick)
    bench_transfer((size_t)4 << 20, quick_kinds, 1);
  else
    bench_transfer((size_t)1 << 30, kinds, 5);
  bench_pipeline(quick ? 50000 : ((size_t)16 << 20), quick ? 4 : 16);
  return 0;
}
