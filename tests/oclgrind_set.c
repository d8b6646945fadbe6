/* ocal tests — every kernel family ocal ships, at tiny sizes, each checked against a host
 * reference in double precision: run under Oclgrind (tests/oclgrind.sh) with --check-api
 * --data-races --uninitialized, so an out-of-bounds access, a race in local memory or a read
 * of memory never written shows up as a report. Oclgrind interprets every work-item, so the
 * sizes are small, yet each planner path is taken: one and several work-groups per row,
 * whole-array and per-axis reductions and scans, ragged edges (sizes that are not powers of
 * two). Prints one line per family; exits 1 at the first wrong result. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

static ocal_context ctx;

/* The library reads its OCAL_* settings when a context is created: after a setenv, the
 * context is created again (no buffer of the old one is alive at the calls below). */
static void reopen(void);
static int failures;

#define CHECK(call)                                                                 \
  do {                                                                              \
    ocal_status s_ = (call);                                                        \
    if (s_ != OCAL_OK) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ocal_last_error()); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static uint64_t rng = 88172645463325252ull;
static double rnd(void) { /* xorshift64: fresh inputs, in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

static ocal_buffer upload(size_t n, int ndim, const size_t *shape, float *host) {
  for (size_t i = 0; i < n; i++) host[i] = (float)rnd();
  ocal_buffer b;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, ndim, shape, host, &b));
  return b;
}

static void compare(const char *what, const float *got, const double *want, size_t n,
                    double tol) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs(got[i] - want[i]) / (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
    if (!(e <= worst)) worst = e;
  }
  printf("  %-34s n=%-6zu max rel error %.2e %s\n", what, n, worst, worst <= tol ? "ok" : "FAIL");
  if (!(worst <= tol)) failures++;
}

static void read_back(ocal_buffer b, size_t n, float *out) { CHECK(ocal_buffer_read(b, 0, n, out, NULL)); }

static void elementwise(void) {
  enum { N = 1003 };
  size_t n = N;
  float a[N], b[N], out[N];
  double want[N];
  ocal_buffer A = upload(n, 1, &n, a), B = upload(n, 1, &n, b), O;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &O));
  CHECK(ocal_unary(OCAL_UNARY_TANH, A, O));
  read_back(O, n, out);
  for (size_t i = 0; i < n; i++) want[i] = tanh(a[i]);
  compare("elementwise tanh", out, want, n, 1e-5);
  CHECK(ocal_binary(OCAL_BINARY_MUL, A, B, O));
  read_back(O, n, out);
  for (size_t i = 0; i < n; i++) want[i] = (double)a[i] * b[i];
  compare("elementwise mul", out, want, n, 1e-6);
  CHECK(ocal_axpy(0.5, A, B));
  read_back(B, n, out);
  for (size_t i = 0; i < n; i++) want[i] = 0.5 * a[i] + b[i];
  compare("axpy", out, want, n, 1e-6);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(O);

  /* Broadcasting: [7x13] + [13] and [7x1] * [1x13]. */
  size_t s2[2] = {7, 13}, s1[1] = {13}, col[2] = {7, 1}, row[2] = {1, 13};
  float x[91], y[13], c[7], r[13], o[91];
  double w[91];
  ocal_buffer X = upload(91, 2, s2, x), Y = upload(13, 1, s1, y), C = upload(7, 2, col, c),
              R = upload(13, 2, row, r), Ob;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 2, s2, &Ob));
  CHECK(ocal_binary(OCAL_BINARY_ADD, X, Y, Ob));
  read_back(Ob, 91, o);
  for (size_t i = 0; i < 91; i++) w[i] = (double)x[i] + y[i % 13];
  compare("broadcast [7x13] + [13]", o, w, 91, 1e-6);
  CHECK(ocal_binary(OCAL_BINARY_MUL, C, R, Ob));
  read_back(Ob, 91, o);
  for (size_t i = 0; i < 91; i++) w[i] = (double)c[i / 13] * r[i % 13];
  compare("broadcast [7x1] * [1x13]", o, w, 91, 1e-6);
  ocal_buffer_release(X), ocal_buffer_release(Y), ocal_buffer_release(C);
  ocal_buffer_release(R), ocal_buffer_release(Ob);

  /* Fill (the core's kernel). */
  float v = 3.25f, f[91];
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 2, s2, &Ob));
  CHECK(ocal_buffer_fill(Ob, &v));
  read_back(Ob, 91, f);
  for (size_t i = 0; i < 91; i++) w[i] = 3.25;
  compare("fill", f, w, 91, 0);
  ocal_buffer_release(Ob);
}

/* Copies by ocal's kernel (OCAL_COPY=kernel; the driver's elsewhere on a CPU device): 16-byte
 * words with a tail, and 4-byte words from a view that is not 16-byte aligned. */
static void copies(void) {
  setenv("OCAL_COPY", "kernel", 1);
  reopen();
  const size_t n = 103, part = 97;
  float x[103], got[103];
  double w[103];
  ocal_buffer X = upload(n, 1, &n, x), Y = NULL, V = NULL, Z = NULL;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &Y));
  CHECK(ocal_buffer_copy(X, Y));
  read_back(Y, n, got);
  for (size_t i = 0; i < n; i++) w[i] = x[i];
  compare("copy (16-byte words)", got, w, n, 0);
  CHECK(ocal_buffer_view(X, 5, 1, &part, &V));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &part, &Z));
  CHECK(ocal_buffer_copy(V, Z));
  read_back(Z, part, got);
  compare("copy of a view (4-byte words)", got, w + 5, part, 0);
  ocal_buffer_release(X), ocal_buffer_release(Y), ocal_buffer_release(V), ocal_buffer_release(Z);
  unsetenv("OCAL_COPY");
  reopen();
}

static void reductions(size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols}, n = rows * cols;
  float *x = malloc(n * sizeof *x), out[4096];
  double want[4096];
  ocal_buffer X = upload(n, 2, shape, x);
  static const struct {
    ocal_reduce_op op;
    const char *name;
  } ops[] = {{OCAL_REDUCE_SUM, "sum"}, {OCAL_REDUCE_MAX, "max"}, {OCAL_REDUCE_MEAN, "mean"},
             {OCAL_REDUCE_VAR, "var"}, {OCAL_REDUCE_ARGMIN, "argmin"}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    for (int axis = -1; axis < 2; axis++) { /* -1: the whole array */
      int ax = axis < 0 ? OCAL_AXIS_ALL : axis;
      size_t outer = axis < 0 ? 1 : axis == 0 ? cols : rows;
      size_t len = axis < 0 ? n : axis == 0 ? rows : cols;
      for (size_t o = 0; o < outer; o++) {
        double acc = ops[k].op == OCAL_REDUCE_MAX ? -INFINITY : 0, sq = 0;
        size_t arg = 0;
        double best = INFINITY;
        for (size_t i = 0; i < len; i++) {
          size_t idx = axis < 0 ? i : axis == 0 ? i * cols + o : o * cols + i;
          double v = x[idx];
          if (ops[k].op == OCAL_REDUCE_MAX) acc = v > acc ? v : acc;
          else acc += v;
          sq += v * v;
          if (v < best) best = v, arg = i;
        }
        double mean = acc / (double)len;
        want[o] = ops[k].op == OCAL_REDUCE_SUM    ? acc
                  : ops[k].op == OCAL_REDUCE_MAX  ? acc
                  : ops[k].op == OCAL_REDUCE_MEAN ? mean
                  : ops[k].op == OCAL_REDUCE_VAR  ? sq / (double)len - mean * mean
                                                  : (double)arg;
      }
      ocal_dtype odt;
      CHECK(ocal_reduce_dtype(ops[k].op, OCAL_F32, &odt));
      ocal_buffer O;
      size_t oshape[1] = {outer};
      CHECK(ocal_buffer_create(ctx, odt, 1, oshape, &O));
      CHECK(ocal_reduce(ops[k].op, X, ax, O));
      if (odt == OCAL_F32) {
        read_back(O, outer, out);
      } else { /* argmin: i64 */
        int64_t idx[4096];
        CHECK(ocal_buffer_read(O, 0, outer, idx, NULL));
        for (size_t i = 0; i < outer; i++) out[i] = (float)idx[i];
      }
      char what[96];
      snprintf(what, sizeof what, "%s [%zux%zu] axis %d", ops[k].name, rows, cols, axis);
      compare(what, out, want, outer, 1e-4);
      ocal_buffer_release(O);
    }
  }
  ocal_buffer_release(X);
  free(x);
}

static void scans(size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols}, n = rows * cols;
  float *x = malloc(n * sizeof *x), *out = malloc(n * sizeof *out);
  double *want = malloc(n * sizeof *want);
  ocal_buffer X = upload(n, 2, shape, x), O;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 2, shape, &O));
  for (int axis = 0; axis < 2; axis++) {
    for (int op = 0; op < 2; op++) {
      CHECK(ocal_scan(op ? OCAL_SCAN_MAX : OCAL_SCAN_SUM, X, axis, 0, O));
      read_back(O, n, out);
      size_t outer = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
      for (size_t o = 0; o < outer; o++) {
        double acc = op ? -INFINITY : 0;
        for (size_t i = 0; i < len; i++) {
          size_t idx = axis == 0 ? i * cols + o : o * cols + i;
          acc = op ? (x[idx] > acc ? x[idx] : acc) : acc + x[idx];
          want[idx] = acc;
        }
      }
      char what[96];
      snprintf(what, sizeof what, "scan %s [%zux%zu] axis %d", op ? "max" : "sum", rows, cols, axis);
      compare(what, out, want, n, 1e-4);
    }
  }
  ocal_buffer_release(X), ocal_buffer_release(O);
  free(x), free(out), free(want);
}

static void softmax_random(void) {
  size_t shape[2] = {5, 37}, n = 185;
  float x[185], out[185];
  double want[185];
  ocal_buffer X = upload(n, 2, shape, x), O;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 2, shape, &O));
  CHECK(ocal_softmax(X, -1, O));
  read_back(O, n, out);
  for (size_t r = 0; r < 5; r++) {
    double m = -INFINITY, s = 0;
    for (size_t i = 0; i < 37; i++) m = x[r * 37 + i] > m ? x[r * 37 + i] : m;
    for (size_t i = 0; i < 37; i++) s += exp(x[r * 37 + i] - m);
    for (size_t i = 0; i < 37; i++) want[r * 37 + i] = exp(x[r * 37 + i] - m) / s;
  }
  compare("softmax [5x37] axis -1", out, want, n, 1e-5);
  /* Random: uniform in [2, 3); the stream is checked by its range and mean here (the suite
   * checks its values against the reference generator). */
  CHECK(ocal_random_uniform(42, 0, 2.0, 3.0, O));
  read_back(O, n, out);
  double mean = 0;
  int in_range = 1;
  for (size_t i = 0; i < n; i++) {
    mean += out[i] / (double)n;
    in_range &= out[i] >= 2.0f && out[i] < 3.0f;
  }
  printf("  %-34s n=%-6zu mean %.3f %s\n", "random uniform [2, 3)", n, mean,
         in_range && fabs(mean - 2.5) < 0.1 ? "ok" : "FAIL");
  if (!in_range || fabs(mean - 2.5) >= 0.1) failures++;
  CHECK(ocal_random_normal(42, 0, 0.0, 1.0, O));
  read_back(O, n, out);
  int finite = 1;
  for (size_t i = 0; i < n; i++) finite &= isfinite(out[i]) && fabsf(out[i]) < 10;
  printf("  %-34s n=%-6zu %s\n", "random normal", n, finite ? "ok" : "FAIL");
  if (!finite) failures++;
  ocal_buffer_release(X), ocal_buffer_release(O);
}

static void gemm(size_t m, size_t n, size_t k, const char *label) {
  size_t as[2] = {m, k}, bs[2] = {k, n}, cs[2] = {m, n};
  float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *c = malloc(m * n * 4);
  double *want = malloc(m * n * 8);
  ocal_buffer A = upload(m * k, 2, as, a), B = upload(k * n, 2, bs, b), C = upload(m * n, 2, cs, c);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t l = 0; l < k; l++) s += (double)a[i * k + l] * b[l * n + j];
      want[i * n + j] = 1.5 * s - 0.5 * c[i * n + j];
    }
  CHECK(ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.5, A, B, -0.5, C));
  read_back(C, m * n, c);
  compare(label, c, want, m * n, 1e-4);
  ocal_buffer_release(A), ocal_buffer_release(B), ocal_buffer_release(C);
  free(a), free(b), free(c), free(want);
}

static void gemv(void) {
  enum { R = 37, C = 45 };
  size_t as[2] = {R, C}, xs = C, ys = R, xts = R, yts = C;
  float a[R * C], x[C], y[R], xt[R], yt[C];
  double want[C];
  ocal_buffer A = upload(R * C, 2, as, a), X = upload(C, 1, &xs, x), Y = upload(R, 1, &ys, y),
              XT = upload(R, 1, &xts, xt), YT = upload(C, 1, &yts, yt);
  CHECK(ocal_gemv(OCAL_NO_TRANS, 2.0, A, X, 0.5, Y));
  for (size_t i = 0; i < R; i++) {
    double s = 0;
    for (size_t j = 0; j < C; j++) s += (double)a[i * C + j] * x[j];
    want[i] = 2 * s + 0.5 * y[i];
  }
  read_back(Y, R, y);
  compare("gemv y = A x", y, want, R, 1e-4);
  CHECK(ocal_gemv(OCAL_TRANS, 1.0, A, XT, 0.0, YT));
  for (size_t j = 0; j < C; j++) {
    double s = 0;
    for (size_t i = 0; i < R; i++) s += (double)a[i * C + j] * xt[i];
    want[j] = s;
  }
  read_back(YT, C, yt);
  compare("gemv y = A^T x", yt, want, C, 1e-4);
  ocal_buffer_release(A), ocal_buffer_release(X), ocal_buffer_release(Y);
  ocal_buffer_release(XT), ocal_buffer_release(YT);
}

/* A transform of n points on the four-step kernels: 1-D (rows 0), else 2-D of rows x n / rows,
 * with OCAL_FFT_FOURSTEP_TUNE set to tune (NULL: unset). */
static void fourstep_fft(size_t n, size_t rows, const char *tune) {
  setenv("OCAL_FFT_FOURSTEP", "1", 1);
  if (tune) setenv("OCAL_FFT_FOURSTEP_TUNE", tune, 1);
  reopen();
  ocal_fft_desc d;
  ocal_fft_desc_init(&d);
  d.lengths[0] = n;
  if (rows) {
    d.ndim = 2;
    d.lengths[0] = rows;
    d.lengths[1] = n / rows;
  }
  ocal_fft_plan plan;
  CHECK(ocal_fft_plan_create(ctx, &d, &plan));
  ocal_fft_plan_info info = {sizeof info};
  CHECK(ocal_fft_plan_get_info(plan, &info));
  float *x = malloc(2 * n * 4), *y = malloc(2 * n * 4);
  double *want = malloc(2 * n * 8);
  ocal_buffer X, Y;
  for (size_t i = 0; i < 2 * n; i++) x[i] = (float)rnd();
  CHECK(ocal_buffer_from_host(ctx, OCAL_C32, 1, &n, x, &X));
  CHECK(ocal_buffer_create(ctx, OCAL_C32, 1, &n, &Y));
  CHECK(ocal_fft_execute(plan, OCAL_FFT_FORWARD, X, Y));
  read_back(Y, n, y); /* n complex elements */
  double *cs = malloc(2 * n * sizeof *cs); /* the twiddles, so the O(n^2) DFT is quick */
  for (size_t j = 0; j < n; j++) {
    cs[2 * j] = cos(-2 * M_PI * (double)j / (double)n);
    cs[2 * j + 1] = sin(-2 * M_PI * (double)j / (double)n);
  }
  /* 2-D: W_rows^(j0 k0) W_cols^(j1 k1) = W_n^(cols j0 k0 + rows j1 k1) */
  size_t r = rows ? rows : 1, c = n / r;
  for (size_t k = 0; k < n; k++) {
    double re = 0, im = 0;
    for (size_t j = 0; j < n; j++) {
      size_t t = rows ? (c * ((j / c) * (k / c)) + r * ((j % c) * (k % c))) % n : (j * k) % n;
      re += x[2 * j] * cs[2 * t] - x[2 * j + 1] * cs[2 * t + 1];
      im += x[2 * j] * cs[2 * t + 1] + x[2 * j + 1] * cs[2 * t];
    }
    want[2 * k] = re / sqrt((double)n), want[2 * k + 1] = im / sqrt((double)n);
  }
  for (size_t i = 0; i < 2 * n; i++) y[i] /= (float)sqrt((double)n);
  char what[64];
  snprintf(what, sizeof what, "fft c2c %zu%s (%s)", n, rows ? " 2-D" : "", info.engine_name);
  compare(what, y, want, 2 * n, 1e-4);
  if (strcmp(info.engine_name, "fourstep") != 0) {
    printf("  the four-step kernels did not take n=%zu (engine %s): FAIL\n", n, info.engine_name);
    failures++;
  }
  ocal_buffer_release(X), ocal_buffer_release(Y);
  ocal_fft_plan_release(plan);
  free(x), free(y), free(want), free(cs);
  unsetenv("OCAL_FFT_FOURSTEP");
  unsetenv("OCAL_FFT_FOURSTEP_TUNE");
  reopen();
}

/* A generated scan of one long row: the single pass (decoupled look-back) in "single-pass". */
static void generated_long_scan(void) {
  size_t n = 33001;
  float *x = malloc(n * sizeof *x), *out = malloc(n * sizeof *out);
  double *want = malloc(n * sizeof *want);
  ocal_buffer X = upload(n, 1, &n, x), S;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &S));
  ocal_gen g;
  CHECK(ocal_gen_scan(ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x", NULL, 0, &g));
  ocal_gen_arg sargs[1] = {OCAL_GEN_BUFFER(X)};
  CHECK(ocal_gen_run(g, n, 1, sargs, S));
  read_back(S, n, out);
  double s = 0;
  for (size_t i = 0; i < n; i++) want[i] = s += x[i];
  compare("generated scan, one long row", out, want, n, 1e-4);
  ocal_gen_release(g);
  ocal_buffer_release(X), ocal_buffer_release(S);
  free(x), free(out), free(want);
}

static void generated(void) {
  enum { N = 777 };
  size_t n = N;
  float x[N], y[N], out[N];
  double want[N];
  ocal_buffer X = upload(n, 1, &n, x), Y = upload(n, 1, &n, y);
  ocal_gen g;
  CHECK(ocal_gen_elementwise(ctx, "float a, const float *x, float *y", "y[i] = a * x[i] + y[i]",
                             NULL, &g));
  float alpha = 3;
  ocal_gen_arg args[3] = {OCAL_GEN_SCALAR(&alpha), OCAL_GEN_BUFFER(X), OCAL_GEN_BUFFER(Y)};
  CHECK(ocal_gen_run(g, OCAL_GEN_AUTO, 3, args, NULL));
  read_back(Y, n, out);
  for (size_t i = 0; i < n; i++) want[i] = 3.0 * x[i] + y[i];
  compare("generated elementwise", out, want, n, 1e-6);
  ocal_gen_release(g);

  ocal_buffer R;
  size_t one = 1;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &R));
  CHECK(ocal_gen_reduction(ctx, OCAL_F32, "0", "a + b", "x[i] * x[i]", "const float *x", NULL,
                           &g));
  ocal_gen_arg rargs[1] = {OCAL_GEN_BUFFER(X)};
  CHECK(ocal_gen_run(g, n, 1, rargs, R));
  float r;
  read_back(R, 1, &r);
  double s = 0;
  for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
  compare("generated reduction", &r, &s, 1, 1e-5);
  ocal_gen_release(g);
  ocal_buffer_release(R);

  ocal_buffer S;
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &S));
  CHECK(ocal_gen_scan(ctx, OCAL_F32, "0", "a + b", "x[i]", "const float *x", NULL, 0, &g));
  ocal_gen_arg sargs[1] = {OCAL_GEN_BUFFER(X)};
  CHECK(ocal_gen_run(g, n, 1, sargs, S));
  read_back(S, n, out);
  s = 0;
  for (size_t i = 0; i < n; i++) want[i] = s += x[i];
  compare("generated scan", out, want, n, 1e-4);
  ocal_gen_release(g);
  ocal_buffer_release(S), ocal_buffer_release(X), ocal_buffer_release(Y);
}

/* f16 and bf16: the conversions (cast), an elementwise kernel's 4-wide and scalar paths, the
 * reduction kernels' half loads (contiguous rows, vector columns, strided columns) and
 * softmax; results decoded to f32 and compared at the formats' precision. */
static void half_types(void) {
  const ocal_dtype types[2] = {OCAL_F16, OCAL_BF16};
  for (int t = 0; t < 2; t++) {
    ocal_dtype d = types[t];
    double tol = d == OCAL_F16 ? 1e-3 : 8e-3;
    enum { R = 9, C = 12, N = R * C };
    size_t shape[2] = {R, C}, n = N, rows = R, cols = C;
    float x[N], got[N];
    double want[N];
    uint16_t bits[N];
    ocal_buffer X = upload(n, 2, shape, x), H, Y;
    CHECK(ocal_buffer_create(ctx, d, 2, shape, &H));
    CHECK(ocal_buffer_create(ctx, d, 2, shape, &Y));
    CHECK(ocal_cast(X, H));
    CHECK(ocal_buffer_read(H, 0, n, bits, NULL));
    CHECK(ocal_half_decode(d, bits, got, n));
    for (size_t i = 0; i < n; i++) x[i] = got[i], want[i] = x[i];
    compare(d == OCAL_F16 ? "f16 cast" : "bf16 cast", got, want, n, tol);
    CHECK(ocal_unary(OCAL_UNARY_EXP, H, Y));
    CHECK(ocal_buffer_read(Y, 0, n, bits, NULL));
    CHECK(ocal_half_decode(d, bits, got, n));
    for (size_t i = 0; i < n; i++) want[i] = exp(x[i]);
    compare(d == OCAL_F16 ? "f16 exp" : "bf16 exp", got, want, n, tol);
    for (int axis = 0; axis < 2; axis++) {
      size_t outs = axis == 0 ? cols : rows, oshape[1] = {outs};
      ocal_buffer O;
      CHECK(ocal_buffer_create(ctx, d, 1, oshape, &O));
      CHECK(ocal_sum(H, axis, O));
      CHECK(ocal_buffer_read(O, 0, outs, bits, NULL));
      CHECK(ocal_half_decode(d, bits, got, outs));
      for (size_t o = 0; o < outs; o++) {
        want[o] = 0;
        for (size_t i = 0; i < (axis == 0 ? rows : cols); i++)
          want[o] += x[axis == 0 ? i * cols + o : o * cols + i];
      }
      char what[64];
      snprintf(what, sizeof what, "%s sum axis %d", ocal_dtype_name(d), axis);
      compare(what, got, want, outs, 4 * tol);
      ocal_buffer_release(O);
    }
    /* A view at an odd offset: scalar loads everywhere. */
    size_t vshape[2] = {R - 1, C - 1};
    ocal_buffer V, O;
    CHECK(ocal_buffer_view(H, 1, 2, vshape, &V));
    size_t oshape[1] = {C - 1};
    CHECK(ocal_buffer_create(ctx, d, 1, oshape, &O));
    CHECK(ocal_amax(V, 0, O));
    CHECK(ocal_buffer_read(O, 0, C - 1, bits, NULL));
    CHECK(ocal_half_decode(d, bits, got, C - 1));
    for (size_t j = 0; j < C - 1; j++) {
      want[j] = -INFINITY;
      for (size_t i = 0; i < R - 1; i++)
        if (x[1 + i * (C - 1) + j] > want[j]) want[j] = x[1 + i * (C - 1) + j];
    }
    compare(d == OCAL_F16 ? "f16 amax (view)" : "bf16 amax (view)", got, want, C - 1, 0);
    CHECK(ocal_softmax(H, 1, Y));
    CHECK(ocal_buffer_read(Y, 0, n, bits, NULL));
    CHECK(ocal_half_decode(d, bits, got, n));
    for (size_t r = 0; r < R; r++) {
      double m = -INFINITY, s = 0;
      for (size_t c = 0; c < C; c++) m = x[r * C + c] > m ? x[r * C + c] : m;
      for (size_t c = 0; c < C; c++) s += exp(x[r * C + c] - m);
      for (size_t c = 0; c < C; c++) want[r * C + c] = exp(x[r * C + c] - m) / s;
    }
    compare(d == OCAL_F16 ? "f16 softmax" : "bf16 softmax", got, want, n, tol);
    ocal_buffer_release(V), ocal_buffer_release(O);
    ocal_buffer_release(X), ocal_buffer_release(H), ocal_buffer_release(Y);
  }
}

/* The merge-path SpMV (tiles of 256 items) on rows of 0 to 12 entries and one of 700, which
 * crosses tiles, so that the partial sums between work-items and tiles are checked too. */
static void merge_spmv(void) {
  enum { ROWS = 301, COLS = 811 };
  setenv("OCAL_SPMV", "merge1", 1);
  reopen();
  int32_t rp[ROWS + 1], *ci = malloc(ROWS * 700 * sizeof *ci);
  float *v = malloc(ROWS * 700 * sizeof *v), x[COLS], y[ROWS];
  double want[ROWS];
  rp[0] = 0;
  for (int r = 0; r < ROWS; r++) {
    int len = r == 150 ? 700 : (int)(rng % 13), c = (int)(rng % COLS);
    rnd();
    rp[r + 1] = rp[r] + len;
    for (int k = 0; k < len; k++) ci[rp[r] + k] = (c + k) % COLS, v[rp[r] + k] = (float)rnd();
  }
  for (int i = 0; i < COLS; i++) x[i] = (float)rnd();
  for (int r = 0; r < ROWS; r++) {
    want[r] = 0;
    for (int k = rp[r]; k < rp[r + 1]; k++) want[r] += (double)v[k] * x[ci[k]];
  }
  ocal_csr a;
  CHECK(ocal_csr_from_host(ctx, OCAL_F32, OCAL_I32, ROWS, COLS, rp, ci, v, &a));
  size_t nx = COLS, ny = ROWS;
  ocal_buffer X, Y;
  CHECK(ocal_buffer_from_host(ctx, OCAL_F32, 1, &nx, x, &X));
  CHECK(ocal_buffer_create(ctx, OCAL_F32, 1, &ny, &Y));
  CHECK(ocal_spmv(OCAL_NO_TRANS, 1.0, a, X, 0.0, Y));
  read_back(Y, ROWS, y);
  compare("spmv merge-path (256-item tiles)", y, want, ROWS, 1e-5);
  ocal_buffer_release(X), ocal_buffer_release(Y);
  ocal_csr_release(a);
  free(ci), free(v);
  unsetenv("OCAL_SPMV");
  reopen();
}

int main(int argc, char **argv) {
  /* "single-pass": the single-pass scan alone (decoupled look-back). Its groups read the
   * words other groups publish with plain volatile loads, which OpenCL 1.2 calls a race and
   * Oclgrind reports as one (docs/scan.md says why the kernel relies on them anyway), so
   * tests/oclgrind.sh runs it without the race check and the whole set with three-pass
   * scans. The one-pass reduction reads other groups' words the same way: it runs here, on
   * one long row (the set's other reductions are too short to take it). */
  const int single = argc > 1 && strcmp(argv[1], "single-pass") == 0;
  setenv("OCAL_SCAN", single ? "single" : "three", 1);
  CHECK(ocal_context_create(NULL, &ctx));
  ocal_device_info d = {sizeof d};
  CHECK(ocal_context_get_device_info(ctx, &d));
  printf("oclgrind_set on %s\n", d.name);
  if (single) {
    scans(1, 33001); /* one long row: 6 tiles of 6,144 floats */
    reductions(16, 2501); /* whole: the one-pass reduction, its last group reads the others' words */
    generated_long_scan();
    CHECK(ocal_context_release(ctx));
    printf("oclgrind_set: %s\n", failures ? "FAILED" : "all results match the host reference");
    return failures ? 1 : 0;
  }
  elementwise();
  copies();
  reductions(3, 1001);  /* long rows: several work-groups per row, a second pass */
  reductions(67, 5);    /* many short rows */
  scans(2, 2500);       /* rows longer than a tile */
  scans(33, 7);
  scans(1, 33001);      /* one long row: three passes here, one in "single-pass" */
  softmax_random();
  setenv("OCAL_GEMM", "ocal", 1);
  reopen();
  gemm(33, 20, 17, "gemm (ocal's kernel) 33x20x17");
  setenv("OCAL_GEMM_OWN_SPLITK", "2", 1);
  reopen();
  gemm(64, 64, 40, "gemm split-K (2 slices) 64x64x40");
  unsetenv("OCAL_GEMM_OWN_SPLITK");
  unsetenv("OCAL_GEMM");
  reopen();
  gemv();
  fourstep_fft(4096, 0, NULL); /* the smallest length the four-step kernels take: 64 x 64 */
  fourstep_fft(4096, 64, "c=8,r=4"); /* 2-D (rows first), eight columns per group */
  generated();
  generated_long_scan();
  half_types();
  merge_spmv();
  CHECK(ocal_context_release(ctx));
  printf("oclgrind_set: %s\n", failures ? "FAILED" : "all results match the host reference");
  return failures ? 1 : 0;
}

static void reopen(void) {
  CHECK(ocal_context_release(ctx));
  CHECK(ocal_context_create(NULL, &ctx));
}
