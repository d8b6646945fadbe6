/* ocal tests — memory: the caching device pool, pinned host memory, staged transfers and
 * transfers on the transfer queue ordered by events (src/core/pool.c, src/core/transfer.c).
 *
 * Tests that need particular pool settings make their own context with explicit options, so
 * that the environment of the run cannot change what they check. Commands are held back with
 * OpenCL user events, so "still pending" is a fact of the test, not a matter of timing. */
#include "fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ocal_context make_ctx(int pool, int64_t pool_limit, int64_t memory_limit, int staging) {
  ocal_context_options o;
  ck_assert_ocal(ocal_context_options_init(&o));
  o.pool = pool;
  o.pool_limit = pool_limit;
  o.memory_limit = memory_limit;
  o.staging = staging;
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(&o, &ctx));
  return ctx;
}

static ocal_buffer make_u8(ocal_context ctx, size_t n) {
  ocal_buffer b = NULL;
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_U8, 1, &n, &b));
  return b;
}

static cl_mem mem_of(ocal_buffer b) {
  cl_mem m = NULL;
  ck_assert_ocal(ocal_buffer_get_cl_mem(b, &m, NULL));
  return m;
}

static ocal_memory_stats stats_of(ocal_context ctx) {
  ocal_memory_stats s = {sizeof s};
  ck_assert_ocal(ocal_memory_get_stats(ctx, &s));
  return s;
}

static void *random_bytes(size_t n, uint64_t seed) {
  void *p = fixture_malloc(n ? n : 1);
  fixture_random_bytes(p, n, seed);
  return p;
}

static void assert_bytes_equal(const void *a, const void *b, size_t n, const char *what) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(x[i] == y[i], "%s: byte %zu of %zu is %u, expected %u", what, i, n, x[i], y[i]);
}

/* A user event of the context, and its ocal wrapper; complete it with release_gate. */
typedef struct gate {
  cl_event cl;
  ocal_event ev;
} gate;

static gate make_gate(ocal_context ctx) {
  cl_context clctx;
  ck_assert_ocal(ocal_context_get_cl_context(ctx, &clctx));
  cl_int err;
  gate g;
  g.cl = clCreateUserEvent(clctx, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  ck_assert_ocal(ocal_event_from_cl(g.cl, &g.ev));
  return g;
}

static void open_gate(gate *g) {
  ck_assert_int_eq(clSetUserEventStatus(g->cl, CL_COMPLETE), CL_SUCCESS);
  ck_assert_ocal(ocal_event_release(g->ev));
  clReleaseEvent(g->cl);
}

static int completed(ocal_event ev) {
  cl_event cl;
  ck_assert_ocal(ocal_event_get_cl_event(ev, &cl));
  cl_int st;
  ck_assert_int_eq(clGetEventInfo(cl, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL),
                   CL_SUCCESS);
  return st == CL_COMPLETE;
}

/* ---- the pool ------------------------------------------------------------------------- */

START_TEST(test_reuse) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  /* 4000 and 3900 bytes share the class of 4096 bytes; 5000 does not. */
  ocal_buffer a = make_u8(ctx, 4000);
  cl_mem am = mem_of(a);
  size_t size = 0;
  ck_assert_int_eq(clGetMemObjectInfo(am, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
  ck_assert_uint_eq(size, 4096);
  unsigned char v = 7;
  ck_assert_ocal(ocal_buffer_fill(a, &v)); /* still queued, perhaps, at the release */
  ck_assert_ocal(ocal_buffer_release(a));
  ocal_memory_stats s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.bytes_cached, 4096);

  /* The same memory comes back at once: the main queue is in order, so this write runs after
   * the fill of the earlier owner, and its data is what stays. */
  ocal_buffer b = make_u8(ctx, 3900);
  ck_assert_ptr_eq(mem_of(b), am);
  unsigned char *host = random_bytes(3900, 1), *back = fixture_malloc(3900);
  ck_assert_ocal(ocal_buffer_write(b, 0, 3900, host, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, 3900, back, NULL));
  assert_bytes_equal(back, host, 3900, "a reused block");
  s = stats_of(ctx);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.device_allocs, 1);
  ck_assert_uint_eq(s.bytes_cached, 0);

  ocal_buffer c = make_u8(ctx, 5000); /* another class: new memory */
  ck_assert_ptr_ne(mem_of(c), am);

  /* A view keeps its base's memory in use after the base is released. */
  ocal_buffer view = NULL;
  const size_t vn = 100;
  ck_assert_ocal(ocal_buffer_view(b, 17, 1, &vn, &view));
  ck_assert_ocal(ocal_buffer_release(b));
  ocal_buffer d = make_u8(ctx, 4000);
  ck_assert_ptr_ne(mem_of(d), am);
  ck_assert_ocal(ocal_buffer_read(view, 0, vn, back, NULL));
  assert_bytes_equal(back, host + 17, vn, "a view of a released base");
  ck_assert_ocal(ocal_buffer_release(view));
  ocal_buffer e = make_u8(ctx, 4000);
  ck_assert_ptr_eq(mem_of(e), am);

  ck_assert_ocal(ocal_buffer_release(c));
  ck_assert_ocal(ocal_buffer_release(d));
  ck_assert_ocal(ocal_buffer_release(e));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.device_allocs, 3);
  ck_assert_uint_eq(s.hits, 2);
  ck_assert_uint_eq(s.misses, 3);
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* Sizes across classes: each comes back with at least as many bytes, less than 25% more. */
START_TEST(test_size_classes) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t sizes[] = {1, 63, 512, 513, 640, 641, 1000, 1025, 4097, 65537, 100003, 1 << 20,
                          (1 << 20) + 1, 3333333};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    ocal_buffer b = make_u8(ctx, sizes[i]);
    size_t size = 0;
    ck_assert_int_eq(clGetMemObjectInfo(mem_of(b), CL_MEM_SIZE, sizeof size, &size, NULL),
                     CL_SUCCESS);
    ck_assert_uint_ge(size, sizes[i]);
    ck_assert_msg(size <= 512 || (double)size < 1.25 * (double)sizes[i],
                  "%zu bytes allocated for %zu", size, sizes[i]);
    ck_assert_ocal(ocal_buffer_release(b));
  }
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* A block that a transfer-queue command may still write is not handed out again. */
START_TEST(test_no_reuse_while_pending) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t n = 10007;
  unsigned char *host = random_bytes(n, 2), *back = fixture_malloc(n);
  ocal_buffer a = make_u8(ctx, n);
  cl_mem am = mem_of(a);
  gate g = make_gate(ctx);
  ocal_event w = NULL;
  ck_assert_ocal(ocal_transfer_write(a, 0, n, host, 1, &g.ev, &w));
  ck_assert_ocal(ocal_buffer_release(a));
  ocal_buffer b = make_u8(ctx, n);
  cl_mem bm = mem_of(b);
  ck_assert_ptr_ne(bm, am);
  ck_assert_uint_eq(stats_of(ctx).hits, 0);
  ck_assert_int_eq(completed(w), 0);

  open_gate(&g);
  ck_assert_ocal(ocal_event_wait(w));
  ck_assert_ocal(ocal_event_release(w));
  ck_assert_ocal(ocal_buffer_release(b));
  /* Both blocks are free now; either may come back. */
  ocal_buffer c = make_u8(ctx, n);
  ck_assert(mem_of(c) == am || mem_of(c) == bm);
  ck_assert_uint_eq(stats_of(ctx).hits, 1);
  ck_assert_ocal(ocal_buffer_write(c, 0, n, host, NULL));
  ck_assert_ocal(ocal_buffer_read(c, 0, n, back, NULL));
  assert_bytes_equal(back, host, n, "after the pending transfer");
  ck_assert_ocal(ocal_buffer_release(c));
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* ocal_context_finish waits for the transfer queues too: a write held back by a user event
 * that another thread sets 150 ms later, and a read that waits for it, are both complete when
 * it returns. */
static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *open_later(void *cl) {
  struct timespec t = {0, 150 * 1000 * 1000};
  nanosleep(&t, NULL);
  clSetUserEventStatus((cl_event)cl, CL_COMPLETE);
  return NULL;
}

START_TEST(test_finish_waits_for_transfers) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t n = 100003;
  unsigned char *host = random_bytes(n, 7), *back = fixture_malloc(n);
  ocal_buffer a = make_u8(ctx, n);
  gate g = make_gate(ctx);
  ocal_event w = NULL, r = NULL;
  ck_assert_ocal(ocal_transfer_write(a, 0, n, host, 1, &g.ev, &w));
  ck_assert_ocal(ocal_transfer_read(a, 0, n, back, 1, &w, &r));
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, open_later, g.cl), 0);
  double t0 = seconds_now();
  ck_assert_ocal(ocal_context_finish(ctx));
  double waited = seconds_now() - t0;
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_msg(completed(w) && completed(r), "ocal_context_finish returned before its transfers");
  ck_assert_msg(waited >= 0.1, "ocal_context_finish returned after %.3f s, before the gate opened",
                waited);
  assert_bytes_equal(back, host, n, "read back after ocal_context_finish");
  ck_assert_ocal(ocal_event_release(g.ev));
  clReleaseEvent(g.cl);
  ck_assert_ocal(ocal_event_release(w));
  ck_assert_ocal(ocal_event_release(r));
  ck_assert_ocal(ocal_buffer_release(a));
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* A block freed while main-queue commands are pending may be reused at once, but its new
 * owner's transfer-queue commands wait for the old owner's commands. */
START_TEST(test_transfer_waits_for_old_owner) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t n = 4099;
  unsigned char *host = random_bytes(n, 3), *back = fixture_malloc(n);
  ocal_buffer a = make_u8(ctx, n);
  cl_mem am = mem_of(a);
  ocal_event e0 = NULL; /* an empty transfer: the transfer queue exists from now on */
  ck_assert_ocal(ocal_transfer_write(a, 0, 0, NULL, 0, NULL, &e0));
  ck_assert_ocal(ocal_event_wait(e0));
  ck_assert_ocal(ocal_event_release(e0));

  gate g = make_gate(ctx);
  ck_assert_ocal(ocal_context_enqueue_wait(ctx, 1, &g.ev)); /* hold the main queue */
  unsigned char v = 0xab;
  ck_assert_ocal(ocal_buffer_fill(a, &v));
  ck_assert_ocal(ocal_buffer_release(a));
  ocal_buffer b = make_u8(ctx, n);
  ck_assert_ptr_eq(mem_of(b), am);
  ocal_event w = NULL;
  ck_assert_ocal(ocal_transfer_write(b, 0, n, host, 0, NULL, &w));
  usleep(20000);
  ck_assert_msg(!completed(w), "the write ran before the old owner's fill");
  open_gate(&g);
  ck_assert_ocal(ocal_event_wait(w));
  ck_assert_ocal(ocal_event_release(w));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, back, NULL));
  assert_bytes_equal(back, host, n, "the write after the old owner's fill");
  ck_assert_ocal(ocal_buffer_release(b));
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* The first transfer of a context is not ordered after the main queue (a held main queue
 * does not hold it), while a block recycled before any transfer queue existed still makes its
 * new owner's transfer wait for the old owner's commands. */
START_TEST(test_first_transfer_queue) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t n = 4099;
  unsigned char *host = random_bytes(n, 5), *back = fixture_malloc(n);
  ocal_buffer fresh = make_u8(ctx, n), a = make_u8(ctx, n);
  cl_mem am = mem_of(a);
  unsigned char v = 0x5c;
  ck_assert_ocal(ocal_buffer_fill(fresh, &v));
  ck_assert_ocal(ocal_context_finish(ctx));
  gate g = make_gate(ctx);
  ck_assert_ocal(ocal_context_enqueue_wait(ctx, 1, &g.ev)); /* hold the main queue */
  ck_assert_ocal(ocal_buffer_fill(a, &v));
  ck_assert_ocal(ocal_buffer_release(a)); /* cached with no fence: no transfer queue yet */
  ocal_buffer b = make_u8(ctx, n);
  ck_assert_ptr_eq(mem_of(b), am);
  ocal_event r = NULL, w = NULL;
  ck_assert_ocal(ocal_transfer_read(fresh, 0, n, back, 0, NULL, &r));
  ck_assert_ocal(ocal_event_wait(r)); /* returns while the main queue is held */
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(back[i], v);
  ck_assert_ocal(ocal_transfer_write(b, 0, n, host, 0, NULL, &w));
  usleep(20000);
  ck_assert_msg(!completed(w), "the write ran before the old owner's fill");
  open_gate(&g);
  ck_assert_ocal(ocal_event_wait(w));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, back, NULL));
  assert_bytes_equal(back, host, n, "the write after the old owner's fill");
  ck_assert_ocal(ocal_event_release(r));
  ck_assert_ocal(ocal_event_release(w));
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_buffer_release(fresh));
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* When an allocation fails for lack of memory, the cache is freed and the allocation tried
 * again. The context's memory limit is the real mechanism that fails it here (PoCL's memory
 * is the host's, which a test cannot exhaust safely). */
START_TEST(test_oom_retry) {
  ocal_context ctx = make_ctx(1, -1, 1 << 20, 0);
  ocal_buffer a = make_u8(ctx, 600 * 1024); /* class 640 KiB */
  ck_assert_ocal(ocal_buffer_release(a));
  ck_assert_uint_eq(stats_of(ctx).bytes_cached, 640 * 1024);
  ocal_buffer b = make_u8(ctx, 700 * 1024); /* class 768 KiB: only fits without the cache */
  ocal_memory_stats s = stats_of(ctx);
  ck_assert_uint_eq(s.oom_retries, 1);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.device_frees, 1);
  ck_assert_uint_eq(s.bytes_in_use, 768 * 1024);

  /* Too much even without a cache: an error, and the context goes on working. */
  ocal_buffer c = (ocal_buffer)&s;
  const size_t big = 300 * 1024;
  ck_assert_ocal_fails(ocal_buffer_create(ctx, OCAL_U8, 1, &big, &c), OCAL_OUT_OF_DEVICE_MEMORY);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(ocal_last_error(), "limit") != NULL, "%s", ocal_last_error());
  /* the message names the public call that failed, first */
  ck_assert_msg(strncmp(ocal_last_error(), "ocal_buffer_create: ", 20) == 0, "%s",
                ocal_last_error());
  ck_assert_uint_eq(stats_of(ctx).oom_retries, 1); /* nothing cached: no retry */
  const size_t n = 100 * 1024 + 3;
  unsigned char *host = random_bytes(n, 4), *back = fixture_malloc(n);
  ck_assert_ocal(ocal_buffer_write(b, 0, n, host, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, back, NULL));
  assert_bytes_equal(back, host, n, "after a failed allocation");
  ck_assert_ocal(ocal_buffer_release(b));
  free(host);
  free(back);
  ck_assert_ocal(ocal_context_release(ctx));

  /* The same limit from the environment. */
  setenv("OCAL_MEMORY_LIMIT", "1M", 1);
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.memory_limit, 1 << 20);
  a = make_u8(ctx, 600 * 1024);
  ck_assert_ocal(ocal_buffer_release(a));
  b = make_u8(ctx, 700 * 1024);
  ck_assert_uint_eq(stats_of(ctx).oom_retries, s.pool_enabled ? 1 : 0);
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_context_release(ctx));
  setenv("OCAL_MEMORY_LIMIT", "lots", 1);
  ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_null(ctx);
  unsetenv("OCAL_MEMORY_LIMIT");
}
END_TEST

START_TEST(test_limit_and_trim) {
  ocal_context ctx = make_ctx(1, 64 * 1024, -1, 0);
  ocal_buffer b[3];
  for (int i = 0; i < 3; i++) b[i] = make_u8(ctx, 30000); /* class 32 KiB */
  for (int i = 0; i < 3; i++) ck_assert_ocal(ocal_buffer_release(b[i]));
  ocal_memory_stats s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_cached, 64 * 1024); /* two of three fit under the limit */
  ck_assert_uint_eq(s.device_frees, 1);
  ocal_buffer big = make_u8(ctx, 100000); /* larger than the limit: never cached */
  ck_assert_ocal(ocal_buffer_release(big));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_cached, 64 * 1024);
  ck_assert_uint_eq(s.device_frees, 2);
  /* The oldest cached blocks go first when a new one needs room. */
  ocal_buffer small = make_u8(ctx, 20000); /* class 20 KiB */
  ck_assert_ocal(ocal_buffer_release(small));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_cached, 32 * 1024 + 20 * 1024);
  ck_assert_uint_eq(s.device_frees, 3);

  ck_assert_ocal(ocal_memory_trim(ctx));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.device_frees, 5);

  ck_assert_ocal(ocal_memory_set_pool_limit(ctx, 0));
  b[0] = make_u8(ctx, 1000);
  ck_assert_ocal(ocal_buffer_release(b[0]));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.pool_limit, 0);
  ck_assert_ocal(ocal_context_release(ctx));

  /* The limit from the environment, and a bad value. */
  setenv("OCAL_POOL_LIMIT", "12k", 1);
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_uint_eq(stats_of(ctx).pool_limit, 12 * 1024);
  ck_assert_ocal(ocal_context_release(ctx));
  setenv("OCAL_POOL_LIMIT", "-5", 1);
  ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
  /* Found by tests/fuzz (fuzz_settings): strtoull skips blanks and negates after a minus,
   * so " -5" was taken for 2^64 - 5 bytes; "+5" and "5i" were taken too. */
  static const char *const bad[] = {" -5", "+5", " 5", "5i", "k"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("OCAL_POOL_LIMIT", bad[i], 1);
    ck_assert_ocal_fails(ocal_context_create(NULL, &ctx), OCAL_INVALID_ARGUMENT);
  }
  setenv("OCAL_POOL_LIMIT", "3KiB", 1);
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  ck_assert_uint_eq(stats_of(ctx).pool_limit, 3 * 1024);
  ck_assert_ocal(ocal_context_release(ctx));
  unsetenv("OCAL_POOL_LIMIT");

  ck_assert_ocal_fails(ocal_memory_trim(NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_memory_set_pool_limit(NULL, 1), OCAL_INVALID_HANDLE);
}
END_TEST

START_TEST(test_pool_off) {
  setenv("OCAL_POOL", "0", 1);
  ocal_context ctx = NULL;
  ck_assert_ocal(ocal_context_create(NULL, &ctx));
  unsetenv("OCAL_POOL");
  ocal_buffer a = make_u8(ctx, 1000);
  ck_assert_ocal(ocal_buffer_release(a));
  ocal_buffer b = make_u8(ctx, 1000);
  ocal_memory_stats s = stats_of(ctx);
  ck_assert_int_eq(s.pool_enabled, 0);
  ck_assert_uint_eq(s.hits, 0);
  ck_assert_uint_eq(s.device_allocs, 2);
  ck_assert_uint_eq(s.device_frees, 1);
  ck_assert_uint_eq(s.bytes_in_use, 1000); /* exact sizes without the pool */
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

START_TEST(test_stats) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  ocal_memory_stats s = stats_of(ctx);
  ck_assert_int_eq(s.pool_enabled, 1);
  ck_assert_uint_eq(s.bytes_in_use + s.bytes_cached + s.hits + s.misses + s.device_allocs, 0);
  ocal_buffer a = make_u8(ctx, 3000);  /* class 3 KiB */
  ocal_buffer b = make_u8(ctx, 10000); /* class 10 KiB */
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_in_use, 13 * 1024);
  ck_assert_uint_eq(s.peak_bytes_in_use, 13 * 1024);
  ck_assert_ocal(ocal_buffer_release(b));
  ocal_buffer c = make_u8(ctx, 9000); /* the 10 KiB block again */
  ck_assert_ocal(ocal_buffer_release(a));
  s = stats_of(ctx);
  ck_assert_uint_eq(s.bytes_in_use, 10 * 1024);
  ck_assert_uint_eq(s.bytes_cached, 3 * 1024);
  ck_assert_uint_eq(s.peak_bytes_in_use, 13 * 1024);
  ck_assert_uint_eq(s.peak_bytes_reserved, 13 * 1024);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 2);
  ck_assert_uint_eq(s.device_allocs, 2);
  ck_assert_uint_eq(s.device_frees, 0);
  ck_assert_ocal(ocal_buffer_release(c));
  ck_assert_ocal_fails(ocal_memory_get_stats(ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_memory_get_stats(NULL, &s), OCAL_INVALID_HANDLE);
  /* A struct with one accepted size names that size once ("takes 104", not "104 to 104"). */
  s.struct_size = sizeof s - 1;
  ck_assert_ocal_fails(ocal_memory_get_stats(ctx, &s), OCAL_INVALID_ARGUMENT);
  char want[160];
  snprintf(want, sizeof want,
           "ocal_memory_get_stats: stats->struct_size is %zu, but this library takes %zu: set "
           "it to sizeof(ocal_memory_stats) before the call",
           sizeof s - 1, sizeof s);
  ck_assert_str_eq(ocal_last_error(), want);
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* The operations' own scratch memory (reductions) comes from the pool too, and everything is
 * given back at context release (the sanitizer build checks for leaks). */
START_TEST(test_scratch_and_release) {
  ocal_context ctx = make_ctx(1, -1, -1, 0);
  const size_t n = 300007;
  float *host = fixture_malloc(n * sizeof *host);
  for (size_t i = 0; i < n; i++) host[i] = (float)(i % 7);
  ocal_buffer x = NULL, out = NULL;
  ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, host, &x));
  const size_t one = 1;
  ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 1, &one, &out));
  ck_assert_ocal(ocal_sum(x, OCAL_AXIS_ALL, out));
  float sum = 0;
  ck_assert_ocal(ocal_buffer_read(out, 0, 1, &sum, NULL));
  double want = 0;
  for (size_t i = 0; i < n; i++) want += host[i];
  ck_assert_double_eq_tol(sum, want, 1e-3 * want);
  ck_assert_ocal(ocal_buffer_release(x));
  ck_assert_ocal(ocal_buffer_release(out));
  /* A buffer left cached and pinned memory freed after the context's release. */
  void *pinned = NULL;
  ck_assert_ocal(ocal_pinned_alloc(ctx, 12345, &pinned));
  ck_assert_ocal(ocal_context_release(ctx));
  ck_assert_ocal(ocal_pinned_free(ctx, pinned));
  free(host);
}
END_TEST

/* ---- pinned memory and staged transfers ------------------------------------------------- */

START_TEST(test_pinned) {
  ocal_context ctx = fixture_ctx;
  const size_t n = 1000003;
  unsigned char *src = NULL, *dst = NULL;
  ck_assert_ocal(ocal_pinned_alloc(ctx, n, (void **)&src));
  ck_assert_ocal(ocal_pinned_alloc(ctx, n + 5, (void **)&dst));
  fixture_random_bytes(src, n, 5);
  int pinned = 0;
  cl_mem pm = NULL;
  size_t off = 1;
  ck_assert_ocal(ocal_pinned_query(ctx, src + 17, &pinned, &pm, &off));
  ck_assert_int_eq(pinned, 1);
  ck_assert_ptr_nonnull(pm);
  ck_assert_uint_eq(off, 17);
  ck_assert_ocal(ocal_pinned_query(ctx, src + n, &pinned, &pm, &off));
  ck_assert_int_eq(pinned, 0);
  ck_assert_ptr_null(pm);
  ck_assert_ocal(ocal_pinned_query(ctx, &n, &pinned, NULL, NULL));
  ck_assert_int_eq(pinned, 0);

  ocal_buffer b = make_u8(ctx, n);
  ck_assert_ocal(ocal_buffer_write(b, 0, n, src, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 0, n, dst + 5, NULL));
  assert_bytes_equal(dst + 5, src, n, "pinned to device to pinned");
  /* Parts, from and to addresses inside the blocks. */
  memset(dst, 0, n + 5);
  ck_assert_ocal(ocal_buffer_write(b, 11, n - 100, src + 33, NULL));
  ck_assert_ocal(ocal_buffer_read(b, 11, n - 100, dst + 1, NULL));
  assert_bytes_equal(dst + 1, src + 33, n - 100, "parts of pinned blocks");
  /* Non-blocking, on the transfer queue. */
  ocal_event w = NULL, r = NULL;
  ck_assert_ocal(ocal_transfer_write(b, 0, n, src, 0, NULL, &w));
  ck_assert_ocal(ocal_transfer_read(b, 0, n, dst, 1, &w, &r));
  ck_assert_ocal(ocal_event_wait(r));
  assert_bytes_equal(dst, src, n, "pinned on the transfer queue");
  ck_assert_ocal(ocal_event_release(w));
  ck_assert_ocal(ocal_event_release(r));

  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_pinned_free(ctx, src));
  ck_assert_ocal_fails(ocal_pinned_free(ctx, src), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_pinned_free(ctx, dst + 1), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal(ocal_pinned_free(ctx, dst));
  ck_assert_ocal(ocal_pinned_free(ctx, NULL));
  void *p = &pm;
  ck_assert_ocal_fails(ocal_pinned_alloc(ctx, 0, &p), OCAL_INVALID_ARGUMENT);
  /* More than any machine can pin: host memory is what is short, and the message says so. */
  if (sizeof(size_t) == 8) {
    ck_assert_ocal_fails(ocal_pinned_alloc(ctx, (size_t)1 << 50, &p), OCAL_OUT_OF_HOST_MEMORY);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(ocal_last_error(), "could not pin"));
  }
  ck_assert_ptr_null(p);
  ck_assert_ocal_fails(ocal_pinned_alloc(ctx, 10, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_pinned_alloc(NULL, 10, &p), OCAL_INVALID_HANDLE);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_pinned_alloc"));
  ck_assert_ocal_fails(ocal_pinned_query(ctx, src, NULL, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_pinned_query(NULL, src, &pinned, NULL, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "ocal_pinned_query"));
}
END_TEST

/* Staged writes and reads of sizes that are not multiples of the chunk, at odd offsets,
 * checked against transfers that bypass staging (those with an event). */
START_TEST(test_staged) {
  setenv("OCAL_STAGING_CHUNK", "12288", 1);
  setenv("OCAL_STAGING_MIN", "1", 1);
  setenv("OCAL_STAGING_THREADS", "3", 1); /* uneven parts of whole chunks */
  ocal_context ctx = make_ctx(-1, -1, -1, 1);
  unsetenv("OCAL_STAGING_CHUNK");
  unsetenv("OCAL_STAGING_MIN");
  unsetenv("OCAL_STAGING_THREADS");
  const size_t chunk = 12288;
  const size_t sizes[] = {1, 4095, chunk, chunk + 1, 4 * chunk + 7, 9 * chunk + 13, 100003};
  const size_t cap = 9 * chunk + 13 + 64;
  ocal_buffer b = make_u8(ctx, cap);
  unsigned char *back = fixture_malloc(cap);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i], off = (i * 7) % 61;
    unsigned char *host = random_bytes(n, 10 + i);
    ck_assert_ocal(ocal_buffer_write(b, off, n, host, NULL)); /* staged */
    ocal_event ev = NULL;
    ck_assert_ocal(ocal_buffer_read(b, off, n, back, &ev)); /* direct */
    ck_assert_ocal(ocal_event_wait(ev));
    ck_assert_ocal(ocal_event_release(ev));
    assert_bytes_equal(back, host, n, "a staged write");

    fixture_random_bytes(host, n, 100 + i);
    ck_assert_ocal(ocal_buffer_write(b, off, n, host, &ev)); /* direct */
    ck_assert_ocal(ocal_event_wait(ev));
    ck_assert_ocal(ocal_event_release(ev));
    memset(back, 0, n);
    ck_assert_ocal(ocal_buffer_read(b, off, n, back, NULL)); /* staged */
    assert_bytes_equal(back, host, n, "a staged read");
    free(host);
  }
  /* Through a view, and a typed buffer. */
  const size_t fn = 7 * 3079;
  float *f = random_bytes(fn * sizeof *f, 77), *fb = fixture_malloc(fn * sizeof *fb);
  for (size_t i = 0; i < fn; i++) f[i] = (float)i * 0.5f;
  ocal_buffer fbuf = NULL, view = NULL;
  ck_assert_ocal(ocal_buffer_from_host(ctx, OCAL_F32, 1, &fn, f, &fbuf));
  const size_t vs[2] = {3079, 5};
  ck_assert_ocal(ocal_buffer_view(fbuf, 3, 2, vs, &view));
  ck_assert_ocal(ocal_buffer_read(view, 0, 3079 * 5, fb, NULL));
  assert_bytes_equal(fb, f + 3, 3079 * 5 * sizeof *f, "a staged read of a view");
  ck_assert_ocal(ocal_buffer_release(view));
  ck_assert_ocal(ocal_buffer_release(fbuf));
  free(f);
  free(fb);
  free(back);
  ck_assert_ocal(ocal_buffer_release(b));
  ck_assert_ocal(ocal_context_release(ctx));
}
END_TEST

/* ---- overlap: the transfer queue and events ------------------------------------------------ */

/* Double-buffered pipeline: upload on the transfer queue, compute on the main queue, download
 * on the transfer queue, ordered only by events; a gate holds the first upload back, so
 * nothing downstream may have completed before it opens. */
START_TEST(test_overlap_ordered_by_events) {
  ocal_context ctx = fixture_ctx;
  const size_t n = 50021, steps = 6;
  float *in = fixture_malloc(steps * n * sizeof *in), *out = fixture_malloc(steps * n * sizeof *out);
  for (size_t i = 0; i < steps * n; i++) in[i] = (float)((i * 37) % 1001) - 500.0f;
  memset(out, 0, steps * n * sizeof *out);
  ocal_buffer dev_in[2], dev_out[2];
  for (int k = 0; k < 2; k++) {
    ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &dev_in[k]));
    ck_assert_ocal(ocal_buffer_create(ctx, OCAL_F32, 1, &n, &dev_out[k]));
  }
  gate g = make_gate(ctx);
  ocal_event up[6] = {0}, done[6] = {0}, down[6] = {0};
  for (size_t s = 0; s < steps; s++) {
    int k = (int)(s % 2);
    /* The upload into slot k waits for the download that last used it... and its compute. */
    size_t nw = 0;
    ocal_event w[2];
    if (s < 2) w[nw++] = g.ev;
    if (s >= 2) w[nw++] = done[s - 2];
    ck_assert_ocal(ocal_transfer_write(dev_in[k], 0, n, in + s * n, nw, w, &up[s]));
    ck_assert_ocal(ocal_context_enqueue_wait(ctx, s >= 2 ? 2 : 1, (ocal_event[]){up[s], s >= 2 ? down[s - 2] : NULL}));
    ck_assert_ocal(ocal_unary(OCAL_UNARY_ABS, dev_in[k], dev_out[k]));
    ck_assert_ocal(ocal_context_enqueue_marker(ctx, &done[s]));
    ck_assert_ocal(ocal_transfer_read(dev_out[k], 0, n, out + s * n, 1, &done[s], &down[s]));
  }
  usleep(20000);
  for (size_t s = 0; s < steps; s++) {
    ck_assert_msg(!completed(up[s]) && !completed(done[s]) && !completed(down[s]),
                  "step %zu ran before the gate opened", s);
  }
  open_gate(&g);
  ck_assert_ocal(ocal_event_wait(down[steps - 1]));
  ck_assert_ocal(ocal_context_finish(ctx));
  for (size_t s = 0; s < steps; s++) {
    ck_assert_ocal(ocal_event_wait(down[s]));
    ck_assert_ocal(ocal_event_release(up[s]));
    ck_assert_ocal(ocal_event_release(done[s]));
    ck_assert_ocal(ocal_event_release(down[s]));
  }
  for (size_t i = 0; i < steps * n; i++)
    ck_assert_msg(out[i] == (in[i] < 0 ? -in[i] : in[i]), "element %zu is %g, expected |%g|", i,
                  out[i], in[i]);
  for (int k = 0; k < 2; k++) {
    ck_assert_ocal(ocal_buffer_release(dev_in[k]));
    ck_assert_ocal(ocal_buffer_release(dev_out[k]));
  }
  free(in);
  free(out);
}
END_TEST

START_TEST(test_transfer_arguments) {
  ocal_context ctx = fixture_ctx;
  ocal_buffer b = make_u8(ctx, 100);
  unsigned char host[100] = {0};
  ocal_event ev = (ocal_event)host;
  ck_assert_ocal_fails(ocal_transfer_write(b, 0, 100, host, 0, NULL, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_transfer_write(b, 1, 100, host, 0, NULL, &ev), OCAL_SHAPE_MISMATCH);
  ck_assert_ptr_null(ev);
  ck_assert_ocal_fails(ocal_transfer_read(b, 0, 10, NULL, 0, NULL, &ev), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_transfer_read(b, 0, 10, host, 2, NULL, &ev), OCAL_INVALID_ARGUMENT);
  ocal_event bad[1] = {NULL};
  ck_assert_ocal_fails(ocal_transfer_read(b, 0, 10, host, 1, bad, &ev), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_transfer_read(NULL, 0, 10, host, 0, NULL, &ev), OCAL_INVALID_HANDLE);
  ck_assert_ocal_fails(ocal_context_enqueue_wait(ctx, 1, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_context_enqueue_wait(NULL, 0, NULL), OCAL_INVALID_HANDLE);
  ck_assert_ocal(ocal_context_enqueue_wait(ctx, 0, NULL));
  ck_assert_ocal_fails(ocal_context_enqueue_marker(ctx, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_ocal_fails(ocal_event_from_cl(NULL, &ev), OCAL_INVALID_ARGUMENT);
  /* A command that ended in an error: OCAL_OPENCL_ERROR, naming the status it ended with. */
  gate g = make_gate(ctx);
  ck_assert_int_eq(clSetUserEventStatus(g.cl, CL_OUT_OF_RESOURCES), CL_SUCCESS);
  ck_assert_ocal_fails(ocal_event_wait(g.ev), OCAL_OPENCL_ERROR);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_event_wait: the event's command ended with "
                                          "error status -5 (as an OpenCL error code: "
                                          "CL_OUT_OF_RESOURCES)") != NULL,
                "%s", ocal_last_error());
  ck_assert_ocal(ocal_event_release(g.ev));
  clReleaseEvent(g.cl);
  /* An empty transfer still gives an event, ordered after its wait list. */
  ck_assert_ocal(ocal_transfer_read(b, 100, 0, NULL, 0, NULL, &ev));
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  ck_assert_ocal(ocal_context_enqueue_marker(ctx, &ev));
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  ck_assert_ocal_fails(ocal_context_enqueue_wait(ctx, 2, NULL), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "events is NULL but num_events is 2") != NULL, "%s",
                ocal_last_error());
  /* An event of another context: named, before any queue sees it; both contexts go on. */
  ocal_context other = make_ctx(1, -1, -1, 0);
  ocal_event foreign = NULL;
  ck_assert_ocal(ocal_context_enqueue_marker(other, &foreign));
  ck_assert_ocal_fails(ocal_context_enqueue_wait(ctx, 1, &foreign), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "events[0] is an event of another context") != NULL,
                "%s", ocal_last_error());
  ck_assert_ocal_fails(ocal_transfer_read(b, 0, 10, host, 1, &foreign, &ev), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "wait[0] is an event of another context"));
  ck_assert_ocal(ocal_event_wait(foreign));
  ck_assert_ocal(ocal_event_release(foreign));
  ck_assert_ocal(ocal_context_release(other));
  /* The new event's address inside the wait list: refused, the waited-for event untouched
   * (still the caller's to wait on and release). */
  ocal_event two[2] = {NULL, NULL};
  ck_assert_ocal(ocal_context_enqueue_marker(ctx, &two[0]));
  ck_assert_ocal(ocal_context_enqueue_marker(ctx, &two[1]));
  ocal_event kept = two[1];
  ck_assert_ocal_fails(ocal_transfer_write(b, 0, 10, host, 2, two, &two[1]), OCAL_INVALID_ARGUMENT);
  ck_assert_msg(strstr(ocal_last_error(), "ocal_transfer_write: event points at wait[1]") != NULL,
                "%s", ocal_last_error());
  ck_assert_ptr_eq(two[1], kept);
  ck_assert_ocal_fails(ocal_transfer_read(b, 0, 10, host, 1, two, &two[0]), OCAL_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(ocal_last_error(), "event points at wait[0]"));
  ck_assert_ocal(ocal_transfer_read(b, 0, 10, host, 2, two, &ev));
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  for (int i = 0; i < 2; i++) ck_assert_ocal(ocal_event_release(two[i]));
  ck_assert_ocal(ocal_transfer_read(b, 0, 10, host, 0, NULL, &ev));
  ck_assert_ocal(ocal_event_wait(ev));
  ck_assert_ocal(ocal_event_release(ev));
  ck_assert_ocal(ocal_buffer_release(b));
}
END_TEST

static Suite *memory_suite(void) {
  Suite *s = suite_create("memory");
  TCase *tc = fixture_tcase("pool");
  tcase_add_test(tc, test_reuse);
  tcase_add_test(tc, test_size_classes);
  tcase_add_test(tc, test_no_reuse_while_pending);
  tcase_add_test(tc, test_finish_waits_for_transfers);
  tcase_add_test(tc, test_transfer_waits_for_old_owner);
  tcase_add_test(tc, test_first_transfer_queue);
  tcase_add_test(tc, test_oom_retry);
  tcase_add_test(tc, test_limit_and_trim);
  tcase_add_test(tc, test_pool_off);
  tcase_add_test(tc, test_stats);
  tcase_add_test(tc, test_scratch_and_release);
  suite_add_tcase(s, tc);
  tc = fixture_tcase("transfers");
  tcase_add_test(tc, test_pinned);
  tcase_add_test(tc, test_staged);
  tcase_add_test(tc, test_overlap_ordered_by_events);
  tcase_add_test(tc, test_transfer_arguments);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fixture_run(memory_suite()); }
