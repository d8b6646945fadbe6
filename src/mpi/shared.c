/* libocal-mpi — the node-local path: the ranks of a node share their staging memory (one
 * MPI shared window, a segment of two chunks per rank), each rank registers every segment
 * with its device once (CL_MEM_USE_HOST_PTR over page-aligned memory, which a driver may pin),
 * and a collective moves each chunk once over each device's bus: a rank downloads its chunk
 * into its segment, the peers upload it from there. Chunks alternate between the segment's two
 * halves, so the download of chunk s + 1 runs while chunk s is uploaded; one MPI_Barrier of
 * the node per chunk (with MPI_Win_sync on either side, the shared window's memory model)
 * says that every rank's chunk s is in place and every upload of chunk s - 1 is done.
 * Reductions run on the device in node-rank order, so every rank gets the same bits, on a
 * queue of their own so that one waiting for the device does not hold up the uploads.
 * Across nodes, allreduce reduces into each node's first rank, runs the ring between those,
 * and broadcasts within each node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_internal.h"

typedef struct ocal_mpi_request_s req;

/* ---- set-up ---------------------------------------------------------------------------- */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of three timed copies between device memory and host memory at p (download, then
 * upload): seconds for both. */
static int time_copies(ocal_mpi m, cl_mem dev, void *p, size_t bytes, double *secs) {
  double best = 1e30;
  for (int i = 0; i < 3; i++) {
    double t0 = now();
    if (clEnqueueReadBuffer(m->q_d2h, dev, CL_TRUE, m->shm_scratch_off, bytes, p, 0, NULL,
                            NULL) != CL_SUCCESS ||
        clEnqueueWriteBuffer(m->q_d2h, dev, CL_TRUE, m->shm_scratch_off, bytes, p, 0, NULL,
                             NULL) != CL_SUCCESS)
      return 0;
    double t = now() - t0;
    if (t < best) best = t;
  }
  *secs = best;
  return 1;
}

/* This rank's part of the set-up once the window exists: its registrations, the device
 * scratch, and the check that the device moves the shared memory as fast as ocal's own
 * pinned memory. Returns 1 when the path can run, else 0 with the reason in m->path. */
static int register_segments(ocal_mpi m) {
  long page = sysconf(_SC_PAGESIZE);
  m->seg_mem = calloc((size_t)m->node_size, sizeof *m->seg_mem);
  if (!m->seg_mem) {
    snprintf(m->path, sizeof m->path, "ring: no host memory for the node's registrations");
    return 0;
  }
  for (int k = 0; k < m->node_size; k++) {
    if ((size_t)m->seg[k] % (size_t)(page > 0 ? page : 4096) != 0) {
      snprintf(m->path, sizeof m->path,
               "ring: the shared window's segment of node rank %d is not page-aligned", k);
      return 0;
    }
    cl_int err;
    m->seg_mem[k] = clCreateBuffer(m->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                   m->seg_bytes, m->seg[k], &err);
    if (err != CL_SUCCESS) {
      m->seg_mem[k] = NULL;
      snprintf(m->path, sizeof m->path,
               "ring: clCreateBuffer(CL_MEM_USE_HOST_PTR) over the shared window failed with %s",
               ocal_cl_error_name(err));
      return 0;
    }
  }
  /* Two steps' peers' chunks; at least one chunk, for the speed check. */
  size_t scratch = (m->node_size > 1 ? 2 * (size_t)(m->node_size - 1) : 1) * m->chunk;
  if (ocal_buffer_create(m->ctx, OCAL_U8, 1, &scratch, &m->shm_scratch) != OCAL_OK ||
      ocal_buffer_get_cl_mem(m->shm_scratch, &m->shm_scratch_mem, &m->shm_scratch_off) !=
          OCAL_OK) {
    snprintf(m->path, sizeof m->path, "ring: no device memory for %zu bytes of scratch: %.150s",
             scratch, ocal_last_error());
    return 0;
  }
  ocal_device_info info = {sizeof info};
  ocal_context_get_device_info(m->ctx, &info);
  if (m->shared_setting == 1 && m->shared_fault != 2) {
    snprintf(m->path, sizeof m->path, "node-local shared memory: OCAL_MPI_SHARED=on");
    return 1;
  }
  if (info.type == OCAL_DEVICE_CPU && m->shared_fault != 2) {
    snprintf(m->path, sizeof m->path,
             "node-local shared memory: the device is the host's CPU, it reads the window "
             "directly");
    return 1;
  }
  /* The check: the whole scratch's first chunk, to and from this rank's segment and to and
   * from ocal's pinned staging memory. A driver that copies shared memory through a bounce
   * buffer is several times slower; half the pinned speed still beats the ring. */
  double t_shared = 0, t_pinned = 0;
  if (!time_copies(m, m->shm_scratch_mem, m->seg[m->node_rank], m->chunk, &t_shared) ||
      !time_copies(m, m->shm_scratch_mem, m->pin_send, m->chunk, &t_pinned)) {
    snprintf(m->path, sizeof m->path, "ring: the speed check's copies failed");
    return 0;
  }
  double gbs_shared = 2e-9 * (double)m->chunk / t_shared, gbs_pinned = 2e-9 * (double)m->chunk / t_pinned;
  /* Under OCAL_MPI_SHARED_FAULT=speed the check asks for a thousand times the pinned speed. */
  double need = m->shared_fault == 2 ? 1000.0 : 0.5;
  if (gbs_shared < need * gbs_pinned) {
    snprintf(m->path, sizeof m->path,
             "ring: the device moves the shared window at %.2f GB/s, pinned memory at %.2f GB/s "
             "(needs %g of it%s)", gbs_shared, gbs_pinned, need,
             m->shared_fault == 2 ? ", OCAL_MPI_SHARED_FAULT=speed" : "");
    return 0;
  }
  snprintf(m->path, sizeof m->path,
           "node-local shared memory: the device moves it at %.2f GB/s, pinned memory at %.2f GB/s",
           gbs_shared, gbs_pinned);
  return 1;
}

void ocal_mpi__shared_free(ocal_mpi m) {
  if (m->seg_mem)
    for (int k = 0; k < m->node_size; k++)
      if (m->seg_mem[k]) clReleaseMemObject(m->seg_mem[k]);
  free(m->seg_mem);
  m->seg_mem = NULL;
  ocal_buffer_release(m->shm_scratch);
  m->shm_scratch = NULL;
  if (m->win != MPI_WIN_NULL) {
    MPI_Win_unlock_all(m->win);
    MPI_Win_free(&m->win);
  }
  free(m->seg);
  m->seg = NULL;
  m->shared = 0;
}

/* Agrees on a flag over the whole communicator: 1 when every rank's is 1. */
static int all_agree(ocal_mpi m, int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, m->comm);
  return all;
}

void ocal_mpi__shared_setup(ocal_mpi m) {
  m->win = MPI_WIN_NULL;
  int want = 1;
  if (m->shared_setting == 0)
    want = 0, snprintf(m->path, sizeof m->path, "ring: OCAL_MPI_SHARED=off");
  else if (m->size < 2 || m->nodes == m->size)
    want = 0, snprintf(m->path, sizeof m->path, "ring: one rank per node, nothing to share");
  else if (m->shared_fault == 1)
    want = 0, snprintf(m->path, sizeof m->path,
                       "ring: no shared window (OCAL_MPI_SHARED_FAULT=window)");
  if (!all_agree(m, want)) {
    if (want)
      snprintf(m->path, sizeof m->path,
               "ring: another rank does not take the node-local path (its ocal_mpi_info says why)");
    return;
  }
  long page = sysconf(_SC_PAGESIZE);
  size_t pg = page > 0 ? (size_t)page : 4096;
  /* A half holds a chunk, and one node rank's part of a chunk (the reduce-scatter's). */
  m->seg_half = m->chunk + (m->chunk / (size_t)m->node_size + 64 + 63) / 64 * 64;
  m->seg_bytes = (2 * m->seg_half + pg - 1) / pg * pg;
  m->seg = calloc((size_t)m->node_size, sizeof *m->seg);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  MPI_Comm_set_errhandler(m->node, MPI_ERRORS_RETURN);
  unsigned char *mine = NULL;
  /* One page more than the segment: MPI need not align segments to pages, and the device
   * registers whole pages. (A mapping is page-aligned in every process, so each rank aligns
   * a peer's segment to the same memory.) */
  int err = MPI_Win_allocate_shared((MPI_Aint)(m->seg_bytes + pg), 1, info, m->node, &mine,
                                    &m->win);
  MPI_Info_free(&info);
  int ok = m->seg != NULL && err == MPI_SUCCESS;
  if (err != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    m->win = MPI_WIN_NULL;
    snprintf(m->path, sizeof m->path, "ring: MPI_Win_allocate_shared failed: %.180s", text);
  } else if (!m->seg) {
    snprintf(m->path, sizeof m->path, "ring: no host memory for the node's segments");
  }
  if (m->win != MPI_WIN_NULL) {
    /* One passive epoch for the window's life: MPI_Win_sync then orders this rank's loads
     * and stores around the barriers. */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
    for (int k = 0; ok && k < m->node_size; k++) {
      MPI_Aint size;
      int disp;
      void *p = NULL;
      if (MPI_Win_shared_query(m->win, k, &size, &disp, &p) != MPI_SUCCESS || !p) {
        snprintf(m->path, sizeof m->path, "ring: MPI_Win_shared_query of node rank %d failed", k);
        ok = 0;
      }
      m->seg[k] = p ? (unsigned char *)(((size_t)p + pg - 1) / pg * pg) : NULL;
    }
  }
  if (ok) ok = register_segments(m);
  if (!all_agree(m, ok)) {
    if (ok)
      snprintf(m->path, sizeof m->path,
               "ring: another rank could not use its node's shared window (its ocal_mpi_info "
               "says why)");
    ocal_mpi__shared_free(m);
    return;
  }
  m->shared = 1;
}

/* ---- the step engine ------------------------------------------------------------------- */

/* What one rank does in one step of a collective on the node. */
enum { SHM_NONE, SHM_COPY, SHM_GATHER, SHM_REDUCE };
typedef struct shm_step {
  cl_mem down;     /* bytes of this (at down_off) into this rank's half-segment; NULL: none */
  size_t down_off;
  size_t bytes;    /* the step's chunk: the same on every rank */
  int mode;        /* SHM_COPY: node rank `from`'s chunk to dst; SHM_GATHER: node rank k's
                      to dst + k * stride (k != this rank); SHM_REDUCE: dst = the ordered
                      reduction of own and every peer's chunk */
  int from;
  cl_mem dst;
  size_t dst_off, stride; /* bytes */
  cl_mem own;
  size_t own_off;
} shm_step;

typedef void (*shm_plan)(req *r, size_t s, shm_step *st, const void *arg);

/* Uploads bytes at src into dst at off after `dep` (NULL: nothing); returns the copy's event. */
static cl_event upload(req *r, cl_mem dst, size_t off, size_t bytes, const void *src,
                       cl_event dep) {
  cl_event e = NULL;
  if (bytes == 0 || r->cl_failed) return NULL;
  if (!ocal_mpi__cl_ok(r, clEnqueueWriteBuffer(r->m->q_h2d, dst, CL_FALSE, off, bytes, src,
                                               dep ? 1 : 0, dep ? &dep : NULL, &e),
                       "clEnqueueWriteBuffer"))
    return NULL;
  return e;
}

/* Queues the step's ordered reduction on q after the nwait events of wait (the uploads of
 * the peers' chunks, where q is not the upload queue); *done (NULL: none) receives its
 * event. */
static void reduce_ordered(req *r, const shm_step *st, size_t scr_bytes, size_t es,
                           cl_command_queue q, cl_uint nwait, const cl_event *wait,
                           cl_event *done) {
  ocal_mpi m = r->m;
  if (r->cl_failed) return;
  cl_kernel k = m->cl_ord[r->tidx][r->op];
  cl_ulong dst_off = st->dst_off / es, own_off = st->own_off / es,
           scr_off = (m->shm_scratch_off + scr_bytes) / es, stride = m->chunk / es,
           n = st->bytes / es;
  cl_uint nranks = (cl_uint)m->node_size, me = (cl_uint)m->node_rank;
  const struct {
    size_t size;
    const void *p;
  } args[] = {{sizeof st->dst, &st->dst},           {sizeof dst_off, &dst_off},
              {sizeof st->own, &st->own},           {sizeof own_off, &own_off},
              {sizeof m->shm_scratch_mem, &m->shm_scratch_mem}, {sizeof scr_off, &scr_off},
              {sizeof stride, &stride},             {sizeof nranks, &nranks},
              {sizeof me, &me},                     {sizeof n, &n}};
  for (cl_uint i = 0; i < sizeof args / sizeof args[0]; i++)
    if (!ocal_mpi__cl_ok(r, clSetKernelArg(k, i, args[i].size, args[i].p), "clSetKernelArg"))
      return;
  size_t global = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
  global = (global + m->group - 1) / m->group * m->group;
  ocal_mpi__cl_ok(r, clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, nwait,
                                            nwait ? wait : NULL, done),
                  "clEnqueueNDRangeKernel");
  if (q != m->q_h2d) clFlush(q); /* the upload queue is flushed once a step, by the caller */
}

static void wait_release(req *r, cl_event *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (e[i]) {
      ocal_mpi__cl_ok(r, clWaitForEvents(1, &e[i]), "clWaitForEvents");
      clReleaseEvent(e[i]);
      e[i] = NULL;
    }
}

/* The node barrier of the window's memory model: this rank's stores (its device's
 * downloads, complete) are visible to the peers after it, theirs to this rank. */
static void node_sync(req *r) {
  ocal_mpi m = r->m;
  MPI_Win_sync(m->win);
  ocal_mpi__mpi_check(r, MPI_Barrier(m->node), "MPI_Barrier");
  MPI_Win_sync(m->win);
}

/* Runs nsteps steps of a plan over the node; `first` guards the first download (the work
 * queued before the call). Returns when every device copy and reduction is done and no peer
 * still reads this rank's segment. */
static void shm_run(req *r, size_t nsteps, shm_plan plan, const void *arg, size_t es,
                    cl_event first) {
  ocal_mpi m = r->m;
  int L = m->node_size;
  /* A non-blocking collective runs beside the program's kernels, behind which a reduction
   * may wait long: its reductions go to the reductions' queue, so that the next chunk's
   * uploads do not wait for them. A blocking one (an idle device, as a rule) keeps them on
   * the upload queue, in order after their uploads: no cross-queue waits, which cost an idle
   * allreduce 2-14 %. ups: this step's uploads by node rank; got: the same, packed, for the
   * reduction to wait on; red: the reductions reading each scratch half, which its next
   * uploads wait for. A reduction has an event only where a later step reuses its half: on
   * NVIDIA's OpenCL an event on such a kernel (or a marker after it) made each data-parallel
   * step hundreds of microseconds slower (docs/measurements.md#reduction-queue). */
  int own = !r->all_blocking;
  cl_command_queue rq = own ? m->q_red : m->q_h2d;
  cl_event *ups = calloc(2 * (size_t)L, sizeof *ups), *got = ups + L, red[2] = {NULL, NULL};
  if (!ups) {
    ocal_mpi__fail(r, OCAL_OUT_OF_HOST_MEMORY, "no memory for %d events", 2 * L);
    MPI_Abort(m->comm, 1); /* the peers would wait at the node's barrier forever */
    return;
  }
  for (size_t s = 0; s < nsteps; s++) {
    shm_step st;
    memset(&st, 0, sizeof st);
    plan(r, s, &st, arg);
    size_t half = (s % 2) * m->seg_half;
    cl_event down = NULL;
    if (st.down && st.bytes && !r->cl_failed)
      ocal_mpi__cl_ok(r, clEnqueueReadBuffer(m->q_d2h, st.down, CL_FALSE, st.down_off, st.bytes,
                                             m->seg[m->node_rank] + half, first ? 1 : 0,
                                             first ? &first : NULL, &down),
                      "clEnqueueReadBuffer");
    clFlush(m->q_d2h);
    wait_release(r, &down, 1);
    wait_release(r, ups, (size_t)L); /* the previous step's uploads read the other half */
    node_sync(r);
    if (st.mode == SHM_NONE || st.bytes == 0) continue;
    if (st.mode == SHM_COPY) {
      ups[0] = upload(r, st.dst, st.dst_off, st.bytes, m->seg[st.from] + half, NULL);
    } else if (st.mode == SHM_GATHER) {
      for (int k = 0; k < L; k++)
        if (k != m->node_rank)
          ups[k] = upload(r, st.dst, st.dst_off + (size_t)k * st.stride, st.bytes,
                          m->seg[k] + half, NULL);
    } else {
      /* Peers' chunks into the scratch half of this step, in rank order without this one. */
      size_t scr = (s % 2) * (size_t)(L - 1) * m->chunk;
      cl_uint ng = 0;
      for (int k = 0, j = 0; k < L; k++)
        if (k != m->node_rank &&
            (ups[k] = upload(r, m->shm_scratch_mem,
                             m->shm_scratch_off + scr + (size_t)j++ * m->chunk, st.bytes,
                             m->seg[k] + half, red[s % 2])))
          got[ng++] = ups[k];
      if (red[s % 2]) clReleaseEvent(red[s % 2]);
      red[s % 2] = NULL;
      reduce_ordered(r, &st, scr, es, rq, own ? ng : 0, got,
                     own && s + 2 < nsteps ? &red[s % 2] : NULL);
    }
    clFlush(m->q_h2d);
  }
  wait_release(r, ups, (size_t)L);
  ocal_mpi__cl_ok(r, clFinish(m->q_h2d), "clFinish");
  node_sync(r); /* nobody's segment is reused while a peer still uploads from it */
  if (own) { /* this rank's reductions last: no peer waits for them */
    wait_release(r, red, 2);
    ocal_mpi__cl_ok(r, clFinish(m->q_red), "clFinish");
  }
  free(ups);
}

/* ---- the collectives --------------------------------------------------------------------- */

/* A buffer of n elements cut into chunks of at most m->chunk bytes, alike on every rank. */
typedef struct chunks {
  size_t n, es, K;
  cl_mem mem, mem2; /* the buffer (allreduce, broadcast, allgather's send); recv */
  size_t base, base2;
  int root;         /* broadcast's and reduce's node rank */
} chunks;

static size_t lo(const chunks *c, size_t j) { return c->n * j / c->K; }
static size_t len(const chunks *c, size_t j) { return lo(c, j + 1) - lo(c, j); }

static chunks cut(const req *r, size_t n, size_t es) {
  chunks c;
  memset(&c, 0, sizeof c);
  size_t per = r->m->chunk / es;
  c.n = n;
  c.es = es;
  c.K = (n + per - 1) / per;
  if (c.K == 0) c.K = 1;
  return c;
}

/* Allreduce on one node: every rank downloads chunk s, every rank reduces all of them. */
static void plan_allreduce(req *r, size_t s, shm_step *st, const void *arg) {
  const chunks *c = arg;
  (void)r;
  st->bytes = len(c, s) * c->es;
  st->down = st->own = st->dst = c->mem;
  st->down_off = st->own_off = st->dst_off = c->base + lo(c, s) * c->es;
  st->mode = SHM_REDUCE;
}

/* Reduce into node rank c->root: the others download, it reduces. */
static void plan_reduce(req *r, size_t s, shm_step *st, const void *arg) {
  const chunks *c = arg;
  st->bytes = len(c, s) * c->es;
  size_t off = c->base + lo(c, s) * c->es;
  if (r->m->node_rank != c->root) {
    st->down = c->mem;
    st->down_off = off;
    return;
  }
  st->own = st->dst = c->mem;
  st->own_off = st->dst_off = off;
  st->mode = SHM_REDUCE;
}

/* Broadcast from node rank c->root. */
static void plan_broadcast(req *r, size_t s, shm_step *st, const void *arg) {
  const chunks *c = arg;
  st->bytes = len(c, s) * c->es;
  size_t off = c->base + lo(c, s) * c->es;
  if (r->m->node_rank == c->root) {
    st->down = c->mem;
    st->down_off = off;
    return;
  }
  st->mode = SHM_COPY;
  st->from = c->root;
  st->dst = c->mem;
  st->dst_off = off;
}

/* Allgather: chunk s of every rank's send to its place in every recv. */
static void plan_allgather(req *r, size_t s, shm_step *st, const void *arg) {
  const chunks *c = arg;
  (void)r;
  st->bytes = len(c, s) * c->es;
  st->down = c->mem;
  st->down_off = c->base + lo(c, s) * c->es;
  st->mode = SHM_GATHER;
  st->dst = c->mem2;
  st->dst_off = c->base2 + lo(c, s) * c->es;
  st->stride = c->n * c->es;
}

/* Reduce-scatter: step s = b * K + j reduces chunk j of block b into node rank b's recv. */
static void plan_reduce_scatter(req *r, size_t s, shm_step *st, const void *arg) {
  const chunks *c = arg;
  size_t b = s / c->K, j = s % c->K;
  st->bytes = len(c, j) * c->es;
  size_t off = c->base + (b * c->n + lo(c, j)) * c->es;
  if ((size_t)r->m->node_rank != b) {
    st->down = c->mem;
    st->down_off = off;
    return;
  }
  st->own = c->mem;
  st->own_off = off;
  st->dst = c->mem2;
  st->dst_off = c->base2 + lo(c, j) * c->es;
  st->mode = SHM_REDUCE;
}

/* Part k of L of a chunk of len elements: [part_lo(k), part_lo(k + 1)). */
static size_t part_lo(size_t len, int L, int k) { return len * (size_t)k / (size_t)L; }

/* Downloads bytes of mem at off into the window at dst after `dep` (NULL: nothing); *ev
 * receives the copy's event. */
static void download(req *r, cl_mem mem, size_t off, size_t bytes, void *dst, cl_event dep,
                     cl_event *ev) {
  if (bytes == 0 || r->cl_failed) return;
  ocal_mpi__cl_ok(r, clEnqueueReadBuffer(r->m->q_d2h, mem, CL_FALSE, off, bytes, dst, dep ? 1 : 0,
                                         dep ? &dep : NULL, ev),
                  "clEnqueueReadBuffer");
}

/* Allreduce on one node of three or more ranks, as a reduce-scatter and an allgather through
 * the window: node rank k reduces part k of every chunk (its peers' parts uploaded from their
 * segments) and puts the result back into its segment, from where the peers upload it. Each
 * device's bus then carries (L + 1) / L of the buffer down and 2 (L - 1) / L up, where every
 * rank reducing every chunk itself carries it once down and L - 1 times up. Step s downloads
 * chunk s and this rank's reduced part of chunk s - 1, so the two phases overlap. Part k is
 * reduced by rank k alone and copied to the others: every rank ends with the same bits. */
static void shm_allreduce_parts(req *r, const chunks *c, cl_event first) {
  ocal_mpi m = r->m;
  int L = m->node_size, me = m->node_rank;
  size_t es = c->es;
  /* ups: uploads of the peers' parts of chunk s (by node rank), then of their reduced parts
   * of chunk s - 1; got: the first ones, packed, for the reduction to wait on. */
  cl_event *ups = calloc(3 * (size_t)L, sizeof *ups), *got = ups + 2 * L, reduced = NULL;
  if (!ups) {
    ocal_mpi__fail(r, OCAL_OUT_OF_HOST_MEMORY, "no memory for %d events", 3 * L);
    MPI_Abort(m->comm, 1); /* the peers would wait at the node's barrier forever */
    return;
  }
  for (size_t s = 0; s <= c->K; s++) {
    size_t half = (s % 2) * m->seg_half;
    cl_event down[2] = {NULL, NULL};
    if (s < c->K)
      download(r, c->mem, c->base + lo(c, s) * es, len(c, s) * es, m->seg[me] + half, first,
               &down[0]);
    if (s > 0) {
      size_t n = len(c, s - 1), p0 = part_lo(n, L, me), pn = part_lo(n, L, me + 1) - p0;
      download(r, c->mem, c->base + (lo(c, s - 1) + p0) * es, pn * es,
               m->seg[me] + half + m->chunk, reduced, &down[1]);
    }
    clFlush(m->q_d2h);
    wait_release(r, down, 2);
    if (reduced) clReleaseEvent(reduced);
    reduced = NULL;
    wait_release(r, ups, 2 * (size_t)L); /* the previous step's uploads read the other half */
    node_sync(r);
    if (s < c->K) { /* this rank's part of chunk s: the peers' parts into scratch, reduced */
      size_t n = len(c, s), p0 = part_lo(n, L, me), pn = part_lo(n, L, me + 1) - p0;
      size_t scr = (s % 2) * (size_t)(L - 1) * m->chunk;
      cl_uint ng = 0;
      /* The reduction that last read this scratch half (chunk s - 2) is done: the download
       * of its result, which waited for it, completed in the previous step. */
      for (int k = 0, j = 0; k < L && pn; k++)
        if (k != me &&
            (ups[k] = upload(r, m->shm_scratch_mem,
                             m->shm_scratch_off + scr + (size_t)j++ * m->chunk, pn * es,
                             m->seg[k] + half + p0 * es, NULL)))
          got[ng++] = ups[k];
      shm_step st;
      memset(&st, 0, sizeof st);
      st.dst = st.own = c->mem;
      st.dst_off = st.own_off = c->base + (lo(c, s) + p0) * es;
      st.bytes = pn * es;
      /* On the reductions' queue: the uploads of the peers' reduced parts of chunk s - 1,
       * queued next, need not wait for it. */
      if (pn) reduce_ordered(r, &st, scr, es, m->q_red, ng, got, &reduced);
    }
    if (s > 0) { /* the peers' reduced parts of chunk s - 1 */
      size_t n = len(c, s - 1);
      for (int k = 0; k < L; k++)
        if (k != me) {
          size_t p0 = part_lo(n, L, k), pn = part_lo(n, L, k + 1) - p0;
          ups[L + k] = upload(r, c->mem, c->base + (lo(c, s - 1) + p0) * es, pn * es,
                              m->seg[k] + half + m->chunk, NULL);
        }
    }
    clFlush(m->q_h2d);
  }
  wait_release(r, ups, 2 * (size_t)L);
  if (reduced) clReleaseEvent(reduced);
  ocal_mpi__cl_ok(r, clFinish(m->q_h2d), "clFinish");
  node_sync(r); /* nobody's segment is reused while a peer still uploads from it */
  free(ups);
}

void ocal_mpi__shared_allreduce(req *r, cl_mem mem, size_t base, size_t es, size_t n) {
  ocal_mpi m = r->m;
  chunks c = cut(r, n, es);
  c.mem = mem;
  c.base = base;
  /* Three or more ranks, blocking: the reduce-scatter moves the fewest bytes. Its steps wait
   * for each rank's reduction kernel, which a busy device runs only after the kernels ahead
   * of it, so a non-blocking allreduce (meant to run beside compute) has every rank reduce
   * every chunk instead: no peer then waits for a kernel. Two ranks: each uploading its
   * peer's chunk and reducing moves the fewest bytes. */
  if (m->nodes == 1 && m->node_size >= 3 && r->all_blocking) {
    shm_allreduce_parts(r, &c, r->start);
    return;
  }
  if (m->nodes == 1) {
    shm_run(r, c.K, plan_allreduce, &c, es, r->start);
    return;
  }
  /* Across nodes: into the node's first rank, the ring between the first ranks, back out. */
  c.root = 0;
  shm_run(r, c.K, plan_reduce, &c, es, r->start);
  if (m->leaders != MPI_COMM_NULL) {
    r->xcomm = m->leaders;
    MPI_Comm_rank(m->leaders, &r->xrank);
    MPI_Comm_size(m->leaders, &r->xsize);
    ocal_mpi__ring_allreduce(r, mem, base, es, n, NULL);
    ocal_mpi__cl_ok(r, clFinish(m->q_h2d), "clFinish");
  }
  shm_run(r, c.K, plan_broadcast, &c, es, NULL);
}

void ocal_mpi__shared_broadcast(req *r, cl_mem mem, size_t base, size_t es, size_t n) {
  chunks c = cut(r, n, es);
  c.mem = mem;
  c.base = base;
  c.root = r->root;
  shm_run(r, c.K, plan_broadcast, &c, es, r->start);
}

void ocal_mpi__shared_allgather(req *r, size_t es, size_t n) {
  ocal_mpi m = r->m;
  chunks c = cut(r, n, es);
  ocal_buffer_get_cl_mem(r->a, &c.mem, &c.base);
  ocal_buffer_get_cl_mem(r->b, &c.mem2, &c.base2);
  /* This rank's own part: a device copy, ordered before the steps' uploads on that queue. */
  if (!r->cl_failed)
    ocal_mpi__cl_ok(r, clEnqueueCopyBuffer(m->q_h2d, c.mem, c.mem2, c.base,
                                           c.base2 + (size_t)m->node_rank * n * es, n * es, 0,
                                           NULL, NULL),
                    "clEnqueueCopyBuffer");
  shm_run(r, c.K, plan_allgather, &c, es, r->start);
}

void ocal_mpi__shared_reduce_scatter(req *r, size_t es, size_t n) {
  chunks c = cut(r, n, es);
  ocal_buffer_get_cl_mem(r->a, &c.mem, &c.base);
  ocal_buffer_get_cl_mem(r->b, &c.mem2, &c.base2);
  shm_run(r, c.K * (size_t)r->m->node_size, plan_reduce_scatter, &c, es, r->start);
}
