/* ocal — pinned host memory, staged transfers, and transfers on a second queue. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"

/* ---- pinned blocks (the portable way: CL_MEM_ALLOC_HOST_PTR, then map) -------------------- */

/* A failed step of pinning: what the driver could not find is host memory to pin, whatever
 * its code says (drivers differ in which step fails: the buffer's creation or its map). */
static ocal_status pin_fail(ocal_context ctx, cl_int err, const char *step, size_t bytes,
                            const char *fn) {
  if (err == CL_INVALID_BUFFER_SIZE || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
      err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, fn,
                      "device '%s' could not pin %zu bytes of host memory (%s failed with %s): "
                      "ask for less",
                      ctx->info.name, bytes, step, ocal_cl_error_name(err));
  return ocal__cl_fail(ctx->info.name, err, step, fn);
}

static ocal_status pin(ocal_context ctx, size_t bytes, cl_mem *mem, void **ptr, const char *fn) {
  cl_int err;
  *mem = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    *mem = NULL;
    return pin_fail(ctx, err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", bytes, fn);
  }
  *ptr = clEnqueueMapBuffer(ctx->queue, *mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                            NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(*mem);
    *mem = NULL;
    *ptr = NULL;
    return pin_fail(ctx, err, "clEnqueueMapBuffer", bytes, fn);
  }
  return OCAL_OK;
}

static void unpin(ocal_context ctx, cl_mem mem, void *ptr) {
  if (clEnqueueUnmapMemObject(ctx->queue, mem, ptr, 0, NULL, NULL) == CL_SUCCESS)
    clFinish(ctx->queue);
  clReleaseMemObject(mem);
}

ocal_status ocal_pinned_alloc(ocal_context ctx, size_t bytes, void **ptr) {
  if (!ptr) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ptr (the out-parameter) must not be NULL");
  *ptr = NULL;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (bytes == 0) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "bytes must be more than 0");
  ocal__pinned *p = calloc(1, sizeof *p);
  if (!p) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for a pinned block");
  if ((status = pin(ctx, bytes, &p->mem, &p->ptr, __func__)) != OCAL_OK) {
    free(p);
    return status;
  }
  p->bytes = bytes;
  struct ocal__memory *m = ctx->memory;
  pthread_mutex_lock(&m->lock);
  p->next = m->pinned;
  m->pinned = p;
  pthread_mutex_unlock(&m->lock);
  ocal__context_retain(ctx); /* like a buffer, pinned memory keeps its context */
  *ptr = p->ptr;
  return OCAL_OK;
}

ocal_status ocal_pinned_free(ocal_context ctx, void *ptr) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!ptr) return OCAL_OK;
  struct ocal__memory *m = ctx->memory;
  pthread_mutex_lock(&m->lock);
  ocal__pinned **pp = &m->pinned;
  while (*pp && (*pp)->ptr != ptr) pp = &(*pp)->next;
  ocal__pinned *p = *pp;
  if (p) *pp = p->next;
  pthread_mutex_unlock(&m->lock);
  if (!p)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "%p is not an address that ocal_pinned_alloc returned in this context "
                     "(freed already?)", ptr);
  unpin(ctx, p->mem, p->ptr);
  free(p);
  ocal__context_unref(ctx);
  return OCAL_OK;
}

/* The pinned block that holds [ptr, ptr + bytes), if any. */
static int pinned_find(ocal_context ctx, const void *ptr, size_t bytes, cl_mem *mem,
                       size_t *offset) {
  struct ocal__memory *m = ctx->memory;
  int found = 0;
  uintptr_t a = (uintptr_t)ptr;
  pthread_mutex_lock(&m->lock);
  for (ocal__pinned *p = m->pinned; p; p = p->next) {
    uintptr_t b = (uintptr_t)p->ptr;
    if (a >= b && a - b < p->bytes && bytes <= p->bytes - (a - b)) {
      found = 1;
      if (mem) *mem = p->mem;
      if (offset) *offset = (size_t)(a - b);
      break;
    }
  }
  pthread_mutex_unlock(&m->lock);
  return found;
}

ocal_status ocal_pinned_query(ocal_context ctx, const void *ptr, int *pinned, cl_mem *mem,
                              size_t *offset) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!pinned) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "pinned must not be NULL");
  if (mem) *mem = NULL;
  if (offset) *offset = 0;
  *pinned = ptr ? pinned_find(ctx, ptr, 1, mem, offset) : 0;
  return OCAL_OK;
}

/* ---- staged transfers ------------------------------------------------------------------ */

/* A transfer is split into one contiguous part per thread; each thread moves its part chunk by
 * chunk through its own two pinned slots: it copies chunk i on the host while chunk i-1
 * crosses the bus. The host copy is what limits a single thread (below the driver's own
 * pageable path on NVIDIA: docs/measurements.md#staging), so several threads copy at once;
 * the DMA engine serves them in turn on the in-order main queue. */
typedef struct stage_part {
  ocal_context ctx;
  int write;
  cl_mem mem;
  size_t origin;        /* byte offset of the part in mem */
  unsigned char *host;  /* the part in host memory */
  size_t bytes;
  cl_mem *smem;         /* two slots */
  void **sptr;
  size_t chunk;
  cl_int err;
  const char *call;
} stage_part;

static void *stage_run(void *arg) {
  stage_part *p = arg;
  cl_command_queue q = p->ctx->queue;
  const size_t nchunks = (p->bytes + p->chunk - 1) / p->chunk;
  cl_event ev[2] = {NULL, NULL};
  cl_int err = CL_SUCCESS;
  const char *call = NULL;
  if (p->write) {
    for (size_t i = 0; i < nchunks && err == CL_SUCCESS; i++) {
      int s = (int)(i % 2);
      size_t off = i * p->chunk, n = p->bytes - off < p->chunk ? p->bytes - off : p->chunk;
      if (ev[s]) {
        err = clWaitForEvents(1, &ev[s]);
        clReleaseEvent(ev[s]);
        ev[s] = NULL;
        if (err != CL_SUCCESS) {
          call = "clWaitForEvents";
          break;
        }
      }
      memcpy(p->sptr[s], p->host + off, n);
      err = clEnqueueWriteBuffer(q, p->mem, CL_FALSE, p->origin + off, n, p->sptr[s], 0, NULL,
                                 &ev[s]);
      if (err != CL_SUCCESS) call = "clEnqueueWriteBuffer";
      else if ((err = clFlush(q)) != CL_SUCCESS) call = "clFlush";
    }
  } else {
    size_t queued = 0;
    for (size_t i = 0; i < nchunks && err == CL_SUCCESS; i++) {
      while (queued < nchunks && queued < i + 2 && err == CL_SUCCESS) {
        int s = (int)(queued % 2);
        size_t off = queued * p->chunk, n = p->bytes - off < p->chunk ? p->bytes - off : p->chunk;
        err = clEnqueueReadBuffer(q, p->mem, CL_FALSE, p->origin + off, n, p->sptr[s], 0, NULL,
                                  &ev[s]);
        if (err != CL_SUCCESS) call = "clEnqueueReadBuffer";
        else if ((err = clFlush(q)) != CL_SUCCESS) call = "clFlush";
        queued++;
      }
      if (err != CL_SUCCESS) break;
      int s = (int)(i % 2);
      size_t off = i * p->chunk, n = p->bytes - off < p->chunk ? p->bytes - off : p->chunk;
      err = clWaitForEvents(1, &ev[s]);
      clReleaseEvent(ev[s]);
      ev[s] = NULL;
      if (err != CL_SUCCESS) {
        call = "clWaitForEvents";
        break;
      }
      memcpy(p->host + off, p->sptr[s], n);
    }
  }
  /* A blocking transfer is complete when every chunk is. */
  for (int i = 0; i < 2; i++) {
    if (!ev[i]) continue;
    cl_int e = clWaitForEvents(1, &ev[i]);
    if (e != CL_SUCCESS && err == CL_SUCCESS) {
      err = e;
      call = "clWaitForEvents";
    }
    clReleaseEvent(ev[i]);
  }
  p->err = err;
  p->call = call;
  return NULL;
}

/* Allocates the staging slots of `threads` threads on first use; staging_lock held. */
static int staging_ready(ocal_context ctx, int threads) {
  struct ocal__memory *m = ctx->memory;
  for (int i = 0; i < 2 * threads; i++) {
    if (m->stage_mem[i]) continue;
    if (pin(ctx, m->chunk, &m->stage_mem[i], &m->stage_ptr[i], "staged transfer") != OCAL_OK) {
      /* Pinned memory is scarce on some systems: transfer directly instead. */
      m->staging = 0;
      return 0;
    }
  }
  return 1;
}

int ocal__staged_transfer(ocal_context ctx, int write, cl_mem mem, size_t origin, size_t bytes,
                          void *host, ocal_status *status, const char *func) {
  struct ocal__memory *m = ctx->memory;
  *status = OCAL_OK;
  if (!m->staging || bytes < m->staging_min) return 0;
  if (pinned_find(ctx, host, bytes, NULL, NULL)) return 0; /* the driver copies it directly */
  const size_t chunk = m->chunk;
  size_t nchunks = (bytes + chunk - 1) / chunk;
  int threads = m->staging_threads;
  if ((size_t)threads > nchunks) threads = (int)nchunks;
  pthread_mutex_lock(&m->staging_lock);
  if (!staging_ready(ctx, threads)) {
    pthread_mutex_unlock(&m->staging_lock);
    return 0;
  }
  /* Parts of whole chunks, as even as can be; the first runs on this thread. */
  stage_part parts[OCAL__STAGE_THREADS];
  pthread_t tid[OCAL__STAGE_THREADS];
  int started[OCAL__STAGE_THREADS] = {0};
  size_t first = 0;
  for (int t = 0; t < threads; t++) {
    size_t count = nchunks / (size_t)threads + ((size_t)t < nchunks % (size_t)threads);
    size_t off = first * chunk, len = count * chunk;
    if (off + len > bytes) len = bytes - off;
    first += count;
    parts[t] = (stage_part){ctx, write, mem, origin + off, (unsigned char *)host + off, len,
                            &m->stage_mem[2 * t], &m->stage_ptr[2 * t], chunk, CL_SUCCESS, NULL};
    if (t > 0) started[t] = pthread_create(&tid[t], NULL, stage_run, &parts[t]) == 0;
  }
  for (int t = 1; t < threads; t++)
    if (!started[t]) stage_run(&parts[t]); /* no thread to be had: do it here */
  stage_run(&parts[0]);
  cl_int err = CL_SUCCESS;
  const char *call = NULL;
  for (int t = 0; t < threads; t++) {
    if (t > 0 && started[t]) pthread_join(tid[t], NULL);
    if (parts[t].err != CL_SUCCESS && err == CL_SUCCESS) {
      err = parts[t].err;
      call = parts[t].call;
    }
  }
  pthread_mutex_unlock(&m->staging_lock);
  if (err != CL_SUCCESS) *status = ocal__cl_fail(ctx->info.name, err, call, func);
  return 1;
}

/* ---- the transfer queue ------------------------------------------------------------------- */

ocal_status ocal__transfer_queue(ocal_context ctx, int which, cl_command_queue *queue,
                                 const char *func) {
  struct ocal__memory *m = ctx->memory;
  ocal_status status = OCAL_OK;
  pthread_mutex_lock(&m->lock);
  if (!m->xfer[which]) {
    cl_int err;
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    props &= CL_QUEUE_PROFILING_ENABLE; /* in order, like the main queue */
    /* Blocks recycled before the first transfer queue carry no fence: they get one now, so
     * that only commands on them wait for the main queue (the documented order: a transfer
     * waits for its wait list, nothing else). */
    if (!m->xfer[0] && !m->xfer[1]) status = ocal__pool_fence_all(ctx, func);
    cl_command_queue q = NULL;
    if (status == OCAL_OK) q = clCreateCommandQueue(ctx->cl_ctx, ctx->device, props, &err);
    if (status == OCAL_OK && err != CL_SUCCESS)
      status = ocal__cl_fail(ctx->info.name, err, "clCreateCommandQueue", func);
    if (status == OCAL_OK) m->xfer[which] = q;
  }
  *queue = m->xfer[which];
  pthread_mutex_unlock(&m->lock);
  return status;
}

/* Collects the cl_events of a wait list plus the buffer's pool fence. */
/* The cl_events of a wait list (`name`: the call's parameter, "wait" or "events"), each
 * checked to be an event of ctx, plus the buffer's pool fence. */
static ocal_status wait_list(ocal_context ctx, cl_mem mem, size_t num_wait,
                             const ocal_event *wait, const char *name, cl_event **list,
                             cl_uint *n, cl_event *fence, const char *fn) {
  *list = NULL;
  *n = 0;
  *fence = NULL;
  const char *count_name = strcmp(name, "wait") == 0 ? "num_wait" : "num_events";
  if (num_wait > 0 && !wait)
    return ocal__fail(OCAL_INVALID_ARGUMENT, fn, "%s is NULL but %s is %zu", name, count_name,
                      num_wait);
  if (num_wait > (size_t)CL_UINT_MAX - 1)
    return ocal__fail(OCAL_INVALID_ARGUMENT, fn, "%s %zu is too large", count_name, num_wait);
  cl_event *l = malloc((num_wait + 1) * sizeof *l);
  if (!l) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, fn, "no memory for the wait list");
  for (size_t i = 0; i < num_wait; i++) {
    if (!wait[i] || ocal_event_get_cl_event(wait[i], &l[i]) != OCAL_OK) {
      free(l);
      return ocal__fail(OCAL_INVALID_HANDLE, fn, "%s[%zu] is not an event", name, i);
    }
    cl_context owner = NULL;
    if (clGetEventInfo(l[i], CL_EVENT_CONTEXT, sizeof owner, &owner, NULL) == CL_SUCCESS &&
        owner != ctx->cl_ctx) {
      free(l);
      return ocal__fail(OCAL_INVALID_ARGUMENT, fn,
                        "%s[%zu] is an event of another context: a queue waits only for events "
                        "of its own context (wait on the host with ocal_event_wait instead)",
                        name, i);
    }
  }
  cl_uint count = (cl_uint)num_wait;
  if (mem && (*fence = ocal__pool_fence(ctx, mem)) != NULL) {
    clFlush(ctx->queue); /* a marker another queue waits for must have been submitted */
    l[count++] = *fence;
  }
  *list = l;
  *n = count;
  return OCAL_OK;
}

static ocal_status transfer(ocal_buffer buf, size_t offset, size_t count, void *host,
                            size_t num_wait, const ocal_event *wait, ocal_event *event, int write,
                            const char *fn) {
  if (!event) return ocal__fail(OCAL_INVALID_ARGUMENT, fn, "event must not be NULL");
  /* Writing the new event over one the call waits for would lose the caller's handle (and
   * clear it before it is read). Compared as addresses, not through pointer order. */
  for (size_t i = 0; wait && i < num_wait; i++)
    if ((uintptr_t)event == (uintptr_t)&wait[i])
      return ocal__fail(OCAL_INVALID_ARGUMENT, fn,
                        "event points at wait[%zu]: the new event would replace a handle you "
                        "still own; pass the address of another ocal_event",
                        i);
  *event = NULL;
  size_t bytes, origin;
  ocal_status status = ocal__check_transfer(buf, offset, count, host, fn, &bytes, &origin);
  if (status != OCAL_OK) return status;
  ocal_context ctx = buf->ctx;
  cl_command_queue q;
  const int which = write ? 0 : 1;
  if ((status = ocal__transfer_queue(ctx, which, &q, fn)) != OCAL_OK) return status;
  cl_event *list, fence, ev = NULL;
  cl_uint n;
  status = wait_list(ctx, bytes ? buf->mem : NULL, num_wait, wait, "wait", &list, &n, &fence, fn);
  if (status != OCAL_OK) return status;
  cl_int err;
  const char *call;
  if (bytes == 0) {
    call = "clEnqueueMarkerWithWaitList";
    err = clEnqueueMarkerWithWaitList(q, n, n ? list : NULL, &ev);
  } else if (write) {
    call = "clEnqueueWriteBuffer";
    err = clEnqueueWriteBuffer(q, buf->mem, CL_FALSE, origin, bytes, host, n, n ? list : NULL,
                               &ev);
  } else {
    call = "clEnqueueReadBuffer";
    err = clEnqueueReadBuffer(q, buf->mem, CL_FALSE, origin, bytes, host, n, n ? list : NULL,
                              &ev);
  }
  if (fence) clReleaseEvent(fence);
  free(list);
  if (err == CL_SUCCESS && (err = clFlush(q)) != CL_SUCCESS) call = "clFlush";
  if (err != CL_SUCCESS) {
    if (ev) {
      clWaitForEvents(1, &ev); /* the host memory must not be left in use */
      clReleaseEvent(ev);
    }
    return ocal__cl_fail(ctx->info.name, err, call, fn);
  }
  if (bytes) ocal__pool_note_transfer(ctx, buf->mem, which, ev);
  return ocal__event_wrap(ev, event, fn);
}

ocal_status ocal_transfer_write(ocal_buffer buf, size_t offset, size_t count, const void *src,
                                size_t num_wait, const ocal_event *wait, ocal_event *event) {
  return transfer(buf, offset, count, (void *)src, num_wait, wait, event, 1, __func__);
}

ocal_status ocal_transfer_read(ocal_buffer buf, size_t offset, size_t count, void *dst,
                               size_t num_wait, const ocal_event *wait, ocal_event *event) {
  return transfer(buf, offset, count, dst, num_wait, wait, event, 0, __func__);
}

ocal_status ocal_context_enqueue_wait(ocal_context ctx, size_t num_events, const ocal_event *events) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (num_events == 0) return OCAL_OK;
  cl_event *list, fence;
  cl_uint n;
  if ((status = wait_list(ctx, NULL, num_events, events, "events", &list, &n, &fence,
                          __func__)) != OCAL_OK)
    return status;
  cl_int err = clEnqueueBarrierWithWaitList(ctx->queue, n, list, NULL);
  free(list);
  if (err != CL_SUCCESS)
    return ocal__cl_fail(ctx->info.name, err, "clEnqueueBarrierWithWaitList", __func__);
  return OCAL_OK;
}

ocal_status ocal_context_enqueue_marker(ocal_context ctx, ocal_event *event) {
  if (!event) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "event must not be NULL");
  *event = NULL;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  cl_event ev;
  OCAL_CL_CHECK(ctx->info.name, clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev));
  /* Commands of the transfer queue may wait for it: it must have been submitted. */
  cl_int err = clFlush(ctx->queue);
  if (err != CL_SUCCESS) {
    clReleaseEvent(ev);
    return ocal__cl_fail(ctx->info.name, err, "clFlush", __func__);
  }
  return ocal__event_wrap(ev, event, __func__);
}

ocal_status ocal__transfer_finish(ocal_context ctx, const char *func) {
  struct ocal__memory *m = ctx->memory;
  cl_command_queue q[2];
  pthread_mutex_lock(&m->lock); /* created under the lock; never released before destroy */
  q[0] = m->xfer[0], q[1] = m->xfer[1];
  pthread_mutex_unlock(&m->lock);
  for (int i = 0; i < 2; i++) {
    cl_int err = q[i] ? clFinish(q[i]) : CL_SUCCESS;
    if (err != CL_SUCCESS) return ocal__cl_fail(ctx->info.name, err, "clFinish", func);
  }
  return OCAL_OK;
}

void ocal__transfer_destroy(ocal_context ctx) {
  struct ocal__memory *m = ctx->memory;
  for (int i = 0; i < 2; i++) {
    if (!m->xfer[i]) continue;
    clFinish(m->xfer[i]);
    clReleaseCommandQueue(m->xfer[i]);
    m->xfer[i] = NULL;
  }
  for (int i = 0; i < 2 * OCAL__STAGE_THREADS; i++) {
    if (m->stage_mem[i]) unpin(ctx, m->stage_mem[i], m->stage_ptr[i]);
    m->stage_mem[i] = NULL;
  }
  /* Pinned blocks keep their context alive, so none is left here unless a caller freed the
   * context from under them; free them anyway. */
  while (m->pinned) {
    ocal__pinned *p = m->pinned;
    m->pinned = p->next;
    unpin(ctx, p->mem, p->ptr);
    free(p);
  }
}
