/* libocal-mpi — the collectives themselves: the ranks' common check, then chunks pipelined
 * through pinned host memory (device -> host on one queue, MPI, host -> device and the device
 * reduction on another), ring reduce-scatter and allgather, a chunked broadcast, and the
 * point-to-point exchange.
 *
 * Runs on the progress thread (or on the calling thread without MPI_THREAD_MULTIPLE), and is
 * the only code that calls MPI on the duplicated communicator after creation, so collectives
 * reach MPI in the order they were called on every rank. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

typedef struct ocal_mpi_request_s req;

#define fail ocal_mpi__fail
#define cl_ok ocal_mpi__cl_ok
#define mpi_check ocal_mpi__mpi_check

/* Records the first failure of a collective (the waiting thread turns it into its last error). */
void ocal_mpi__fail(req *r, ocal_status status, const char *fmt, ...) {
  if (r->status != OCAL_OK) return;
  r->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
}

/* Checks an OpenCL call. After a failure the collective still sends and receives every
 * message (the other ranks would wait for them forever otherwise) but queues no more device
 * work; the failure is reported on this rank. */
int ocal_mpi__cl_ok(req *r, cl_int err, const char *call) {
  if (err == CL_SUCCESS) return 1;
  if (!r->cl_failed)
    fail(r, OCAL_OPENCL_ERROR, "%s failed with %s during the collective on %s", call,
         ocal_cl_error_name(err), r->m->device_id);
  r->cl_failed = 1;
  return 0;
}

/* Waits for an event, releases it and clears it; NULL is nothing to wait for. */
static void ev_wait(req *r, cl_event *e) {
  if (!*e) return;
  cl_ok(r, clWaitForEvents(1, e), "clWaitForEvents");
  clReleaseEvent(*e);
  *e = NULL;
}

static void ev_release(cl_event *e) {
  if (*e) clReleaseEvent(*e);
  *e = NULL;
}

static cl_event ev_retain(cl_event e) {
  if (e) clRetainEvent(e);
  return e;
}

/* Device -> pinned host memory on the download queue, after `dep` (may be NULL). */
static cl_event d2h(req *r, cl_mem mem, size_t off, size_t bytes, void *dst, cl_event dep) {
  if (bytes == 0 || r->cl_failed) return NULL;
  cl_event e = NULL;
  if (!cl_ok(r, clEnqueueReadBuffer(r->m->q_d2h, mem, CL_FALSE, off, bytes, dst, dep ? 1 : 0,
                                    dep ? &dep : NULL, &e),
             "clEnqueueReadBuffer"))
    return NULL;
  clFlush(r->m->q_d2h);
  return e;
}

/* Pinned host memory -> device on the upload queue (in order with the reductions). */
static cl_event h2d(req *r, cl_mem mem, size_t off, size_t bytes, const void *src) {
  if (bytes == 0 || r->cl_failed) return NULL;
  cl_event e = NULL;
  if (!cl_ok(r, clEnqueueWriteBuffer(r->m->q_h2d, mem, CL_FALSE, off, bytes, src, 0, NULL, &e),
             "clEnqueueWriteBuffer"))
    return NULL;
  clFlush(r->m->q_h2d);
  return e;
}

/* Device copy on the upload queue. */
static cl_event dcopy(req *r, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off,
                      size_t bytes) {
  if (bytes == 0 || r->cl_failed) return NULL;
  cl_event e = NULL;
  if (!cl_ok(r, clEnqueueCopyBuffer(r->m->q_h2d, src, dst, src_off, dst_off, bytes, 0, NULL, &e),
             "clEnqueueCopyBuffer"))
    return NULL;
  return e;
}

/* acc[acc_el + i] (op)= scratch[scr_el + i] for i < n, on the upload queue, so after the
 * chunk's upload into scratch. Offsets in elements. */
static cl_event accumulate(req *r, cl_mem acc, size_t acc_el, size_t scr_el, size_t n) {
  if (n == 0 || r->cl_failed) return NULL;
  ocal_mpi m = r->m;
  cl_kernel k = m->cl_kernels[r->tidx][r->op];
  cl_ulong a_off = acc_el, s_off = scr_el, cnt = n;
  if (!cl_ok(r, clSetKernelArg(k, 0, sizeof acc, &acc), "clSetKernelArg") ||
      !cl_ok(r, clSetKernelArg(k, 1, sizeof a_off, &a_off), "clSetKernelArg") ||
      !cl_ok(r, clSetKernelArg(k, 2, sizeof m->scratch_mem, &m->scratch_mem), "clSetKernelArg") ||
      !cl_ok(r, clSetKernelArg(k, 3, sizeof s_off, &s_off), "clSetKernelArg") ||
      !cl_ok(r, clSetKernelArg(k, 4, sizeof cnt, &cnt), "clSetKernelArg"))
    return NULL;
  /* Grid-stride: enough items to fill a GPU, never more than the chunk needs. */
  size_t global = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
  global = (global + m->group - 1) / m->group * m->group;
  cl_event e = NULL;
  if (!cl_ok(r, clEnqueueNDRangeKernel(m->q_h2d, k, 1, NULL, &global, NULL, 0, NULL, &e),
             "clEnqueueNDRangeKernel"))
    return NULL;
  clFlush(m->q_h2d);
  return e;
}

typedef struct {
  size_t off, len; /* elements, from the start of the buffer */
} seg;

/* Chunk j of K of a segment: [lo(j), lo(j + 1)). Every rank cuts a segment the same way. */
static size_t chunk_lo(seg s, size_t K, size_t j) { return s.off + s.len * j / K; }
static size_t chunk_len(seg s, size_t K, size_t j) {
  return s.len * (j + 1) / K - s.len * j / K;
}

void ocal_mpi__mpi_check(req *r, int err, const char *call) {
  if (err == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, text, &len);
  fail(r, OCAL_INTERNAL, "%s failed: %s", call, text);
}

/* One ring step, pipelined over K chunks with up to `slots` in flight: sends segment S of
 * the buffer (mem, at byte offset base) to rank `to` while receiving segment R from `from`;
 * a received chunk is added into R (reduce) or written over it. deps[j] on entry guards
 * chunk j of S (its download waits for it; consumed); on exit it is the event after which
 * chunk j of R holds its new contents. The chunks of one step overlap: the download of
 * chunk j + 1, the transfer of chunk j and the upload and addition of chunk j - 1 run at
 * once. */
static void ring_step(req *r, cl_mem mem, size_t base, size_t es, seg S, seg R, size_t K, int to,
                      int from, int reduce, cl_event *deps) {
  ocal_mpi m = r->m;
  size_t W = (size_t)m->slots < K ? (size_t)m->slots : K;
  MPI_Request rq[16], sq[16];
  cl_event de[16], we[16];
  for (size_t i = 0; i < W; i++) {
    rq[i] = sq[i] = MPI_REQUEST_NULL;
    de[i] = we[i] = NULL;
  }
  for (size_t j = 0; j < K + W; j++) {
    /* Post chunk j: its receive, and its download once its send slot is free. */
    if (j < K) {
      size_t slot = j % W;
      if (j >= W) {
        mpi_check(r, MPI_Wait(&sq[slot], MPI_STATUS_IGNORE), "MPI_Wait");
        ev_wait(r, &we[slot]); /* the receive slot's last upload has read it */
      }
      mpi_check(r,
                MPI_Irecv(m->pin_recv + slot * m->chunk, (int)(chunk_len(R, K, j) * es), MPI_BYTE,
                          from, OCAL_MPI__TAG, r->xcomm, &rq[slot]),
                "MPI_Irecv");
      de[slot] = d2h(r, mem, base + chunk_lo(S, K, j) * es, chunk_len(S, K, j) * es,
                     m->pin_send + slot * m->chunk, deps[j]);
      ev_release(&deps[j]);
    }
    /* Finish chunk j - W + 1... in order: chunk c = j - (W - 1) once W are in flight. */
    if (j + 1 < W) continue;
    size_t c = j + 1 - W;
    if (c >= K) break;
    size_t slot = c % W;
    ev_wait(r, &de[slot]);
    mpi_check(r,
              MPI_Isend(m->pin_send + slot * m->chunk, (int)(chunk_len(S, K, c) * es), MPI_BYTE,
                        to, OCAL_MPI__TAG, r->xcomm, &sq[slot]),
              "MPI_Isend");
    mpi_check(r, MPI_Wait(&rq[slot], MPI_STATUS_IGNORE), "MPI_Wait");
    size_t n = chunk_len(R, K, c);
    if (reduce) {
      size_t scr = m->scratch_off + slot * m->chunk; /* bytes */
      we[slot] = h2d(r, m->scratch_mem, scr, n * es, m->pin_recv + slot * m->chunk);
      deps[c] = accumulate(r, mem, base / es + chunk_lo(R, K, c), scr / es, n);
    } else {
      we[slot] = h2d(r, mem, base + chunk_lo(R, K, c) * es, n * es, m->pin_recv + slot * m->chunk);
      deps[c] = ev_retain(we[slot]);
    }
  }
  mpi_check(r, MPI_Waitall((int)W, sq, MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (size_t i = 0; i < W; i++) {
    ev_wait(r, &we[i]);
    ev_release(&de[i]);
  }
}

/* Number of chunks for segments of at most maxlen elements. */
static size_t chunks_for(const req *r, size_t maxlen, size_t es) {
  size_t per = r->m->chunk / es;
  size_t K = (maxlen + per - 1) / per;
  return K ? K : 1;
}

static int mod(int a, int p) { return ((a % p) + p) % p; }

/* The ring collectives on one buffer of n elements cut into p segments; `own` is the segment
 * this rank holds complete after a reduce-scatter (or holds from the start, for an
 * allgather). rs: run the reduce-scatter; ag: run the allgather. */
static void ring(req *r, cl_mem mem, size_t base, size_t es, const seg *segs, int own, int rs,
                 int ag, cl_event first) {
  ocal_mpi m = r->m;
  int p = r->xsize;
  size_t maxlen = 0;
  for (int i = 0; i < p; i++)
    if (segs[i].len > maxlen) maxlen = segs[i].len;
  size_t K = chunks_for(r, maxlen, es);
  cl_event *deps = calloc(K, sizeof *deps);
  if (!deps) {
    /* Without the events, messages cannot be sequenced; nothing else is possible here. */
    fail(r, OCAL_OUT_OF_HOST_MEMORY, "no memory for %zu chunk events", K);
    MPI_Abort(m->comm, 1);
    return;
  }
  for (size_t j = 0; j < K; j++) deps[j] = ev_retain(first);
  int to = mod(r->xrank + 1, p), from = mod(r->xrank - 1, p);
  /* Reduce-scatter: at step s, send the partial sums of segment own-1-s... so that after
   * p - 1 steps segment `own` has every rank's contribution. */
  if (rs)
    for (int s = 0; s < p - 1; s++)
      ring_step(r, mem, base, es, segs[mod(own - 1 - s, p)], segs[mod(own - 2 - s, p)], K, to,
                from, 1, deps);
  if (ag)
    for (int s = 0; s < p - 1; s++)
      ring_step(r, mem, base, es, segs[mod(own - s, p)], segs[mod(own - s - 1, p)], K, to, from,
                0, deps);
  for (size_t j = 0; j < K; j++) ev_release(&deps[j]);
  free(deps);
}

/* The p segments of a collective (no variable-length arrays in this code base). */
static seg *segs_new(req *r, int p) {
  seg *s = malloc((size_t)p * sizeof *s);
  if (!s) {
    fail(r, OCAL_OUT_OF_HOST_MEMORY, "no memory for %d segments", p);
    MPI_Abort(r->m->comm, 1); /* the peers would wait for this rank's messages forever */
  }
  return s;
}

void ocal_mpi__ring_allreduce(req *r, cl_mem mem, size_t base, size_t es, size_t n,
                              cl_event first) {
  int p = r->xsize;
  seg *segs = segs_new(r, p);
  if (!segs) return;
  for (int i = 0; i < p; i++) {
    segs[i].off = n * (size_t)i / (size_t)p;
    segs[i].len = n * (size_t)(i + 1) / (size_t)p - segs[i].off;
  }
  /* After the reduce-scatter rank r holds segment r, which the allgather then spreads. */
  ring(r, mem, base, es, segs, r->xrank, 1, 1, first);
  free(segs);
}

static MPI_Datatype mpi_type(const req *r) {
  return r->tidx == 0 ? MPI_FLOAT : r->tidx == 1 ? MPI_DOUBLE
       : r->tidx == 2 ? MPI_INT32_T : MPI_INT64_T;
}

static MPI_Op mpi_op(const req *r) {
  return r->op == OCAL_MPI_SUM ? MPI_SUM : r->op == OCAL_MPI_MAX ? MPI_MAX : MPI_MIN;
}

/* One MPI_Allreduce of host memory: below a measured size the ring's and the shared path's
 * steps cost more than the bytes. */
static void run_small_allreduce(req *r, cl_mem mem, size_t base, size_t es, size_t n) {
  ocal_mpi m = r->m;
  size_t bytes = n * es;
  unsigned char *h = bytes <= (size_t)m->slots * m->chunk ? m->pin_send : malloc(bytes);
  if (!h) {
    fail(r, OCAL_OUT_OF_HOST_MEMORY, "no host memory for %zu bytes", bytes);
    MPI_Abort(m->comm, 1); /* the peers would wait in MPI_Allreduce forever */
    return;
  }
  cl_event e = d2h(r, mem, base, bytes, h, r->start);
  ev_wait(r, &e);
  mpi_check(r, MPI_Allreduce(MPI_IN_PLACE, h, (int)n, mpi_type(r), mpi_op(r), m->comm),
            "MPI_Allreduce");
  e = h2d(r, mem, base, bytes, h);
  ev_wait(r, &e);
  if (h != m->pin_send) free(h);
}

static void run_allgather(req *r, size_t es, size_t n) {
  ocal_mpi m = r->m;
  cl_mem smem, rmem;
  size_t soff, roff;
  ocal_buffer_get_cl_mem(r->a, &smem, &soff);
  ocal_buffer_get_cl_mem(r->b, &rmem, &roff);
  if (!rmem) return;
  cl_event copied = dcopy(r, smem, soff, rmem, roff + (size_t)m->rank * n * es, n * es);
  int p = m->size;
  seg *segs = segs_new(r, p);
  if (!segs) return;
  for (int i = 0; i < p; i++) {
    segs[i].off = (size_t)i * n;
    segs[i].len = n;
  }
  ring(r, rmem, roff, es, segs, r->xrank, 0, 1, copied ? copied : r->start);
  free(segs);
  ev_release(&copied);
}

static void run_reduce_scatter(req *r, size_t es, size_t n) {
  ocal_mpi m = r->m;
  cl_mem smem, rmem, tmem;
  size_t soff, roff, toff;
  ocal_buffer_get_cl_mem(r->a, &smem, &soff);
  ocal_buffer_get_cl_mem(r->b, &rmem, &roff);
  ocal_buffer_get_cl_mem(r->tmp, &tmem, &toff);
  if (!rmem) return;
  int p = m->size;
  cl_event copied = dcopy(r, smem, soff, tmem, toff, (size_t)p * n * es);
  seg *segs = segs_new(r, p);
  if (!segs) return;
  for (int i = 0; i < p; i++) {
    segs[i].off = (size_t)i * n;
    segs[i].len = n;
  }
  ring(r, tmem, toff, es, segs, r->xrank, 1, 0, copied ? copied : r->start);
  free(segs);
  ev_release(&copied);
  /* The upload queue is in order: this copy follows the last addition into block rank. */
  cl_event out = dcopy(r, tmem, toff + (size_t)m->rank * n * es, rmem, roff, n * es);
  ev_release(&out);
}

/* Chunked broadcast: the root downloads chunk j + 1 while MPI_Bcast carries chunk j; the
 * others upload chunk j while the next one arrives. MPI picks the broadcast's tree. */
static void run_broadcast(req *r, size_t nbytes) {
  ocal_mpi m = r->m;
  cl_mem mem;
  size_t base;
  ocal_buffer_get_cl_mem(r->a, &mem, &base);
  seg all = {0, nbytes};
  size_t K = chunks_for(r, nbytes, 1);
  size_t W = (size_t)m->slots < K ? (size_t)m->slots : K;
  cl_event ev[16];
  for (size_t i = 0; i < W; i++) ev[i] = NULL;
  int root = m->rank == r->root;
  if (root)
    for (size_t j = 0; j < W; j++)
      ev[j] = d2h(r, mem, base + chunk_lo(all, K, j), chunk_len(all, K, j),
                  m->pin_send + j * m->chunk, r->start);
  for (size_t j = 0; j < K; j++) {
    size_t slot = j % W;
    unsigned char *pin = (root ? m->pin_send : m->pin_recv) + slot * m->chunk;
    ev_wait(r, &ev[slot]);
    mpi_check(r, MPI_Bcast(pin, (int)chunk_len(all, K, j), MPI_BYTE, r->root, m->comm),
              "MPI_Bcast");
    if (root) {
      if (j + W < K)
        ev[slot] = d2h(r, mem, base + chunk_lo(all, K, j + W), chunk_len(all, K, j + W), pin,
                       r->start);
    } else {
      ev[slot] = h2d(r, mem, base + chunk_lo(all, K, j), chunk_len(all, K, j), pin);
    }
  }
  for (size_t i = 0; i < W; i++) ev_wait(r, &ev[i]);
}

/* Point-to-point: every receive posted, every send downloaded and sent, every received part
 * uploaded. Parts go through the pinned slots while they fit, else through ordinary memory. */
static void run_exchange(req *r) {
  ocal_mpi m = r->m;
  size_t total = r->nsend + r->nrecv, send_bytes = 0, recv_bytes = 0;
  size_t *hoff = calloc(total ? total : 1, sizeof *hoff);
  MPI_Request *mq = malloc((total ? total : 1) * sizeof *mq);
  cl_event *ev = calloc(total ? total : 1, sizeof *ev);
  for (size_t i = 0; i < total; i++) {
    ocal_dtype dt;
    ocal_buffer_get_dtype(r->xfers[i].buf, &dt);
    size_t bytes = r->xfers[i].count * ocal_dtype_size(dt);
    if (hoff) {
      size_t *acc = i < r->nsend ? &send_bytes : &recv_bytes;
      hoff[i] = *acc;
      *acc += (bytes + 63) / 64 * 64;
    }
  }
  size_t room = (size_t)m->slots * m->chunk;
  unsigned char *sbuf = send_bytes <= room ? m->pin_send : malloc(send_bytes ? send_bytes : 1);
  unsigned char *rbuf = recv_bytes <= room ? m->pin_recv : malloc(recv_bytes ? recv_bytes : 1);
  if (!hoff || !mq || !ev || !sbuf || !rbuf) {
    fail(r, OCAL_OUT_OF_HOST_MEMORY, "no host memory to stage %zu + %zu bytes", send_bytes,
         recv_bytes);
    MPI_Abort(m->comm, 1); /* the peers would wait for these messages forever */
    return;
  }
  for (size_t i = r->nsend; i < total; i++) {
    ocal_mpi_transfer *t = &r->xfers[i];
    ocal_dtype dt;
    ocal_buffer_get_dtype(t->buf, &dt);
    mpi_check(r,
              MPI_Irecv(rbuf + hoff[i], (int)(t->count * ocal_dtype_size(dt)), MPI_BYTE, t->peer,
                        t->tag, m->comm, &mq[i]),
              "MPI_Irecv");
  }
  for (size_t i = 0; i < r->nsend; i++) {
    ocal_mpi_transfer *t = &r->xfers[i];
    ocal_dtype dt;
    cl_mem mem;
    size_t off;
    ocal_buffer_get_dtype(t->buf, &dt);
    ocal_buffer_get_cl_mem(t->buf, &mem, &off);
    size_t es = ocal_dtype_size(dt);
    ev[i] = d2h(r, mem, off + t->offset * es, t->count * es, sbuf + hoff[i], r->start);
  }
  for (size_t i = 0; i < r->nsend; i++) {
    ocal_mpi_transfer *t = &r->xfers[i];
    ocal_dtype dt;
    ocal_buffer_get_dtype(t->buf, &dt);
    ev_wait(r, &ev[i]);
    mpi_check(r,
              MPI_Isend(sbuf + hoff[i], (int)(t->count * ocal_dtype_size(dt)), MPI_BYTE, t->peer,
                        t->tag, m->comm, &mq[i]),
              "MPI_Isend");
  }
  for (size_t i = r->nsend; i < total; i++) {
    ocal_mpi_transfer *t = &r->xfers[i];
    ocal_dtype dt;
    cl_mem mem;
    size_t off;
    mpi_check(r, MPI_Wait(&mq[i], MPI_STATUS_IGNORE), "MPI_Wait");
    ocal_buffer_get_dtype(t->buf, &dt);
    ocal_buffer_get_cl_mem(t->buf, &mem, &off);
    size_t es = ocal_dtype_size(dt);
    ev[i] = h2d(r, mem, off + t->offset * es, t->count * es, rbuf + hoff[i]);
  }
  if (r->nsend) mpi_check(r, MPI_Waitall((int)r->nsend, mq, MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (size_t i = 0; i < total; i++) ev_wait(r, &ev[i]);
  if (sbuf != m->pin_send) free(sbuf);
  if (rbuf != m->pin_recv) free(rbuf);
  free(hoff);
  free(mq);
  free(ev);
}

/* The ranks' common check: one MPI_Allreduce (MPI_MAX) of each field and its negation gives
 * every field's maximum and minimum on every rank; a field whose two differ was not the same
 * on every rank, and every rank then fails alike instead of waiting for messages that the
 * others will never send. It is non-blocking (check_post, then check_end), so that a
 * collective can queue its first device copy while the check travels. */
enum { NF = 8, BLOCKING = 6 };
typedef struct check_state {
  long long f[NF], v[2 * NF];
  MPI_Request rq;
} check_state;

/* The name of value v of check field i: the collective (0), element type (2), operation (4). */
static const char *field_name(int i, long long v) {
  static const char *const kinds[] = {"?", "allreduce", "broadcast", "allgather",
                                      "reduce-scatter", "exchange"};
  if (i == 0) return v >= 1 && v <= JOB_EXCHANGE ? kinds[v] : "?";
  if (i == 2) return ocal_dtype_name((ocal_dtype)v);
  return ocal_mpi_op_name((ocal_mpi_op)v);
}

static void check_post(req *r, check_state *c) {
  /* The last field is the status of a rank whose arguments were wrong: the greatest of them
   * becomes the status of every rank whose own arguments were right. */
  long long f[NF] = {r->kind, r->valid, r->dtype, (long long)r->count, r->op, r->root,
                     r->blocking, r->valid ? 0 : (long long)r->invalid_status};
  for (int i = 0; i < NF; i++) {
    c->f[i] = c->v[i] = f[i];
    c->v[NF + i] = -f[i];
  }
  c->rq = MPI_REQUEST_NULL;
  mpi_check(r, MPI_Iallreduce(MPI_IN_PLACE, c->v, 2 * NF, MPI_LONG_LONG, MPI_MAX, r->m->comm,
                              &c->rq),
            "MPI_Iallreduce");
}

static int check_end(req *r, check_state *c) {
  static const char *names[NF] = {"collective", "validity", "element type", "element count",
                                  "operation", "root", "blocking", "status"};
  const long long *v = c->v;
  mpi_check(r, MPI_Wait(&c->rq, MPI_STATUS_IGNORE), "MPI_Wait");
  if (r->status != OCAL_OK && !r->cl_failed) return 0;
  if (!r->valid) {
    r->status = OCAL_OK; /* the argument error outranks a copy that failed meanwhile */
    /* Its own status, which its message explains, not another faulty rank's. */
    fail(r, r->invalid_status, "%s", r->invalid_msg);
    return 0;
  }
  if (-v[NF + 1] == 0) {
    r->status = OCAL_OK;
    fail(r, (ocal_status)v[NF - 1],
         "the arguments of another rank's call were wrong (its own message says how); "
         "every rank fails this collective with its status");
    return 0;
  }
  /* Blocking and non-blocking calls may meet; the path is the non-blocking one's unless
   * every rank's call blocks. */
  r->all_blocking = -v[NF + BLOCKING] == 1;
  for (int i = 0; i < NF - 1; i++) {
    long long hi = v[i], lo = -v[NF + i];
    if (hi == lo || i == BLOCKING) continue;
    r->status = OCAL_OK;
    if (i == 0 || i == 2 || i == 4) /* by name: the ranks' lowest and highest, this rank's */
      fail(r, i == 2 ? OCAL_TYPE_MISMATCH : OCAL_INVALID_ARGUMENT,
           "the ranks' calls differ: the %s is %s on some of the %d ranks and %s on others "
           "(this rank: %s); every rank must pass the same %s",
           names[i], field_name(i, lo), r->m->size, field_name(i, hi), field_name(i, c->f[i]),
           names[i]);
    else
      fail(r, i == 3 ? OCAL_SHAPE_MISMATCH : OCAL_INVALID_ARGUMENT,
           "the ranks' calls differ: the %s ranges from %lld to %lld across the %d ranks (this "
           "rank: %lld); every rank must pass the same %s",
           names[i], lo, hi, r->m->size, c->f[i], names[i]);
    return 0;
  }
  return 1;
}

static int common_check(req *r) {
  check_state c;
  check_post(r, &c);
  return check_end(r, &c);
}

/* Every rank ends a collective with the same status: where a device call failed on one rank
 * (a download, so that its peers' results are wrong too, or its own last upload), every rank
 * fails the collective. One small MPI_Allreduce, after the collective's last message. */
static void agree(req *r) {
  int mine = (int)r->status, worst = 0;
  mpi_check(r, MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, r->m->comm), "MPI_Allreduce");
  if (r->status == OCAL_OK && worst != OCAL_OK)
    fail(r, (ocal_status)worst,
         "a device call failed on another rank during the collective (its own message says "
         "which): every rank fails the collective with its status; the data is undefined");
}

/* A blocking allreduce below m->small bytes on the calling thread (r->direct): the copies on
 * the context's own queue, in order with the caller's work (no marker, no second queue), and
 * the ranks' check travelling while the download runs. What is left is the naive path's
 * download + MPI_Allreduce + upload. */
static void run_direct_small(req *r) {
  ocal_mpi m = r->m;
  check_state c;
  cl_command_queue q = NULL;
  cl_mem mem = NULL;
  size_t base = 0, es = r->valid ? ocal_dtype_size(r->dtype) : 0, bytes = r->count * es;
  int own = bytes > (size_t)m->slots * m->chunk; /* OCAL_MPI_SMALL above the staging room */
  unsigned char *h = own ? malloc(bytes) : m->pin_send;
  if (!h) {
    fail(r, OCAL_OUT_OF_HOST_MEMORY, "no host memory for %zu bytes", bytes);
    MPI_Abort(m->comm, 1); /* the peers would wait in MPI_Allreduce forever */
    return;
  }
  check_post(r, &c);
  ocal_context_get_cl_queue(m->ctx, &q);
  if (r->valid) ocal_buffer_get_cl_mem(r->a, &mem, &base);
  if (mem && bytes)
    cl_ok(r, clEnqueueReadBuffer(q, mem, CL_TRUE, base, bytes, h, 0, NULL, NULL),
          "clEnqueueReadBuffer");
  int ok = check_end(r, &c);
  if (ok && mem && bytes && m->size > 1) {
    mpi_check(r, MPI_Allreduce(MPI_IN_PLACE, h, (int)r->count, mpi_type(r), mpi_op(r), m->comm),
              "MPI_Allreduce");
    if (!r->cl_failed)
      cl_ok(r, clEnqueueWriteBuffer(q, mem, CL_TRUE, base, bytes, h, 0, NULL, NULL),
            "clEnqueueWriteBuffer");
  }
  if (ok) agree(r); /* the check passed on every rank: every rank is here */
  if (own) free(h);
}

void ocal_mpi__run(req *r) {
  ocal_mpi m = r->m;
  if (r->direct) {
    run_direct_small(r);
    return;
  }
  if (r->kind != JOB_EXCHANGE && !common_check(r)) return;
  if (r->kind == JOB_EXCHANGE && !r->valid) {
    fail(r, r->invalid_status, "%s", r->invalid_msg);
    return;
  }
  /* Nothing libocal-mpi queues may run before the work queued on the main queue before the
   * call: the upload queue waits for its marker once, the downloads through their events. */
  if (r->start) cl_ok(r, clEnqueueBarrierWithWaitList(m->q_h2d, 1, &r->start, NULL),
                      "clEnqueueBarrierWithWaitList");
  size_t es = ocal_dtype_size(r->dtype);
  r->xcomm = m->comm;
  r->xrank = m->rank;
  r->xsize = m->size;
  /* The node-local path takes every collective where the ranks form one node, and allreduce
   * across nodes too; below m->small bytes an allreduce is one MPI_Allreduce. */
  int one_node = m->shared && m->nodes == 1;
  switch (r->kind) {
  case JOB_ALLREDUCE: {
    cl_mem mem;
    size_t base;
    ocal_buffer_get_cl_mem(r->a, &mem, &base);
    if (!mem || m->size == 1 || r->count == 0) break;
    if (r->count * es < m->small) run_small_allreduce(r, mem, base, es, r->count);
    else if (m->shared) ocal_mpi__shared_allreduce(r, mem, base, es, r->count);
    else ocal_mpi__ring_allreduce(r, mem, base, es, r->count, r->start);
    break;
  }
  case JOB_BROADCAST:
    if (r->count && m->size > 1 && one_node) {
      cl_mem mem;
      size_t base;
      ocal_buffer_get_cl_mem(r->a, &mem, &base);
      ocal_mpi__shared_broadcast(r, mem, base, es, r->count);
    } else if (r->count && m->size > 1) {
      run_broadcast(r, r->count * es);
    }
    break;
  case JOB_ALLGATHER:
    if (r->count && one_node) ocal_mpi__shared_allgather(r, es, r->count);
    else if (r->count) run_allgather(r, es, r->count);
    break;
  case JOB_REDUCE_SCATTER:
    if (r->count && one_node) ocal_mpi__shared_reduce_scatter(r, es, r->count);
    else if (r->count) run_reduce_scatter(r, es, r->count);
    break;
  case JOB_EXCHANGE:
    run_exchange(r);
    break;
  }
  cl_ok(r, clFinish(m->q_h2d), "clFinish");
  cl_ok(r, clFinish(m->q_d2h), "clFinish");
  if (r->kind != JOB_EXCHANGE) agree(r);
}
