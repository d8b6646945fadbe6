/* ocal tests — typed device buffers: creation, transfers, fills, copies, views and their
 * error paths. Every check compares device data with host data made from fresh
 * pseudo-random inputs. */
#include "fixture.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------- */

static const ocal_dtype all_dtypes[] = {OCAL_F32, OCAL_F64, OCAL_I32, OCAL_U32, OCAL_I64,
                                        OCAL_U64, OCAL_U8,  OCAL_C32, OCAL_C64};
#define N_DTYPES ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

/* A big odd size: not a multiple of any work-group size. */
#define BIG_N ((size_t)1000003)

static int needs_fp64(ocal_dtype dtype) { return dtype == OCAL_F64 || dtype == OCAL_C64; }

static int context_fp64(ocal_context ctx) {
  int has = -1;
  ck_assert_ocal(ocal_context_get_fp64(ctx, &has));
  ck_assert(has == 0 || has == 1);
  return has;
}

/* Puts a message into ocal_last_error() that no ocal call under test writes, so that an
 * expected failure is seen to leave a message of its own, not a stale one. */
static void stale_error(void) {
  ocal_dtype d;
  ck_assert_int_eq(ocal_dtype_from_name("stale-sentinel", &d), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "stale-sentinel"));
}

/* Asserts that expr fails with status and writes a fresh message that starts with fn
 * ("" when the message comes from deeper inside the library). */
#define EXPECT_FAIL(expr, status, fn)                                                        \
  do {                                                                                       \
    stale_error();                                                                           \
    ck_assert_ocal_fails(expr, status);                                                      \
    ck_assert_msg(strstr(ocal_last_error(), "stale-sentinel") == NULL,                       \
                  "%s left the previous error message in place", #expr);                    \
    ck_assert_msg(strncmp(ocal_last_error(), fn, strlen(fn)) == 0,                          \
                  "%s: the message does not name %s: '%s'", #expr, fn, ocal_last_error());   \
  } while (0)

/* n elements of dtype from seed: random bytes, with the exponent of every float made that of
 * a finite normal number (so no NaN or infinity, but every magnitude and sign). */
static void *random_elements(ocal_dtype dtype, size_t n, uint64_t seed) {
  size_t bytes = n * ocal_dtype_size(dtype);
  unsigned char *p = fixture_malloc(bytes);
  fixture_random_bytes(p, bytes, seed);
  if (dtype == OCAL_F32 || dtype == OCAL_C32) {
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      uint32_t w;
      memcpy(&w, p + i, 4);
      uint32_t e = ((w >> 23) & 0xffu) % 254u + 1u;
      w = (w & ~(0xffu << 23)) | (e << 23);
      memcpy(p + i, &w, 4);
    }
  } else if (dtype == OCAL_F64 || dtype == OCAL_C64) {
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      uint64_t e = ((w >> 52) & 0x7ffu) % 2046u + 1u;
      w = (w & ~(0x7ffull << 52)) | (e << 52);
      memcpy(p + i, &w, 8);
    }
  }
  return p;
}

/* Asserts that n elements of esize bytes are equal, naming the first that differs. */
static void assert_elements_equal(const void *got, const void *want, size_t n, size_t esize,
                                  const char *what) {
  if (n == 0 || memcmp(got, want, n * esize) == 0) return;
  const unsigned char *g = got, *w = want;
  size_t i = 0;
  while (i < n && memcmp(g + i * esize, w + i * esize, esize) == 0) i++;
  ck_abort_msg("%s: element %zu of %zu differs from the host data", what, i, n);
}

/* Asserts that each of n elements equals the esize bytes at value. */
static void assert_all_equal(const void *got, const void *value, size_t n, size_t esize,
                             const char *what) {
  const unsigned char *g = got;
  for (size_t i = 0; i < n; i++)
    if (memcmp(g + i * esize, value, esize) != 0)
      ck_abort_msg("%s: element %zu of %zu is not the expected value", what, i, n);
}

/* Reads a whole buffer (blocking) into fresh host memory. */
static void *read_all(ocal_buffer buf) {
  size_t numel, nbytes;
  ck_assert_ocal(ocal_buffer_get_numel(buf, &numel));
  ck_assert_ocal(ocal_buffer_get_nbytes(buf, &nbytes));
  void *host = fixture_malloc(nbytes);
  ck_assert_ocal(ocal_buffer_read(buf, 0, numel, host, NULL));
  return host;
}

/* Asserts the facts of a buffer. */
static void assert_facts(ocal_buffer buf, ocal_context ctx, ocal_dtype dtype, int ndim,
                         const size_t *shape) {
  ocal_dtype d;
  int nd;
  size_t s[OCAL_MAX_DIMS], numel, nbytes, want = 1;
  ocal_context c;
  ck_assert_ocal(ocal_buffer_get_dtype(buf, &d));
  ck_assert_int_eq(d, dtype);
  ck_assert_ocal(ocal_buffer_get_shape(buf, &nd, s));
  ck_assert_int_eq(nd, ndim);
  for (int i = 0; i < OCAL_MAX_DIMS; i++) {
    if (i < ndim) {
      ck_assert_uint_eq(s[i], shape[i]);
      want *= shape[i];
    } else {
      ck_assert_uint_eq(s[i], 1); /* dimensions past ndim read as 1 */
    }
  }
  ck_assert_ocal(ocal_buffer_get_numel(buf, &numel));
  ck_assert_uint_eq(numel, want);
  ck_assert_ocal(ocal_buffer_get_nbytes(buf, &nbytes));
  ck_assert_uint_eq(nbytes, want * ocal_dtype_size(dtype));
  ck_assert_ocal(ocal_buffer_get_context(buf, &c));
  ck_assert_ptr_eq(c, ctx);
}

/* Creates a buffer from random host data, checks its facts, reads it back and compares. */
static void roundtrip(ocal_context ctx, ocal_dtype dtype, int ndim, const size_t *shape,
                      uint64_t seed) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  size_t esize = ocal_dtype_size(dtype);
  void *host = random_elements(dtype, n, seed);
  char what[96];
  snprintf(what, sizeof what, "%s, %d-D, %zu elements", ocal_dtype_name(dtype), ndim, n);

  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_from_host(ctx, dtype, ndim, shape, host, &buf));
  ck_assert_ptr_nonnull(buf);
  assert_facts(buf, ctx, dtype, ndim, shape);
  void *back = read_all(buf);
  assert_elements_equal(back, host, n, esize, what);
  free(back);
  ck_assert_ocal(ocal_buffer_release(buf));

  /* The same through an uninitialised buffer and an explicit write. */
  void *host2 = random_elements(dtype, n, seed ^ 0x5555);
  ck_assert_ocal(ocal_buffer_create(ctx, dtype, ndim, shape, &buf));
  assert_facts(buf, ctx, dtype, ndim, shape);
  ck_assert_ocal(ocal_buffer_write(buf, 0, n, host2, NULL));
  back = read_all(buf);
  assert_elements_equal(back, host2, n, esize, what);
  free(back);
  ck_assert_ocal(ocal_buffer_release(buf));
  free(host2);
  free(host);
}

/* One element of each type, a value that no all-zero or all-ones pattern matches. */
static const void *fill_value(ocal_dtype dtype) {
  static const float f32 = 3.25f;
  static const double f64 = -2.5e100; /* not a float: catches a kernel built for float */
  static const int32_t i32 = -7;
  static const uint32_t u32 = 0xdeadbeefu;
  static const int64_t i64 = -0x123456789abLL;
  static const uint64_t u64 = 0xfedcba9876543210ull;
  static const uint8_t u8 = 0xab;
  static const float c32[2] = {1.5f, -2.5f};
  static const double c64[2] = {1e200, -3.75};
  switch (dtype) {
    case OCAL_F32: return &f32;
    case OCAL_F64: return &f64;
    case OCAL_I32: return &i32;
    case OCAL_U32: return &u32;
    case OCAL_I64: return &i64;
    case OCAL_U64: return &u64;
    case OCAL_U8: return &u8;
    case OCAL_C32: return c32;
    case OCAL_C64: return c64;
    default: break;
  }
  ck_abort_msg("no fill value for dtype %d", (int)dtype);
  return NULL;
}

/* ---- every element type: round trips, zeros, fills ----------------------------------- */

START_TEST(test_roundtrip_dtype) {
  ocal_dtype dtype = all_dtypes[_i];
  if (needs_fp64(dtype) && !context_fp64(fixture_ctx)) {
    size_t one = 1;
    ocal_buffer buf = NULL;
    EXPECT_FAIL(ocal_buffer_create(fixture_ctx, dtype, 1, &one, &buf), OCAL_UNSUPPORTED,
                "ocal_buffer_create");
    ck_assert_ptr_null(buf);
    return;
  }
  const size_t sizes[] = {1, 3, 1000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    roundtrip(fixture_ctx, dtype, 1, &sizes[k], 1000 + 17 * (uint64_t)_i + k);
  if (dtype == OCAL_F32 || dtype == OCAL_U8 || dtype == OCAL_C64) {
    size_t big = BIG_N;
    roundtrip(fixture_ctx, dtype, 1, &big, 77 + (uint64_t)_i);
  }
}
END_TEST

START_TEST(test_roundtrip_shapes) {
  static const size_t s2[] = {3, 5}, s3[] = {2, 3, 7}, s4[] = {2, 1, 3, 5}, s4b[] = {3, 1, 1, 7},
                      s2big[] = {1001, 3}, s3big[] = {101, 103, 7};
  static const ocal_dtype types[] = {OCAL_F32, OCAL_I64, OCAL_U8, OCAL_C32};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    roundtrip(fixture_ctx, types[t], 2, s2, 10 + t);
    roundtrip(fixture_ctx, types[t], 3, s3, 20 + t);
    roundtrip(fixture_ctx, types[t], 4, s4, 30 + t);
    roundtrip(fixture_ctx, types[t], 4, s4b, 40 + t);
  }
  roundtrip(fixture_ctx, OCAL_U32, 2, s2big, 50);
  roundtrip(fixture_ctx, OCAL_F32, 3, s3big, 51);
  if (context_fp64(fixture_ctx)) {
    roundtrip(fixture_ctx, OCAL_F64, 3, s3, 60);
    roundtrip(fixture_ctx, OCAL_C64, 4, s4, 61);
  }
}
END_TEST

START_TEST(test_zeros_dtype) {
  ocal_dtype dtype = all_dtypes[_i];
  if (needs_fp64(dtype) && !context_fp64(fixture_ctx)) {
    size_t one = 1;
    ocal_buffer buf = NULL;
    EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, dtype, 1, &one, &buf), OCAL_UNSUPPORTED,
                "ocal_buffer_zeros");
    ck_assert_ptr_null(buf);
    return;
  }
  size_t esize = ocal_dtype_size(dtype);
  static const unsigned char zero[16] = {0};
  size_t sizes[] = {1, 3, 100003, BIG_N};
  size_t count = dtype == OCAL_F32 || dtype == OCAL_U8 || dtype == OCAL_C64 ? 4 : 3;
  for (size_t k = 0; k < count; k++) {
    size_t n = sizes[k];
    /* Leave random data in device memory just freed, which a new buffer may well reuse. */
    void *noise = random_elements(dtype, n, 300 + k);
    ocal_buffer buf = NULL;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, dtype, 1, &n, noise, &buf));
    ck_assert_ocal(ocal_buffer_release(buf));
    free(noise);

    buf = NULL;
    ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, dtype, 1, &n, &buf));
    ck_assert_ptr_nonnull(buf);
    assert_facts(buf, fixture_ctx, dtype, 1, &n);
    void *back = read_all(buf);
    assert_all_equal(back, zero, n, esize, ocal_dtype_name(dtype));
    free(back);
    ck_assert_ocal(ocal_buffer_release(buf));
  }
  /* Multi-dimensional zeros. */
  size_t shape[] = {7, 3, 5};
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, dtype, 3, shape, &buf));
  assert_facts(buf, fixture_ctx, dtype, 3, shape);
  void *back = read_all(buf);
  assert_all_equal(back, zero, 105, esize, ocal_dtype_name(dtype));
  free(back);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_fill_dtype) {
  ocal_dtype dtype = all_dtypes[_i];
  if (needs_fp64(dtype) && !context_fp64(fixture_ctx)) return; /* covered by the zeros test */
  size_t esize = ocal_dtype_size(dtype);
  const void *value = fill_value(dtype);
  const size_t sizes[] = {1, 3, 100003};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t n = sizes[k];
    void *host = random_elements(dtype, n, 400 + k);
    ocal_buffer buf = NULL;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, dtype, 1, &n, host, &buf));
    ck_assert_ocal(ocal_buffer_fill(buf, value));
    void *back = read_all(buf);
    assert_all_equal(back, value, n, esize, ocal_dtype_name(dtype));
    /* A second fill with another value overwrites the first. */
    void *other = random_elements(dtype, 1, 500 + k);
    ck_assert_ocal(ocal_buffer_fill(buf, other));
    ck_assert_ocal(ocal_buffer_read(buf, 0, n, back, NULL));
    assert_all_equal(back, other, n, esize, ocal_dtype_name(dtype));
    free(other);
    free(back);
    free(host);
    ck_assert_ocal(ocal_buffer_release(buf));
  }
  /* The value is read before the call returns: changing it afterwards has no effect. */
  size_t n = 1001;
  unsigned char value_copy[16];
  memcpy(value_copy, value, esize);
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, dtype, 1, &n, &buf));
  ck_assert_ocal(ocal_buffer_fill(buf, value_copy));
  memset(value_copy, 0x5a, sizeof value_copy);
  void *back = read_all(buf);
  assert_all_equal(back, value, n, esize, "fill value read at the call");
  free(back);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_fill_big) {
  /* A big odd size for the types the rules name. */
  static const ocal_dtype types[] = {OCAL_F32, OCAL_U8, OCAL_C32};
  size_t n = BIG_N;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    size_t esize = ocal_dtype_size(types[t]);
    void *host = random_elements(types[t], n, 600 + t);
    ocal_buffer buf = NULL;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, types[t], 1, &n, host, &buf));
    ck_assert_ocal(ocal_buffer_fill(buf, fill_value(types[t])));
    ck_assert_ocal(ocal_buffer_read(buf, 0, n, host, NULL));
    assert_all_equal(host, fill_value(types[t]), n, esize, ocal_dtype_name(types[t]));
    free(host);
    ck_assert_ocal(ocal_buffer_release(buf));
  }
}
END_TEST

/* ---- empty buffers ------------------------------------------------------------------- */

static void check_empty(ocal_buffer buf, ocal_buffer other_empty) {
  size_t numel = 99, nbytes = 99, offset_bytes = 99;
  ck_assert_ocal(ocal_buffer_get_numel(buf, &numel));
  ck_assert_uint_eq(numel, 0);
  ck_assert_ocal(ocal_buffer_get_nbytes(buf, &nbytes));
  ck_assert_uint_eq(nbytes, 0);
  cl_mem mem = (cl_mem)&numel; /* anything but NULL */
  ck_assert_ocal(ocal_buffer_get_cl_mem(buf, &mem, &offset_bytes));
  ck_assert_ptr_null(mem);
  ck_assert_ocal(ocal_buffer_get_cl_mem(buf, &mem, NULL)); /* offset_bytes is optional */

  float value = 3.25f;
  ck_assert_ocal(ocal_buffer_fill(buf, &value));
  ck_assert_ocal(ocal_buffer_copy(other_empty, buf));
  ck_assert_ocal(ocal_buffer_copy(buf, other_empty));
  ck_assert_ocal(ocal_buffer_write(buf, 0, 0, NULL, NULL));
  ck_assert_ocal(ocal_buffer_read(buf, 0, 0, NULL, NULL));
  unsigned char dummy[4] = {1, 2, 3, 4};
  ck_assert_ocal(ocal_buffer_write(buf, 0, 0, dummy, NULL));
  ck_assert_ocal(ocal_buffer_read(buf, 0, 0, dummy, NULL));
  ck_assert_int_eq(dummy[0], 1); /* nothing was written to the host */
  ck_assert_int_eq(dummy[3], 4);

  /* Non-blocking transfers of nothing still give events that complete. */
  ocal_event wev = NULL, rev = NULL;
  ck_assert_ocal(ocal_buffer_write(buf, 0, 0, NULL, &wev));
  ck_assert_ptr_nonnull(wev);
  ck_assert_ocal(ocal_buffer_read(buf, 0, 0, NULL, &rev));
  ck_assert_ptr_nonnull(rev);
  cl_event cl = NULL;
  ck_assert_ocal(ocal_event_get_cl_event(rev, &cl));
  ck_assert_ptr_nonnull(cl);
  ck_assert_ocal(ocal_event_wait(rev));
  ck_assert_ocal(ocal_event_wait(wev));
  ck_assert_ocal(ocal_event_release(wev));
  ck_assert_ocal(ocal_event_release(rev));

  /* Past the end, even by nothing, is out of range. */
  ocal_event ev = (ocal_event)&numel;
  EXPECT_FAIL(ocal_buffer_write(buf, 1, 0, NULL, &ev), OCAL_SHAPE_MISMATCH, "ocal_buffer_write");
  ck_assert_ptr_null(ev);
  EXPECT_FAIL(ocal_buffer_read(buf, 0, 1, dummy, NULL), OCAL_SHAPE_MISMATCH, "ocal_buffer_read");
}

START_TEST(test_empty_buffers) {
  const size_t s0[] = {0}, s30[] = {3, 0}, s040[] = {0, 4, 0, 2};
  ocal_buffer a = NULL, b = NULL, c = NULL, z = NULL, h = NULL;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, s0, &a));
  ck_assert_ptr_nonnull(a);
  assert_facts(a, fixture_ctx, OCAL_F32, 1, s0);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 2, s30, &b));
  assert_facts(b, fixture_ctx, OCAL_F32, 2, s30);
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 4, s040, &c));
  assert_facts(c, fixture_ctx, OCAL_F32, 4, s040);
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 2, s30, &z));
  ck_assert_ptr_nonnull(z);
  assert_facts(z, fixture_ctx, OCAL_F32, 2, s30);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, s0, NULL, &h));
  ck_assert_ptr_nonnull(h);

  check_empty(a, b);
  check_empty(b, a);
  check_empty(c, z);
  check_empty(z, h);
  check_empty(h, c);

  /* An empty buffer does not match a non-empty one of the same type. */
  size_t n = 5;
  float *host = random_elements(OCAL_F32, n, 700);
  ocal_buffer full = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, host, &full));
  EXPECT_FAIL(ocal_buffer_copy(a, full), OCAL_SHAPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(full, a), OCAL_SHAPE_MISMATCH, "ocal_buffer_copy");

  /* Empty views: of an empty buffer, and at the very end of a full one. */
  ocal_buffer v = NULL, w = NULL;
  ck_assert_ocal(ocal_buffer_view(a, 0, 2, s30, &v));
  check_empty(v, a);
  ck_assert_ocal(ocal_buffer_view(full, n, 1, s0, &w));
  check_empty(w, v);
  ck_assert_ocal(ocal_buffer_release(w));
  w = NULL;
  ck_assert_ocal(ocal_buffer_view(full, 2, 2, s30, &w)); /* empty, in the middle */
  check_empty(w, v);
  ck_assert_ocal(ocal_buffer_release(w));
  /* Empty operations left the full buffer alone. */
  float *back = read_all(full);
  assert_elements_equal(back, host, n, sizeof(float), "buffer next to empty views");
  free(back);
  free(host);

  ck_assert_ocal(ocal_buffer_release(v));
  ck_assert_ocal(ocal_buffer_release(full));
  ck_assert_ocal(ocal_buffer_release(a));
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_buffer_release(c));
  ck_assert_ocal(ocal_buffer_release(z));
  ck_assert_ocal(ocal_buffer_release(h));
}
END_TEST

/* ---- transfers ----------------------------------------------------------------------- */

START_TEST(test_ranged_transfers) {
  const size_t n = 1001;
  int32_t *host = random_elements(OCAL_I32, n, 800);
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, host, &buf));

  /* Writes at a few offsets, of odd lengths, including the last element alone. */
  const size_t ranges[][2] = {{0, 1}, {1, 3}, {17, 333}, {500, 501}, {1000, 1}, {999, 2}};
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
    size_t off = ranges[r][0], cnt = ranges[r][1];
    int32_t *patch = random_elements(OCAL_I32, cnt, 810 + r);
    ck_assert_ocal(ocal_buffer_write(buf, off, cnt, patch, NULL));
    memcpy(host + off, patch, cnt * sizeof *host);
    free(patch);
    int32_t *back = read_all(buf);
    assert_elements_equal(back, host, n, sizeof *host, "after a ranged write");
    free(back);
  }
  /* Reads of ranges land at the start of the host array and nowhere else. */
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
    size_t off = ranges[r][0], cnt = ranges[r][1];
    int32_t *part = fixture_malloc((cnt + 1) * sizeof *part);
    part[cnt] = 0x7eadbeef;
    ck_assert_ocal(ocal_buffer_read(buf, off, cnt, part, NULL));
    assert_elements_equal(part, host + off, cnt, sizeof *host, "a ranged read");
    ck_assert_int_eq(part[cnt], 0x7eadbeef);
    free(part);
  }
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_nonblocking_transfers) {
  const size_t n = 100003;
  uint64_t *host = random_elements(OCAL_U64, n, 900);
  uint64_t *back = fixture_malloc(n * sizeof *back);
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_U64, 1, &n, &buf));

  /* A non-blocking write, then a non-blocking read: the queue is in order, so waiting on the
   * read alone is enough. */
  ocal_event wev = NULL, rev = NULL;
  ck_assert_ocal(ocal_buffer_write(buf, 0, n, host, &wev));
  ck_assert_ptr_nonnull(wev);
  cl_event cl = NULL;
  ck_assert_ocal(ocal_event_get_cl_event(wev, &cl));
  ck_assert_ptr_nonnull(cl);
  ck_assert_ocal(ocal_buffer_read(buf, 0, n, back, &rev));
  ck_assert_ptr_nonnull(rev);
  ck_assert_ocal(ocal_event_get_cl_event(rev, &cl));
  ck_assert_ptr_nonnull(cl);
  ck_assert_ocal(ocal_event_wait(rev));
  assert_elements_equal(back, host, n, sizeof *host, "non-blocking write then read");
  ck_assert_ocal(ocal_event_wait(wev)); /* waiting twice is fine */
  ck_assert_ocal(ocal_event_release(wev));
  ck_assert_ocal(ocal_event_release(rev));

  /* Ranged non-blocking transfers at offsets. */
  const size_t off = 12345, cnt = 54321;
  uint64_t *patch = random_elements(OCAL_U64, cnt, 901);
  ck_assert_ocal(ocal_buffer_write(buf, off, cnt, patch, &wev));
  ck_assert_ocal(ocal_event_wait(wev));
  ck_assert_ocal(ocal_event_release(wev));
  memcpy(host + off, patch, cnt * sizeof *host);
  memset(back, 0, n * sizeof *back);
  ck_assert_ocal(ocal_buffer_read(buf, off - 5, cnt + 10, back, &rev));
  ck_assert_ocal(ocal_event_wait(rev));
  ck_assert_ocal(ocal_event_release(rev));
  assert_elements_equal(back, host + off - 5, cnt + 10, sizeof *host, "ranged non-blocking read");

  /* Releasing an event before it completes is allowed; the transfer still happens. */
  uint64_t *patch2 = random_elements(OCAL_U64, n, 902);
  ck_assert_ocal(ocal_buffer_write(buf, 0, n, patch2, &wev));
  ck_assert_ocal(ocal_event_release(wev));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));
  ck_assert_ocal(ocal_buffer_read(buf, 0, n, back, NULL));
  assert_elements_equal(back, patch2, n, sizeof *host, "write whose event was released early");

  free(patch2);
  free(patch);
  free(back);
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

/* ---- copies -------------------------------------------------------------------------- */

/* The copy tests run once on each path (loop index 0: ocal's kernel, 1: the driver's
 * clEnqueueCopyBuffer), whichever the device's rule would take. */
static void use_copy_path(int i) {
  ck_assert_int_eq(setenv("OCAL_COPY", i == 0 ? "kernel" : "driver", 1), 0);
  fixture_reopen();
}

START_TEST(test_copy) {
  use_copy_path(_i);
  const size_t n = 10007, s2[] = {1, 10007}, s3[] = {10007, 1, 1};
  float *host = random_elements(OCAL_F32, n, 1000);
  float *noise = random_elements(OCAL_F32, n, 1001);
  ocal_buffer src = NULL, dst = NULL, dst3 = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, host, &src));
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 2, s2, noise, &dst));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 3, s3, &dst3));
  ck_assert_ocal(ocal_buffer_copy(src, dst)); /* shapes differ, element counts match */
  ck_assert_ocal(ocal_buffer_copy(dst, dst3));
  float *back = read_all(dst3);
  assert_elements_equal(back, host, n, sizeof *host, "copy of a copy");
  free(back);
  back = read_all(src);
  assert_elements_equal(back, host, n, sizeof *host, "copy source");
  free(back);

  /* Every type copies bytewise. */
  for (int t = 0; t < N_DTYPES; t++) {
    ocal_dtype d = all_dtypes[t];
    if (needs_fp64(d) && !context_fp64(fixture_ctx)) continue;
    size_t m = 333;
    void *h = random_elements(d, m, 1100 + (uint64_t)t);
    ocal_buffer a = NULL, b = NULL;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &m, h, &a));
    ck_assert_ocal(ocal_buffer_create(fixture_ctx, d, 1, &m, &b));
    ck_assert_ocal(ocal_buffer_copy(a, b));
    void *got = read_all(b);
    assert_elements_equal(got, h, m, ocal_dtype_size(d), ocal_dtype_name(d));
    free(got);
    free(h);
    ck_assert_ocal(ocal_buffer_release(a));
    ck_assert_ocal(ocal_buffer_release(b));
  }

  free(noise);
  free(host);
  ck_assert_ocal(ocal_buffer_release(src));
  ck_assert_ocal(ocal_buffer_release(dst));
  ck_assert_ocal(ocal_buffer_release(dst3));
}
END_TEST

/* Views at every offset and length against a host copy of the whole buffer: ranges of whole
 * 4-byte words (16-byte aligned or not, with a tail of 1-3 words) and ranges that are not,
 * which the kernel path leaves to the driver; the bytes around each range stay as they were. */
START_TEST(test_copy_offsets) {
  use_copy_path(_i);
  const ocal_dtype types[] = {OCAL_U8, OCAL_F16, OCAL_F32, OCAL_C64};
  const size_t ranges[][3] = {/* source offset, destination offset, length */
                              {0, 5000, 4099}, {1, 5003, 4097}, {4, 4400, 37}, {3, 801, 129},
                              {2, 902, 6},     {16, 1040, 64},  {7, 3000, 1},  {0, 9000, 3},
                              {8, 2004, 40}};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const ocal_dtype d = types[t];
    const size_t n = 9100, es = ocal_dtype_size(d);
    unsigned char *host = random_elements(d, n, 1300 + t);
    ocal_buffer base = NULL;
    ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, d, 1, &n, host, &base));
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
      const size_t from = ranges[r][0], to = ranges[r][1], len = ranges[r][2];
      ocal_buffer a = NULL, b = NULL;
      ck_assert_ocal(ocal_buffer_view(base, from, 1, &len, &a));
      ck_assert_ocal(ocal_buffer_view(base, to, 1, &len, &b));
      ck_assert_ocal(ocal_buffer_copy(a, b));
      memmove(host + to * es, host + from * es, len * es);
      ck_assert_ocal(ocal_buffer_release(a));
      ck_assert_ocal(ocal_buffer_release(b));
      unsigned char *back = read_all(base);
      char what[96];
      snprintf(what, sizeof what, "%s copy of %zu from %zu to %zu", ocal_dtype_name(d), len, from,
               to);
      assert_elements_equal(back, host, n, es, what);
      free(back);
    }
    free(host);
    ck_assert_ocal(ocal_buffer_release(base));
  }
}
END_TEST

START_TEST(test_copy_views_of_one_buffer) {
  use_copy_path(_i);
  const size_t n = 1001, s_a[] = {100}, s_b[] = {10, 10}, s_c[] = {4, 25};
  int64_t *host = random_elements(OCAL_I64, n, 1200);
  ocal_buffer base = NULL, a = NULL, b = NULL, c = NULL, whole = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I64, 1, &n, host, &base));
  ck_assert_ocal(ocal_buffer_view(base, 3, 1, s_a, &a));    /* [3, 103) */
  ck_assert_ocal(ocal_buffer_view(base, 601, 2, s_b, &b));  /* [601, 701) */
  ck_assert_ocal(ocal_buffer_view(base, 53, 2, s_c, &c));   /* [53, 153): overlaps a */

  ck_assert_ocal(ocal_buffer_copy(a, b));
  memcpy(host + 601, host + 3, 100 * sizeof *host);
  int64_t *back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "copy between views of one buffer");
  free(back);

  /* Copying the other way, from the later view to the earlier. */
  int64_t *patch = random_elements(OCAL_I64, 100, 1201);
  ck_assert_ocal(ocal_buffer_write(b, 0, 100, patch, NULL));
  memcpy(host + 601, patch, 100 * sizeof *host);
  ck_assert_ocal(ocal_buffer_copy(b, a));
  memcpy(host + 3, patch, 100 * sizeof *host);
  back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "copy from a later view");
  free(back);
  free(patch);

  /* Adjacent ranges do not overlap. */
  ocal_buffer left = NULL, right = NULL;
  const size_t s50[] = {50};
  ck_assert_ocal(ocal_buffer_view(base, 200, 1, s50, &left));   /* [200, 250) */
  ck_assert_ocal(ocal_buffer_view(base, 250, 1, s50, &right));  /* [250, 300) */
  ck_assert_ocal(ocal_buffer_copy(left, right));
  memcpy(host + 250, host + 200, 50 * sizeof *host);
  back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "copy between adjacent views");
  free(back);

  /* Overlapping views are refused, both ways, and leave the data alone. */
  EXPECT_FAIL(ocal_buffer_copy(a, c), OCAL_INVALID_ARGUMENT, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(c, a), OCAL_INVALID_ARGUMENT, "ocal_buffer_copy");
  /* A view and its base overlap too (the base is a view of all of itself). */
  ck_assert_ocal(ocal_buffer_view(base, 0, 1, &n, &whole));
  ocal_buffer tail = NULL;
  const size_t s_t[] = {1000};
  ck_assert_ocal(ocal_buffer_view(base, 1, 1, s_t, &tail));
  ocal_buffer head = NULL;
  ck_assert_ocal(ocal_buffer_view(base, 0, 1, s_t, &head));
  EXPECT_FAIL(ocal_buffer_copy(head, tail), OCAL_INVALID_ARGUMENT, "ocal_buffer_copy");
  /* The very same range is a no-op that succeeds. */
  ck_assert_ocal(ocal_buffer_copy(base, whole));
  ck_assert_ocal(ocal_buffer_copy(a, a));
  back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "after refused and no-op copies");
  free(back);

  free(host);
  ocal_buffer all[] = {a, b, c, whole, left, right, tail, head, base};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ck_assert_ocal(ocal_buffer_release(all[i]));
}
END_TEST

START_TEST(test_copy_errors) {
  const size_t n = 64, m = 65, s2[] = {8, 8};
  ocal_buffer f = NULL, i = NULL, g = NULL, f2 = NULL;
  float *fh = random_elements(OCAL_F32, n, 1300);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, fh, &f));
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I32, 2, s2, &i));   /* same count, type */
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &m, &g));   /* same type, count */
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_U32, 1, &n, &f2));  /* same size in bytes */
  EXPECT_FAIL(ocal_buffer_copy(f, i), OCAL_TYPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(i, f), OCAL_TYPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(f, f2), OCAL_TYPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(f, g), OCAL_SHAPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(g, f), OCAL_SHAPE_MISMATCH, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(f, NULL), OCAL_INVALID_HANDLE, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_copy(NULL, f), OCAL_INVALID_HANDLE, "ocal_buffer_copy");

  /* Buffers of two contexts cannot be copied between. */
  ocal_context other = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &other));
  ocal_buffer o = NULL;
  ck_assert_ocal(ocal_buffer_create(other, OCAL_F32, 1, &n, &o));
  EXPECT_FAIL(ocal_buffer_copy(f, o), OCAL_INVALID_ARGUMENT, "ocal_buffer_copy");
  ck_assert_ocal(ocal_buffer_release(o));
  ck_assert_ocal(ocal_context_release(other));

  /* None of the refused copies touched the destinations. */
  static const unsigned char zero[4] = {0};
  void *back = read_all(i);
  assert_all_equal(back, zero, n, 4, "i32 after a refused copy");
  free(back);
  back = read_all(g);
  assert_all_equal(back, zero, m, 4, "f32 after a refused copy");
  free(back);
  back = read_all(f2);
  assert_all_equal(back, zero, n, 4, "u32 after a refused copy");
  free(back);
  back = read_all(f);
  assert_elements_equal(back, fh, n, 4, "f32 source");
  free(back);
  free(fh);
  ck_assert_ocal(ocal_buffer_release(f));
  ck_assert_ocal(ocal_buffer_release(i));
  ck_assert_ocal(ocal_buffer_release(g));
  ck_assert_ocal(ocal_buffer_release(f2));
}
END_TEST

/* ---- views --------------------------------------------------------------------------- */

START_TEST(test_views) {
  const size_t n = 1001, off = 101, vshape[] = {3, 7, 11}; /* 231 elements: [101, 332) */
  const size_t vn = 231;
  float *host = random_elements(OCAL_F32, n, 1400);
  ocal_buffer base = NULL, view = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, host, &base));
  ck_assert_ocal(ocal_buffer_view(base, off, 3, vshape, &view));
  ck_assert_ptr_nonnull(view);
  assert_facts(view, fixture_ctx, OCAL_F32, 3, vshape);

  /* A view reads the base's elements from its offset on. */
  float *back = read_all(view);
  assert_elements_equal(back, host + off, vn, sizeof *host, "read through a view");
  free(back);

  /* Filling the view changes that range only. */
  const float value = 3.25f;
  ck_assert_ocal(ocal_buffer_fill(view, &value));
  for (size_t i = off; i < off + vn; i++) host[i] = value;
  back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "base after filling a view");
  free(back);

  /* Writes and reads through the view, at an offset within it. */
  float *patch = random_elements(OCAL_F32, 50, 1401);
  ck_assert_ocal(ocal_buffer_write(view, 180, 50, patch, NULL));
  memcpy(host + off + 180, patch, 50 * sizeof *host);
  back = read_all(base);
  assert_elements_equal(back, host, n, sizeof *host, "base after writing through a view");
  float part[51];
  ck_assert_ocal(ocal_buffer_read(view, 181, 50, part, NULL));
  assert_elements_equal(part, host + off + 181, 50, sizeof *host, "ranged read of a view");
  free(back);
  free(patch);

  /* The view cannot be written past its own end, though the base has room. */
  float two[2] = {1, 2};
  EXPECT_FAIL(ocal_buffer_write(view, vn - 1, 2, two, NULL), OCAL_SHAPE_MISMATCH,
              "ocal_buffer_write");
  EXPECT_FAIL(ocal_buffer_read(view, vn, 1, two, NULL), OCAL_SHAPE_MISMATCH, "ocal_buffer_read");

  /* A fill of the base shows through the view. */
  ck_assert_ocal(ocal_buffer_fill(base, &(float){-0.5f}));
  back = read_all(view);
  assert_all_equal(back, &(float){-0.5f}, vn, sizeof *host, "view after filling its base");
  free(back);

  /* The escape hatch: the base's cl_mem and the byte offset of the view. */
  cl_mem base_mem = NULL, view_mem = NULL;
  size_t base_off = 99, view_off = 0;
  ck_assert_ocal(ocal_buffer_get_cl_mem(base, &base_mem, &base_off));
  ck_assert_ptr_nonnull(base_mem);
  ck_assert_uint_eq(base_off, 0);
  ck_assert_ocal(ocal_buffer_get_cl_mem(view, &view_mem, &view_off));
  ck_assert_ptr_eq(view_mem, base_mem);
  ck_assert_uint_eq(view_off, off * sizeof(float));

  free(host);
  ck_assert_ocal(ocal_buffer_release(view));
  ck_assert_ocal(ocal_buffer_release(base));
}
END_TEST

START_TEST(test_view_of_view) {
  const size_t n = 999, s1[] = {500}, s2[] = {2, 5}, s3[] = {3};
  uint8_t *host = random_elements(OCAL_U8, n, 1500);
  ocal_buffer base = NULL, v1 = NULL, v2 = NULL, v3 = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U8, 1, &n, host, &base));
  ck_assert_ocal(ocal_buffer_view(base, 300, 1, s1, &v1));  /* [300, 800) */
  ck_assert_ocal(ocal_buffer_view(v1, 111, 2, s2, &v2));    /* [411, 421) */
  ck_assert_ocal(ocal_buffer_view(v2, 7, 1, s3, &v3));      /* [418, 421) */
  assert_facts(v2, fixture_ctx, OCAL_U8, 2, s2);

  uint8_t got[10];
  ck_assert_ocal(ocal_buffer_read(v2, 0, 10, got, NULL));
  assert_elements_equal(got, host + 411, 10, 1, "view of a view");
  ck_assert_ocal(ocal_buffer_read(v3, 0, 3, got, NULL));
  assert_elements_equal(got, host + 418, 3, 1, "view of a view of a view");

  size_t offset_bytes = 0;
  cl_mem mem = NULL, base_mem = NULL;
  ck_assert_ocal(ocal_buffer_get_cl_mem(base, &base_mem, NULL));
  ck_assert_ocal(ocal_buffer_get_cl_mem(v2, &mem, &offset_bytes));
  ck_assert_ptr_eq(mem, base_mem);
  ck_assert_uint_eq(offset_bytes, 411);
  ck_assert_ocal(ocal_buffer_get_cl_mem(v3, &mem, &offset_bytes));
  ck_assert_uint_eq(offset_bytes, 418);

  /* A fill of the inner view changes exactly its range of the base. */
  ck_assert_ocal(ocal_buffer_fill(v2, fill_value(OCAL_U8)));
  memset(host + 411, 0xab, 10);
  uint8_t *back = read_all(base);
  assert_elements_equal(back, host, n, 1, "base after filling a view of a view");
  free(back);

  /* Views of views are bounded by the view they are taken of, not by the base. */
  const size_t s11[] = {11};
  ocal_buffer bad = (ocal_buffer)&offset_bytes;
  EXPECT_FAIL(ocal_buffer_view(v2, 0, 1, s11, &bad), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");
  ck_assert_ptr_null(bad);
  EXPECT_FAIL(ocal_buffer_view(v1, 498, 1, s3, &bad), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");

  free(host);
  ck_assert_ocal(ocal_buffer_release(v1)); /* inner views keep working without it */
  ck_assert_ocal(ocal_buffer_read(v3, 0, 3, got, NULL));
  ck_assert_int_eq(got[0], 0xab);
  ck_assert_ocal(ocal_buffer_release(v3));
  ck_assert_ocal(ocal_buffer_release(v2));
  ck_assert_ocal(ocal_buffer_release(base));
}
END_TEST

START_TEST(test_view_errors) {
  const size_t n = 100, s10[] = {10}, s101[] = {101}, s0[] = {0}, s_2x50[] = {2, 50};
  ocal_buffer base = NULL, v = NULL;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_C32, 1, &n, &base));
  EXPECT_FAIL(ocal_buffer_view(base, 91, 1, s10, &v), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");
  ck_assert_ptr_null(v);
  EXPECT_FAIL(ocal_buffer_view(base, 0, 1, s101, &v), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 101, 1, s0, &v), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 1, 2, s_2x50, &v), OCAL_SHAPE_MISMATCH, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, SIZE_MAX, 1, s10, &v), OCAL_SHAPE_MISMATCH,
              "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, SIZE_MAX - 5, 1, s10, &v), OCAL_SHAPE_MISMATCH,
              "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 0, 0, s10, &v), OCAL_INVALID_ARGUMENT, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 0, 5, s10, &v), OCAL_INVALID_ARGUMENT, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 0, 1, NULL, &v), OCAL_INVALID_ARGUMENT, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(base, 0, 1, s10, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_view");
  const size_t huge[] = {SIZE_MAX / 2, 3};
  EXPECT_FAIL(ocal_buffer_view(base, 0, 2, huge, &v), OCAL_OVERFLOW, "ocal_buffer_view");
  EXPECT_FAIL(ocal_buffer_view(NULL, 0, 1, s10, &v), OCAL_INVALID_HANDLE, "ocal_buffer_view");
  ck_assert_ptr_null(v);
  /* The exact end fits. */
  ck_assert_ocal(ocal_buffer_view(base, 90, 1, s10, &v));
  ck_assert_ocal(ocal_buffer_release(v));
  ck_assert_ocal(ocal_buffer_release(base));
}
END_TEST

START_TEST(test_view_outlives_base) {
  const size_t n = 4099, s[] = {7, 11, 13}; /* 1001 elements */
  const size_t off = 3001, vn = 1001;
  uint32_t *host = random_elements(OCAL_U32, n, 1600);
  ocal_buffer base = NULL, view = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_U32, 1, &n, host, &base));
  ck_assert_ocal(ocal_buffer_view(base, off, 3, s, &view));
  ck_assert_ocal(ocal_buffer_release(base));
  /* The released handle is dead, though its memory lives on for the view: a second release
   * is refused (it would free the view's memory), and so is any other use. */
  ck_assert_ocal_fails(ocal_buffer_release(base), OCAL_INVALID_HANDLE);
  ck_assert_msg(strstr(ocal_last_error(), "released already") != NULL, "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_buffer_fill(base, &(uint32_t){1u}), OCAL_INVALID_HANDLE);

  /* Allocate and fill other memory that could take the base's place if it were freed. */
  ocal_buffer other = NULL;
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_U32, 1, &n, &other));
  ck_assert_ocal(ocal_buffer_fill(other, fill_value(OCAL_U32)));
  ck_assert_ocal(ocal_context_finish(fixture_ctx));

  uint32_t *back = read_all(view);
  assert_elements_equal(back, host + off, vn, sizeof *host, "view after its base's release");
  /* It is still a full buffer: fill and write it. */
  ck_assert_ocal(ocal_buffer_fill(view, &(uint32_t){77u}));
  ck_assert_ocal(ocal_buffer_write(view, 1000, 1, &(uint32_t){5u}, NULL));
  ck_assert_ocal(ocal_buffer_read(view, 0, vn, back, NULL));
  for (size_t i = 0; i < vn; i++) ck_assert_uint_eq(back[i], i == 1000 ? 5u : 77u);
  /* A view taken from the view still composes offsets with the released base's memory. */
  ocal_buffer inner = NULL;
  const size_t s1[] = {1};
  ck_assert_ocal(ocal_buffer_view(view, 1000, 1, s1, &inner));
  size_t ob = 0;
  cl_mem mem = NULL;
  ck_assert_ocal(ocal_buffer_get_cl_mem(inner, &mem, &ob));
  ck_assert_ptr_nonnull(mem);
  ck_assert_uint_eq(ob, (off + 1000) * sizeof(uint32_t));
  uint32_t one = 0;
  ck_assert_ocal(ocal_buffer_read(inner, 0, 1, &one, NULL));
  ck_assert_uint_eq(one, 5u);
  free(back);
  free(host);
  ck_assert_ocal(ocal_buffer_release(view));
  ck_assert_ocal(ocal_buffer_read(inner, 0, 1, &one, NULL));
  ck_assert_uint_eq(one, 5u);
  ck_assert_ocal(ocal_buffer_release(inner));

  /* The other buffer was never touched by the view's commands. */
  back = read_all(other);
  assert_all_equal(back, fill_value(OCAL_U32), n, sizeof *back, "unrelated buffer");
  free(back);
  ck_assert_ocal(ocal_buffer_release(other));
}
END_TEST

/* ---- error paths --------------------------------------------------------------------- */

START_TEST(test_create_errors) {
  const size_t s1[] = {7}, s5[] = {1, 2, 3, 4, 5};
  float host[7] = {1, 2, 3, 4, 5, 6, 7};
  ocal_buffer buf = (ocal_buffer)host; /* anything but NULL: failures must clear it */

  EXPECT_FAIL(ocal_buffer_create(NULL, OCAL_F32, 1, s1, &buf), OCAL_INVALID_HANDLE,
              "ocal_buffer_create");
  ck_assert_ptr_null(buf);
  buf = (ocal_buffer)host;
  EXPECT_FAIL(ocal_buffer_zeros(NULL, OCAL_F32, 1, s1, &buf), OCAL_INVALID_HANDLE,
              "ocal_buffer_zeros");
  ck_assert_ptr_null(buf);
  buf = (ocal_buffer)host;
  EXPECT_FAIL(ocal_buffer_from_host(NULL, OCAL_F32, 1, s1, host, &buf), OCAL_INVALID_HANDLE,
              "ocal_buffer_from_host");
  ck_assert_ptr_null(buf);

  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, s1, NULL), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_create");
  EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, s1, NULL), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_zeros");
  EXPECT_FAIL(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, s1, host, NULL),
              OCAL_INVALID_ARGUMENT, "ocal_buffer_from_host");

  const int bad_ndims[] = {0, OCAL_MAX_DIMS + 1, -1};
  for (size_t k = 0; k < sizeof bad_ndims / sizeof bad_ndims[0]; k++) {
    buf = (ocal_buffer)host;
    EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, bad_ndims[k], s5, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_create");
    ck_assert_ptr_null(buf);
    EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, OCAL_U8, bad_ndims[k], s5, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_zeros");
    EXPECT_FAIL(ocal_buffer_from_host(fixture_ctx, OCAL_I32, bad_ndims[k], s5, host, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_from_host");
    ck_assert_ptr_null(buf);
  }
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, NULL, &buf), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_create");
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, 3, NULL, &buf), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_create");

  /* Element counts that overflow size_t. */
  const size_t ovf_count2[] = {SIZE_MAX, 2}, ovf_count4[] = {65536, 65536, 65536, 65536},
               ovf_count3[] = {(size_t)1 << 32, (size_t)1 << 31, 3};
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_U8, 2, ovf_count2, &buf), OCAL_OVERFLOW,
              "ocal_buffer_create");
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_U8, 4, ovf_count4, &buf), OCAL_OVERFLOW,
              "ocal_buffer_create");
  EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, OCAL_U8, 3, ovf_count3, &buf), OCAL_OVERFLOW,
              "ocal_buffer_zeros");
  /* Element counts that fit, but whose byte sizes do not. */
  const size_t ovf_bytes_f32[] = {SIZE_MAX / 4 + 1}, ovf_bytes_c32[] = {2, SIZE_MAX / 16 + 1},
               fits_u8[] = {SIZE_MAX / 2, 2};
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, ovf_bytes_f32, &buf), OCAL_OVERFLOW,
              "ocal_buffer_create");
  EXPECT_FAIL(ocal_buffer_from_host(fixture_ctx, OCAL_C32, 2, ovf_bytes_c32, host, &buf),
              OCAL_OVERFLOW, "ocal_buffer_from_host");
  ck_assert_ptr_null(buf);
  /* SIZE_MAX - 1 bytes of u8 do not overflow: they are merely too large for the device. */
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_U8, 2, fits_u8, &buf),
              OCAL_OUT_OF_DEVICE_MEMORY, "");

  /* Element types that do not exist. */
  const int bad_dtypes[] = {OCAL_DTYPE_COUNT, 1000, -1};
  for (size_t k = 0; k < sizeof bad_dtypes / sizeof bad_dtypes[0]; k++) {
    buf = (ocal_buffer)host;
    EXPECT_FAIL(ocal_buffer_create(fixture_ctx, (ocal_dtype)bad_dtypes[k], 1, s1, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_create");
    ck_assert_ptr_null(buf);
    EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, (ocal_dtype)bad_dtypes[k], 1, s1, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_zeros");
    EXPECT_FAIL(ocal_buffer_from_host(fixture_ctx, (ocal_dtype)bad_dtypes[k], 1, s1, host, &buf),
                OCAL_INVALID_ARGUMENT, "ocal_buffer_from_host");
  }

  /* from_host needs host data unless the buffer is empty; nothing is leaked on failure. */
  buf = (ocal_buffer)host;
  EXPECT_FAIL(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, s1, NULL, &buf),
              OCAL_INVALID_ARGUMENT, "ocal_buffer_from_host");
  ck_assert_ptr_null(buf);

  /* After all that the context works. */
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, s1, host, &buf));
  float back[7];
  ck_assert_ocal(ocal_buffer_read(buf, 0, 7, back, NULL));
  assert_elements_equal(back, host, 7, sizeof(float), "after failed creations");
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_transfer_errors) {
  const size_t n = 10;
  int32_t *host = random_elements(OCAL_I32, n, 1700);
  int32_t dst[16];
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_I32, 1, &n, host, &buf));
  ocal_event ev = (ocal_event)dst;

  const size_t bad[][2] = {{5, 6}, {0, 11}, {10, 1}, {11, 0}, {SIZE_MAX, 2}, {2, SIZE_MAX},
                           {SIZE_MAX, SIZE_MAX}, {SIZE_MAX, 0}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    ev = (ocal_event)dst;
    EXPECT_FAIL(ocal_buffer_write(buf, bad[k][0], bad[k][1], dst, &ev), OCAL_SHAPE_MISMATCH,
                "ocal_buffer_write");
    ck_assert_ptr_null(ev);
    ev = (ocal_event)dst;
    EXPECT_FAIL(ocal_buffer_read(buf, bad[k][0], bad[k][1], dst, &ev), OCAL_SHAPE_MISMATCH,
                "ocal_buffer_read");
    ck_assert_ptr_null(ev);
    EXPECT_FAIL(ocal_buffer_write(buf, bad[k][0], bad[k][1], dst, NULL), OCAL_SHAPE_MISMATCH,
                "ocal_buffer_write");
    EXPECT_FAIL(ocal_buffer_read(buf, bad[k][0], bad[k][1], dst, NULL), OCAL_SHAPE_MISMATCH,
                "ocal_buffer_read");
  }
  /* NULL host memory for a non-empty transfer. */
  EXPECT_FAIL(ocal_buffer_write(buf, 0, 1, NULL, NULL), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_write");
  EXPECT_FAIL(ocal_buffer_read(buf, 3, 7, NULL, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_read");
  ev = (ocal_event)dst;
  EXPECT_FAIL(ocal_buffer_read(buf, 3, 7, NULL, &ev), OCAL_INVALID_ARGUMENT, "ocal_buffer_read");
  ck_assert_ptr_null(ev);
  /* Transfers of nothing, anywhere in range, with or without memory. */
  ck_assert_ocal(ocal_buffer_write(buf, 10, 0, NULL, NULL));
  ck_assert_ocal(ocal_buffer_read(buf, 4, 0, NULL, NULL));

  /* The buffer kept its data through all the refused transfers. */
  memset(dst, 0, sizeof dst);
  ck_assert_ocal(ocal_buffer_read(buf, 0, n, dst, NULL));
  assert_elements_equal(dst, host, n, sizeof *host, "after refused transfers");
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_null_buffer_errors) {
  unsigned char mem[64] = {1};
  ocal_event ev = (ocal_event)mem;
  ocal_buffer out = (ocal_buffer)mem;
  const size_t s1[] = {1};
  ocal_dtype dtype;
  int ndim;
  size_t shape[OCAL_MAX_DIMS], numel, nbytes, offset;
  ocal_context ctx;
  cl_mem clmem;

  ck_assert_int_eq(ocal_buffer_release(NULL), OCAL_OK);
  ck_assert_int_eq(ocal_event_release(NULL), OCAL_OK);
  EXPECT_FAIL(ocal_buffer_view(NULL, 0, 1, s1, &out), OCAL_INVALID_HANDLE, "ocal_buffer_view");
  ck_assert_ptr_null(out);
  EXPECT_FAIL(ocal_buffer_write(NULL, 0, 1, mem, &ev), OCAL_INVALID_HANDLE, "ocal_buffer_write");
  ck_assert_ptr_null(ev);
  ev = (ocal_event)mem;
  EXPECT_FAIL(ocal_buffer_read(NULL, 0, 1, mem, &ev), OCAL_INVALID_HANDLE, "ocal_buffer_read");
  ck_assert_ptr_null(ev);
  EXPECT_FAIL(ocal_buffer_write(NULL, 0, 0, NULL, NULL), OCAL_INVALID_HANDLE, "ocal_buffer_write");
  EXPECT_FAIL(ocal_buffer_read(NULL, 0, 0, NULL, NULL), OCAL_INVALID_HANDLE, "ocal_buffer_read");
  EXPECT_FAIL(ocal_buffer_copy(NULL, NULL), OCAL_INVALID_HANDLE, "ocal_buffer_copy");
  EXPECT_FAIL(ocal_buffer_fill(NULL, mem), OCAL_INVALID_HANDLE, "ocal_buffer_fill");
  EXPECT_FAIL(ocal_buffer_get_dtype(NULL, &dtype), OCAL_INVALID_HANDLE, "ocal_buffer_get_dtype");
  EXPECT_FAIL(ocal_buffer_get_shape(NULL, &ndim, shape), OCAL_INVALID_HANDLE, "ocal_buffer_get_shape");
  EXPECT_FAIL(ocal_buffer_get_numel(NULL, &numel), OCAL_INVALID_HANDLE, "ocal_buffer_get_numel");
  EXPECT_FAIL(ocal_buffer_get_nbytes(NULL, &nbytes), OCAL_INVALID_HANDLE, "ocal_buffer_get_nbytes");
  EXPECT_FAIL(ocal_buffer_get_context(NULL, &ctx), OCAL_INVALID_HANDLE, "ocal_buffer_get_context");
  EXPECT_FAIL(ocal_buffer_get_cl_mem(NULL, &clmem, &offset), OCAL_INVALID_HANDLE,
              "ocal_buffer_get_cl_mem");
  EXPECT_FAIL(ocal_event_wait(NULL), OCAL_INVALID_HANDLE, "ocal_event_wait");
  cl_event clev;
  EXPECT_FAIL(ocal_event_get_cl_event(NULL, &clev), OCAL_INVALID_HANDLE, "ocal_event_get_cl_event");

  /* NULL out-pointers of a valid buffer and event. */
  ocal_buffer buf = NULL;
  ck_assert_ocal(ocal_buffer_zeros(fixture_ctx, OCAL_I64, 1, s1, &buf));
  EXPECT_FAIL(ocal_buffer_get_dtype(buf, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_dtype");
  EXPECT_FAIL(ocal_buffer_get_shape(buf, NULL, shape), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_shape");
  EXPECT_FAIL(ocal_buffer_get_shape(buf, &ndim, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_shape");
  EXPECT_FAIL(ocal_buffer_get_numel(buf, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_numel");
  EXPECT_FAIL(ocal_buffer_get_nbytes(buf, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_nbytes");
  EXPECT_FAIL(ocal_buffer_get_context(buf, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_get_context");
  EXPECT_FAIL(ocal_buffer_get_cl_mem(buf, NULL, &offset), OCAL_INVALID_ARGUMENT,
              "ocal_buffer_get_cl_mem");
  ev = NULL;
  ck_assert_ocal(ocal_buffer_read(buf, 0, 1, mem, &ev));
  EXPECT_FAIL(ocal_event_get_cl_event(ev, NULL), OCAL_INVALID_ARGUMENT, "ocal_event_get_cl_event");
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  int64_t zero = 0;
  ck_assert_int_eq(memcmp(mem, &zero, sizeof zero), 0); /* the read did land */
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_fill_errors) {
  const size_t n = 33, s0[] = {0};
  ocal_buffer buf = NULL, empty = NULL;
  float *host = random_elements(OCAL_F32, n, 1800);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, host, &buf));
  ck_assert_ocal(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, s0, &empty));
  EXPECT_FAIL(ocal_buffer_fill(buf, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_fill");
  EXPECT_FAIL(ocal_buffer_fill(empty, NULL), OCAL_INVALID_ARGUMENT, "ocal_buffer_fill");
  float *back = read_all(buf);
  assert_elements_equal(back, host, n, sizeof *host, "after a refused fill");
  free(back);
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf));
  ck_assert_ocal(ocal_buffer_release(empty));
}
END_TEST

/* ---- contexts: fp64 off, device memory exhausted, released first --------------------- */

START_TEST(test_fp64_disabled) {
  ocal_context_options opt;
  ck_assert_ocal(ocal_context_options_init(&opt));
  opt.fp64 = 0;
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(&opt, &ctx));
  ck_assert_int_eq(context_fp64(ctx), 0);
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(ctx, &info));
  ck_assert_msg(info.name[0] != '\0', "the device has no name");

  const size_t s[] = {3, 5};
  double host[30] = {1.5};
  const ocal_dtype doubles[] = {OCAL_F64, OCAL_C64};
  for (size_t k = 0; k < 2; k++) {
    ocal_buffer buf = (ocal_buffer)host;
    EXPECT_FAIL(ocal_buffer_create(ctx, doubles[k], 2, s, &buf), OCAL_UNSUPPORTED,
                "ocal_buffer_create");
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(ocal_last_error(), info.name) != NULL,
                  "the message does not name device '%s': %s", info.name, ocal_last_error());
    ck_assert_msg(strstr(ocal_last_error(), ocal_dtype_name(doubles[k])) != NULL,
                  "the message does not name %s: %s", ocal_dtype_name(doubles[k]),
                  ocal_last_error());
    EXPECT_FAIL(ocal_buffer_zeros(ctx, doubles[k], 2, s, &buf), OCAL_UNSUPPORTED,
                "ocal_buffer_zeros");
    ck_assert_ptr_null(buf);
    EXPECT_FAIL(ocal_buffer_from_host(ctx, doubles[k], 2, s, host, &buf), OCAL_UNSUPPORTED,
                "ocal_buffer_from_host");
    ck_assert_ptr_null(buf);
  }

  /* Single precision works in that context. */
  float *fh = random_elements(OCAL_F32, 15, 1900);
  ocal_buffer f = NULL;
  ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_F32, 2, s, fh, &f));
  float *back = read_all(f);
  assert_elements_equal(back, fh, 15, sizeof(float), "f32 in a context without fp64");
  ck_assert_ocal(ocal_buffer_fill(f, fill_value(OCAL_F32)));
  ck_assert_ocal(ocal_buffer_read(f, 0, 15, back, NULL));
  assert_all_equal(back, fill_value(OCAL_F32), 15, sizeof(float), "f32 fill without fp64");
  free(back);
  free(fh);
  ck_assert_ocal(ocal_buffer_release(f));
  ocal_buffer c = NULL;
  ck_assert_ocal(ocal_buffer_zeros(ctx, OCAL_C32, 2, s, &c));
  ck_assert_ocal(ocal_buffer_release(c));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_out_of_device_memory) {
  ocal_device_info info = {sizeof info};
  ck_assert_ocal(ocal_context_get_device_info(fixture_ctx, &info));
  ck_assert_uint_gt(info.global_mem_bytes, 0);
  ck_assert_uint_gt(info.max_alloc_bytes, 0);
  ck_assert_uint_le(info.max_alloc_bytes, info.global_mem_bytes);

  /* More f32 elements than fit in all of global memory. */
  ck_assert_uint_lt(info.global_mem_bytes / 4, (uint64_t)(SIZE_MAX / 4));
  size_t too_many = (size_t)(info.global_mem_bytes / 4) + 1;
  ocal_buffer buf = (ocal_buffer)&info;
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_F32, 1, &too_many, &buf),
              OCAL_OUT_OF_DEVICE_MEMORY, "");
  ck_assert_ptr_null(buf);
  ck_assert_msg(strstr(ocal_last_error(), info.name) != NULL,
                "the message does not name the device: %s", ocal_last_error());
  buf = (ocal_buffer)&info;
  EXPECT_FAIL(ocal_buffer_zeros(fixture_ctx, OCAL_F32, 1, &too_many, &buf),
              OCAL_OUT_OF_DEVICE_MEMORY, "");
  ck_assert_ptr_null(buf);
  /* The same number of bytes as a 2-D shape of u8. */
  const size_t s2[] = {too_many, 4};
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_U8, 2, s2, &buf), OCAL_OUT_OF_DEVICE_MEMORY,
              "");
  /* One byte more than the largest single allocation. */
  size_t over_one = (size_t)info.max_alloc_bytes + 1;
  EXPECT_FAIL(ocal_buffer_create(fixture_ctx, OCAL_U8, 1, &over_one, &buf),
              OCAL_OUT_OF_DEVICE_MEMORY, "");
  ck_assert_ptr_null(buf);

  /* The context still works. */
  const size_t n = 100003;
  float *host = random_elements(OCAL_F32, n, 2000);
  ck_assert_ocal(ocal_buffer_from_host(fixture_ctx, OCAL_F32, 1, &n, host, &buf));
  float *back = read_all(buf);
  assert_elements_equal(back, host, n, sizeof *host, "after a failed allocation");
  ck_assert_ocal(ocal_buffer_fill(buf, fill_value(OCAL_F32)));
  ck_assert_ocal(ocal_buffer_read(buf, 0, n, back, NULL));
  assert_all_equal(back, fill_value(OCAL_F32), n, sizeof *host, "fill after a failed allocation");
  free(back);
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf));
}
END_TEST

START_TEST(test_context_released_first) {
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  const size_t n = 2049;
  int32_t *host = random_elements(OCAL_I32, n, 2100);
  ocal_buffer buf = NULL, view = NULL;
  ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_I32, 1, &n, host, &buf));
  ck_assert_ocal(ocal_context_release(ctx)); /* the buffer keeps it alive */

  ocal_context owner = NULL;
  ck_assert_ocal(ocal_buffer_get_context(buf, &owner));
  ck_assert_ptr_eq(owner, ctx);
  int32_t *back = read_all(buf);
  assert_elements_equal(back, host, n, sizeof *host, "after the context's release");
  ck_assert_ocal(ocal_buffer_fill(buf, fill_value(OCAL_I32)));
  ck_assert_ocal(ocal_buffer_read(buf, 0, n, back, NULL));
  assert_all_equal(back, fill_value(OCAL_I32), n, sizeof *host, "fill after the context's release");
  const size_t s[] = {2, 5};
  ck_assert_ocal(ocal_buffer_view(buf, 1000, 2, s, &view));
  ck_assert_ocal(ocal_buffer_write(view, 0, 10, host, NULL));
  ocal_event ev = NULL;
  ck_assert_ocal(ocal_buffer_read(buf, 995, 20, back, &ev));
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  for (size_t i = 0; i < 20; i++) {
    int32_t want = i >= 5 && i < 15 ? host[i - 5] : -7;
    ck_assert_int_eq(back[i], want);
  }
  free(back);
  free(host);
  ck_assert_ocal(ocal_buffer_release(buf)); /* the view still holds the context */
  ck_assert_ocal(ocal_buffer_fill(view, fill_value(OCAL_I32)));
  int32_t last[10];
  ck_assert_ocal(ocal_buffer_read(view, 0, 10, last, NULL));
  for (size_t i = 0; i < 10; i++) ck_assert_int_eq(last[i], -7);
  ck_assert_ocal(ocal_buffer_release(view)); /* the context goes with the last buffer */
}
END_TEST

int main(void) {
  Suite *s = suite_create("buffer");

  TCase *types = fixture_tcase("types");
  tcase_add_loop_test(types, test_roundtrip_dtype, 0, N_DTYPES);
  tcase_add_test(types, test_roundtrip_shapes);
  tcase_add_loop_test(types, test_zeros_dtype, 0, N_DTYPES);
  tcase_add_loop_test(types, test_fill_dtype, 0, N_DTYPES);
  tcase_add_test(types, test_fill_big);
  suite_add_tcase(s, types);

  TCase *transfers = fixture_tcase("transfers");
  tcase_add_test(transfers, test_empty_buffers);
  tcase_add_test(transfers, test_ranged_transfers);
  tcase_add_test(transfers, test_nonblocking_transfers);
  tcase_add_loop_test(transfers, test_copy, 0, 2);
  tcase_add_loop_test(transfers, test_copy_offsets, 0, 2);
  tcase_add_loop_test(transfers, test_copy_views_of_one_buffer, 0, 2);
  tcase_add_test(transfers, test_copy_errors);
  suite_add_tcase(s, transfers);

  TCase *views = fixture_tcase("views");
  tcase_add_test(views, test_views);
  tcase_add_test(views, test_view_of_view);
  tcase_add_test(views, test_view_errors);
  tcase_add_test(views, test_view_outlives_base);
  suite_add_tcase(s, views);

  TCase *errors = fixture_tcase("errors");
  tcase_add_test(errors, test_create_errors);
  tcase_add_test(errors, test_transfer_errors);
  tcase_add_test(errors, test_null_buffer_errors);
  tcase_add_test(errors, test_fill_errors);
  suite_add_tcase(s, errors);

  TCase *contexts = fixture_tcase("contexts");
  tcase_add_test(contexts, test_fp64_disabled);
  tcase_add_test(contexts, test_out_of_device_memory);
  tcase_add_test(contexts, test_context_released_first);
  suite_add_tcase(s, contexts);

  return fixture_run(s);
}
