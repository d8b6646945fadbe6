/* The compute suites: GEMM (square and the MLP's shapes) and the BLAS-1/2 calls through
 * CLBlast, FFT plans on every engine, and the kernel cache (compile, disk hit in a second
 * process, memory hit). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ---- GEMM ----------------------------------------------------------------------------- */

static ocal_buffer random_buffer(ocal_context ctx, int ndim, size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols};
  ocal_buffer b = NULL;
  if (ndim == 1) shape[0] = cols;
  if (ocal_buffer_create(ctx, OCAL_F32, ndim, shape, &b) != OCAL_OK) return NULL;
  if (ocal_random_uniform(rows * 31 + cols, 0, -0.5, 0.5, b) != OCAL_OK) {
    ocal_buffer_release(b);
    return NULL;
  }
  return b;
}

static ocal_buffer random_matrix(ocal_context ctx, size_t rows, size_t cols) {
  return random_buffer(ctx, 2, rows, cols);
}

/* A random matrix of a 16-bit type: f32 values cast (rounded to nearest even). */
static ocal_buffer random_matrix_of(ocal_context ctx, ocal_dtype dt, size_t rows, size_t cols) {
  ocal_buffer f = random_matrix(ctx, rows, cols), h = NULL;
  if (dt == OCAL_F32 || !f) return f;
  size_t shape[2] = {rows, cols};
  if (ocal_buffer_create(ctx, dt, 2, shape, &h) != OCAL_OK || ocal_cast(f, h) != OCAL_OK) {
    ocal_buffer_release(h);
    h = NULL;
  }
  ocal_buffer_release(f);
  return h;
}

typedef struct gemm_arg {
  ocal_transpose ta, tb;
  ocal_buffer a, b, c;
} gemm_arg;

static ocal_status run_gemm(void *p) {
  gemm_arg *g = p;
  return ocal_gemm(g->ta, g->tb, 1.0, g->a, g->b, 0.0, g->c);
}

static const char *tuning_name(ocal_blas_tuning_source s) {
  switch (s) {
    case OCAL_TUNING_DISABLED: return "tuning off";
    case OCAL_TUNING_BUILTIN: return "built-in tuning";
    case OCAL_TUNING_FILE: return "tuning file";
    case OCAL_TUNING_USER: return "user tuning";
    default: return "CLBlast defaults";
  }
}

/* dtype: the rows' element type, "f32", or "tf32" for a context in TF32 precision (paired
 * with PyTorch's rows of TF32 on). */
static int one_gemm(bench_run *r, const char *label, size_t m, size_t n, size_t k,
                    ocal_transpose ta, ocal_transpose tb, const char *tuning, const char *dtype) {
  gemm_arg g = {ta, tb, NULL, NULL, NULL};
  /* "f16", "bf16" and "f64" rows multiply buffers of that type; "f32" and "tf32" f32 ones. */
  ocal_dtype dt = !strcmp(dtype, "f16")    ? OCAL_F16
                  : !strcmp(dtype, "bf16") ? OCAL_BF16
                  : !strcmp(dtype, "f64")  ? OCAL_F64
                                           : OCAL_F32;
  g.a = ta ? random_matrix_of(r->ctx, dt, k, m) : random_matrix_of(r->ctx, dt, m, k);
  g.b = tb ? random_matrix_of(r->ctx, dt, n, k) : random_matrix_of(r->ctx, dt, k, n);
  g.c = random_matrix_of(r->ctx, dt, m, n);
  int rc = 1;
  if (!g.a || !g.b || !g.c) {
    fprintf(stderr, "ocal bench: gemm matrices: %s\n", ocal_last_error());
  } else {
    double t = bench_time(r, run_gemm, &g, r->quick ? 0.01 : 0.2);
    if (t > 0) {
      char op[32], size[48], note[64];
      snprintf(op, sizeof op, "gemm_%c%c", ta ? 't' : 'n', tb ? 't' : 'n');
      snprintf(size, sizeof size, "%zux%zux%zu", m, n, k);
      snprintf(note, sizeof note, "%s; %s", label, tuning);
      /* Square shapes plot against their side; the others carry m as their x. */
      bench_add(r, "gemm", op, dtype, size, (double)m, "gflops",
                2.0 * (double)m * (double)n * (double)k / t * 1e-9, "GFLOP/s", -1, t * 1e6,
                note);
      rc = 0;
    }
  }
  ocal_buffer_release(g.a);
  ocal_buffer_release(g.b);
  ocal_buffer_release(g.c);
  return rc;
}

typedef struct vec_arg {
  int op;
  ocal_buffer x, y, r, a, xs, ys;
} vec_arg;

static ocal_status run_vec(void *p) {
  vec_arg *v = p;
  switch (v->op) {
    case 0: return ocal_axpy(0.5, v->x, v->y);
    case 1: return ocal_scale(0.999, v->x);
    case 2: return ocal_dot(v->x, v->y, OCAL_AXIS_ALL, v->r);
    case 3: return ocal_norm2(v->x, OCAL_AXIS_ALL, v->r);
    default: return ocal_gemv(OCAL_NO_TRANS, 1.0, v->a, v->xs, 0.0, v->ys);
  }
}

/* BLAS-1/2 calls, in GB/s beside the copy of the same number of floats. The BLAS-1 rows keep
 * their names (blas_axpy, blas_scal, blas_dot, blas_nrm2) so that logs compare across
 * versions; since 0.2 they time ocal_axpy, ocal_scale, ocal_dot and ocal_norm2, the one
 * function of each job (ocal_blas_axpy, ocal_blas_scal and the BLAS ocal_dot and ocal_nrm2
 * are gone). */
static int blas_vectors(bench_run *r, size_t n) {
  static const char *names[] = {"blas_axpy", "blas_scal", "blas_dot", "blas_nrm2", "gemv"};
  static const double passes[] = {3, 2, 2, 1, 1}; /* floats moved per element */
  size_t one = 1, rows = 4096, cols = n / rows, ashape[2] = {rows, cols};
  vec_arg v = {0, NULL, NULL, NULL, NULL, NULL, NULL};
  v.x = random_buffer(r->ctx, 1, 1, n);
  v.y = random_buffer(r->ctx, 1, 2, n);
  ocal_status s = v.x && v.y ? OCAL_OK : OCAL_OUT_OF_DEVICE_MEMORY;
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &one, &v.r);
  if (s == OCAL_OK) s = ocal_buffer_view(v.y, 0, 2, ashape, &v.a);
  if (s == OCAL_OK) s = ocal_buffer_view(v.x, 0, 1, &cols, &v.xs);
  if (s == OCAL_OK) s = ocal_buffer_create(r->ctx, OCAL_F32, 1, &rows, &v.ys);
  int rc = s != OCAL_OK ? bench_fail("BLAS-1 buffers", s) : 0;
  double copy = rc ? -1 : bench_copy_gbps(r, n);
  if (copy < 0) rc = 1;
  char size[48];
  snprintf(size, sizeof size, "%zu", n);
  for (int op = 0; op < 5 && !rc; op++) {
    if (r->quick && (op == 1 || op == 3)) continue; /* scal and nrm2: more compiles than news */
    v.op = op;
    double t = bench_time(r, run_vec, &v, r->quick ? 0.005 : 0.05);
    if (t < 0) {
      rc = 1;
      break;
    }
    double gbps = passes[op] * 4.0 * (double)n / t / 1e9;
    bench_add(r, "gemm", names[op], "f32", size, (double)n, "bandwidth", gbps, "GB/s",
              gbps / copy, t * 1e6, op == 4 ? "4096 x n/4096 matrix times a vector" : "");
  }
  ocal_buffer_release(v.x);
  ocal_buffer_release(v.y);
  ocal_buffer_release(v.a);
  ocal_buffer_release(v.xs);
  ocal_buffer_release(v.ys);
  ocal_buffer_release(v.r);
  return rc;
}

int bench_suite_gemm(bench_run *r) {
  ocal_blas_tuning tuning = {sizeof tuning};
  ocal_status s = ocal_blas_get_tuning(r->ctx, OCAL_F32, &tuning);
  if (s != OCAL_OK) return bench_fail("GEMM tuning", s);
  const char *tname = tuning_name(tuning.source);
  int rc = 0;
  for (size_t m = r->quick ? 128 : 256; m <= r->gemm_max && !rc; m *= 2)
    rc = one_gemm(r, "square", m, m, m, OCAL_NO_TRANS, OCAL_NO_TRANS, tname, "f32");
  /* The MLP 784-512-10 at batch 256: forward, weight gradients, input gradients. */
  static const struct {
    const char *label;
    size_t m, n, k;
    ocal_transpose ta, tb;
  } nn[] = {{"MLP fc1 forward", 256, 512, 784, OCAL_NO_TRANS, OCAL_NO_TRANS},
            {"MLP fc2 forward", 256, 10, 512, OCAL_NO_TRANS, OCAL_NO_TRANS},
            {"MLP fc1 dW", 784, 512, 256, OCAL_TRANS, OCAL_NO_TRANS},
            {"MLP fc2 dW", 512, 10, 256, OCAL_TRANS, OCAL_NO_TRANS},
            {"MLP fc2 dX", 256, 512, 10, OCAL_NO_TRANS, OCAL_TRANS},
            {"MLP fc1 dX", 256, 784, 512, OCAL_NO_TRANS, OCAL_TRANS}};
  /* Quick runs (CI on a CPU) keep the shapes that share CLBlast's kernels: each new kernel
   * is a compile of seconds there. */
  for (size_t i = 0; i < sizeof nn / sizeof nn[0] && !rc && !r->quick; i++)
    rc = one_gemm(r, nn[i].label, nn[i].m, nn[i].n, nn[i].k, nn[i].ta, nn[i].tb, tname, "f32");
  /* TF32 rows (dtype "tf32"): a second context on the device in TF32 precision, where its
   * tensor-core probe passes; each row's note names the engine the rule picked. */
  if (!rc) {
    ocal_context_options o;
    ocal_context_options_init(&o);
    o.device = r->device;
    o.gemm_precision = OCAL_GEMM_PRECISION_TF32;
    ocal_context tctx = NULL, saved = r->ctx;
    ocal_gemm_precision p;
    int tc = 0;
    if (ocal_context_create(&o, &tctx) == OCAL_OK &&
        ocal_gemm_get_precision(tctx, &p, &tc, NULL) == OCAL_OK && tc) {
      r->ctx = tctx; /* bench_time finishes r->ctx's queue */
      static const size_t sq[] = {1024, 4096, 8192};
      for (size_t i = 0; i < sizeof sq / sizeof sq[0] && !rc; i++) {
        if (sq[i] > r->gemm_max) continue;
        const char *engine = "?", *reason;
        ocal_gemm_engine_query(tctx, OCAL_F32, OCAL_NO_TRANS, sq[i], sq[i], sq[i], 1, &engine,
                               &reason);
        rc = one_gemm(r, "square", sq[i], sq[i], sq[i], OCAL_NO_TRANS, OCAL_NO_TRANS, engine,
                      "tf32");
      }
      for (size_t i = 0; i < sizeof nn / sizeof nn[0] && !rc && !r->quick; i++) {
        const char *engine = "?", *reason;
        ocal_gemm_engine_query(tctx, OCAL_F32, nn[i].ta, nn[i].m, nn[i].n, nn[i].k, 1, &engine,
                               &reason);
        rc = one_gemm(r, nn[i].label, nn[i].m, nn[i].n, nn[i].k, nn[i].ta, nn[i].tb, engine,
                      "tf32");
      }
      r->ctx = saved;
    }
    ocal_context_release(tctx);
  }
  /* f16 and bf16 rows where the device's tensor-core probe passed for the type (elsewhere
   * their GEMM is the portable conversion path, measured by bench/half). */
  static const ocal_dtype halves[2] = {OCAL_F16, OCAL_BF16};
  for (int h = 0; h < 2 && !rc && !r->quick; h++) {
    const char *engine = NULL, *reason;
    if (ocal_gemm_engine_query(r->ctx, halves[h], OCAL_NO_TRANS, 1024, 1024, 1024, 1, &engine,
                               &reason) != OCAL_OK || !strstr(engine, "tensor cores"))
      continue;
    static const size_t sq[] = {1024, 4096, 8192};
    for (size_t i = 0; i < sizeof sq / sizeof sq[0] && !rc; i++) {
      if (sq[i] > r->gemm_max) continue;
      /* The kernel depends on the size (mma.sync or wgmma): the note names the one that ran. */
      ocal_gemm_engine_query(r->ctx, halves[h], OCAL_NO_TRANS, sq[i], sq[i], sq[i], 1, &engine,
                             &reason);
      rc = one_gemm(r, "square", sq[i], sq[i], sq[i], OCAL_NO_TRANS, OCAL_NO_TRANS, engine,
                    ocal_dtype_name(halves[h]));
    }
  }
  /* f64 squares where the device has doubles (beside PyTorch's float64 matmul); the note
   * names the engine. */
  int fp64 = 0;
  ocal_context_get_fp64(r->ctx, &fp64);
  static const size_t sq64[] = {1024, 4096, 8192};
  for (size_t i = 0; i < sizeof sq64 / sizeof sq64[0] && fp64 && !rc && !r->quick; i++) {
    const char *engine = "?", *reason;
    if (sq64[i] > r->gemm_max) continue;
    ocal_gemm_engine_query(r->ctx, OCAL_F64, OCAL_NO_TRANS, sq64[i], sq64[i], sq64[i], 1,
                           &engine, &reason);
    rc = one_gemm(r, "square", sq64[i], sq64[i], sq64[i], OCAL_NO_TRANS, OCAL_NO_TRANS, engine,
                  "f64");
  }
  if (!rc) rc = blas_vectors(r, (size_t)1 << (r->quick ? 16 : 26));
  return rc;
}

/* ---- FFT ------------------------------------------------------------------------------ */

typedef struct fft_shape {
  int ndim;
  size_t n[2];
  size_t batch;
} fft_shape;

static ocal_status make_context(const bench_run *r, const char *cache_dir, ocal_context *ctx) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = r->device;
  o.cache_dir = cache_dir;
  o.disk_cache = 1;
  return ocal_context_create(&o, ctx);
}

/* A shape's size label in the results: "1048576x128" (length x batch) or "2d:4096x4096". */
static void shape_label(const fft_shape *sh, char *out, size_t size) {
  if (sh->ndim == 2)
    snprintf(out, size, "2d:%zux%zu", sh->n[0], sh->n[1]);
  else
    snprintf(out, size, "%zux%zu", sh->n[0], sh->batch);
}

/* Whether the comma-separated `list` holds `word`. */
static int listed(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

typedef struct fft_arg {
  ocal_fft_plan plan;
  ocal_buffer in, out;
} fft_arg;

static ocal_status run_fft(void *p) {
  fft_arg *f = p;
  return ocal_fft_execute(f->plan, OCAL_FFT_FORWARD, f->in, f->out);
}

/* One shape on one engine (OCAL_FFT_ENGINE_DEFAULT: the plan users get by default): plan
 * creation cold (empty cache directory) and from the disk cache (a second context), then
 * single-precision C2C forward, out of place. *ran, unless ran is NULL: the engine the plan ran
 * ("fourstep" too). */
static int one_fft(bench_run *r, const char *dir, ocal_fft_engine engine, const char *op,
                   const fft_shape *sh, const char **ran) {
  const char *name = "default";
  if (engine != OCAL_FFT_ENGINE_DEFAULT) name = ocal_fft_engine_name(engine);
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.ndim = sh->ndim;
  d.lengths[0] = sh->n[0];
  d.lengths[1] = sh->n[1];
  d.batch = sh->batch;
  d.engine = engine;
  ocal_context ctx = NULL, ctx2 = NULL;
  ocal_fft_plan plan2 = NULL;
  fft_arg f = {NULL, NULL, NULL};
  ocal_status s = make_context(r, dir, &ctx);
  double t0 = bench_now(), cold = -1, warm = -1;
  if (s == OCAL_OK) s = ocal_fft_plan_create(ctx, &d, &f.plan);
  cold = bench_now() - t0;
  ocal_fft_plan_info info = {sizeof info};
  if (s == OCAL_OK) s = ocal_fft_plan_get_info(f.plan, &info);
  if (s == OCAL_OK) name = info.engine_name;
  if (s == OCAL_OK && ran) *ran = name;
  if (s == OCAL_OK) s = make_context(r, dir, &ctx2);
  t0 = bench_now();
  if (s == OCAL_OK) s = ocal_fft_plan_create(ctx2, &d, &plan2);
  warm = bench_now() - t0;
  ocal_fft_plan_release(plan2);
  ocal_context_release(ctx2);
  size_t points = sh->n[0] * (sh->ndim == 2 ? sh->n[1] : 1), total = points * sh->batch;
  float one[2] = {1.0f, 0.5f};
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_C32, 1, &total, &f.in);
  if (s == OCAL_OK) s = ocal_buffer_create(ctx, OCAL_C32, 1, &total, &f.out);
  if (s == OCAL_OK) s = ocal_buffer_fill(f.in, one);
  int rc = 0;
  if (s != OCAL_OK) {
    rc = bench_fail(name, s);
  } else {
    /* bench_time waits on the run's context: time on this one through a borrowed run. */
    bench_run local = *r;
    local.ctx = ctx;
    double t = bench_time(&local, run_fft, &f, r->quick ? 0.01 : 0.2);
    if (t < 0) {
      rc = 1;
    } else {
      char size[48], note[64];
      shape_label(sh, size, sizeof size);
      snprintf(note, sizeof note, "%s; c2c forward; batch %zu", name, sh->batch);
      double flops = 5.0 * (double)points * log2((double)points) * (double)sh->batch;
      bench_add(r, "fft", op, "c64", size, (double)points, "gflops", flops / t * 1e-9,
                "GFLOP/s", -1, t * 1e6, note);
      bench_add(r, "fft", op, "c64", size, (double)points, "plan_cold", cold * 1e3, "ms", -1,
                -1, note);
      bench_add(r, "fft", op, "c64", size, (double)points, "plan_disk", warm * 1e3, "ms", -1,
                -1, note);
    }
  }
  ocal_buffer_release(f.in);
  ocal_buffer_release(f.out);
  ocal_fft_plan_release(f.plan);
  ocal_context_release(ctx);
  return rc;
}

static void remove_dir(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "ocal bench: could not remove %s\n", dir);
}

int bench_suite_fft(bench_run *r) {
  static const fft_shape full[] = {{1, {1024, 0}, 65536},
                                   {1, {4096, 0}, 32768},
                                   {1, {1u << 20, 0}, 128},
                                   {1, {1u << 24, 0}, 8},
                                   {2, {4096, 4096}, 1}};
  static const fft_shape quick[] = {{1, {256, 0}, 64}, {1, {1024, 0}, 16}, {2, {64, 64}, 2}};
  const fft_shape *shapes = r->quick ? quick : full;
  size_t count = r->quick ? sizeof quick / sizeof quick[0] : sizeof full / sizeof full[0];
  ocal_fft_engine def;
  if (ocal_fft_get_default_engine(&def) != OCAL_OK) {
    fprintf(stderr, "ocal bench: fft: no FFT engine in this build; suite skipped\n");
    return 0;
  }
  char dir[] = "/tmp/ocal-bench-fft-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("ocal bench: mkdtemp");
    return 1;
  }
  /* The default plan's figures are "c2c" (what PyTorch's file holds too; the note names the
   * engine it ran); each engine's own, where that is another, carry its name. */
  static const ocal_fft_engine engines[] = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_ENGINE_CLFFT};
  /* OCAL_BENCH_FFT=LIST (to sweep variants quickly): "default" times the default plans only,
   * size labels (1048576x128, 2d:4096x4096) keep only those shapes. */
  const char *only = getenv("OCAL_BENCH_FFT");
  int default_only = only && listed(only, "default"), some = 0;
  for (size_t i = 0; only && i < count; i++) {
    char size[48];
    shape_label(&shapes[i], size, sizeof size);
    some |= listed(only, size);
  }
  int rc = 0;
  /* Every word of the list is "default" or one of the suite's shapes. */
  for (const char *p = only; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    size_t len = strchr(p, ',') ? (size_t)(strchr(p, ',') - p) : strlen(p);
    int known = len == 7 && strncmp(p, "default", 7) == 0;
    for (size_t i = 0; i < count && !known; i++) {
      char size[48];
      shape_label(&shapes[i], size, sizeof size);
      known = strlen(size) == len && strncmp(p, size, len) == 0;
    }
    if (!known) {
      fprintf(stderr, "ocal bench: OCAL_BENCH_FFT: '%.*s' is neither 'default' nor one of the "
                      "suite's shapes (size labels such as 1048576x128, 2d:4096x4096)\n",
              (int)len, p);
      rc = 1;
    }
  }
  for (size_t i = 0; i < count && !rc; i++) {
    const char *ran = "";
    char size[48];
    shape_label(&shapes[i], size, sizeof size);
    if (some && !listed(only, size)) continue;
    rc = one_fft(r, dir, OCAL_FFT_ENGINE_DEFAULT, "c2c", &shapes[i], &ran);
    for (size_t e = 0; e < 2 && !rc && !default_only; e++) {
      int available = 0;
      const char *name = ocal_fft_engine_name(engines[e]);
      ocal_fft_engine_available(engines[e], &available);
      /* Quick runs time the default plan only: every plan is a compile on a CPU. */
      if (!available || r->quick || strcmp(name, ran) == 0) continue;
      char op[32];
      snprintf(op, sizeof op, "c2c_%s", name);
      rc = one_fft(r, dir, engines[e], op, &shapes[i], NULL);
    }
  }
  remove_dir(dir);
  return rc;
}

/* ---- kernel cache --------------------------------------------------------------------- */

/* Times fills of a fresh buffer in a fresh context on cache directory `dir`: kernel retrieval
 * + launch + finish, context creation excluded. */
static int time_fill(const char *device, const char *dir, int requests, double *ms,
                     ocal_cache_stats *stats) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = device;
  o.cache_dir = dir;
  o.disk_cache = 1;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&o, &ctx);
  if (s != OCAL_OK) return bench_fail("context", s);
  size_t n = 1000;
  ocal_buffer b = NULL;
  float v = 1.0f;
  s = ocal_buffer_create(ctx, OCAL_F32, 1, &n, &b);
  for (int i = 0; s == OCAL_OK && i < requests; i++) {
    double t0 = bench_now();
    s = ocal_buffer_fill(b, &v);
    if (s == OCAL_OK) s = ocal_context_finish(ctx);
    ms[i] = (bench_now() - t0) * 1e3;
  }
  if (s == OCAL_OK) s = ocal_context_get_cache_stats(ctx, stats);
  ocal_buffer_release(b);
  ocal_context_release(ctx);
  return s == OCAL_OK ? 0 : bench_fail("fill", s);
}

int bench_cache_child(const char *device, const char *dir) {
  double ms[1];
  ocal_cache_stats st = {sizeof st};
  if (time_fill(device, dir, 1, ms, &st)) return 1;
  printf("%.6f %llu\n", ms[0], (unsigned long long)st.compiles);
  return 0;
}

int bench_suite_cache(bench_run *r) {
  double best[3] = {INFINITY, INFINITY, INFINITY};
  int rounds = r->quick ? 1 : 3;
  for (int round = 0; round < rounds; round++) {
    char dir[] = "/tmp/ocal-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) {
      perror("ocal bench: mkdtemp");
      return 1;
    }
    double first[2];
    ocal_cache_stats st = {sizeof st};
    int rc = time_fill(r->device, dir, 2, first, &st);
    /* The second process is this program again (exec'ed: an OpenCL driver's threads do not
     * survive a bare fork), as a user's next run would be. */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --cache-child '%s'%s%s%s", r->self_cmd, dir,
             r->device ? " --device '" : "", r->device ? r->device : "", r->device ? "'" : "");
    FILE *child = rc ? NULL : popen(cmd, "r");
    double got[2] = {-1, -1};
    int n = child ? fscanf(child, "%lf %lf", &got[0], &got[1]) : 0;
    int status = child ? pclose(child) : -1;
    remove_dir(dir);
    if (rc || n != 2 || status != 0 || got[1] != 0) {
      fprintf(stderr, "ocal bench: cache: the second process %s\n",
              n == 2 && got[1] != 0 ? "compiled instead of loading from the disk cache"
                                    : "failed");
      return 1;
    }
    if (first[0] < best[0]) best[0] = first[0];
    if (got[0] < best[1]) best[1] = got[0];
    if (first[1] < best[2]) best[2] = first[1];
  }
  static const char *metric[] = {"compile", "disk_hit", "memory_hit"};
  static const char *note[] = {"first fill: kernel compiled (empty cache directory)",
                               "first fill in a second process: kernel from the disk cache",
                               "second fill: kernel from the memory cache"};
  for (int i = 0; i < 3; i++)
    bench_add(r, "cache", "fill_kernel", "f32", "1000", 1000, metric[i], best[i], "ms", -1, -1,
              note[i]);
  return 0;
}
