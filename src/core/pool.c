/* ocal — the caching device allocator: one pool per context.
 *
 * Why size classes, not best-fit blocks split from large slabs (as CUDA caching allocators
 * do): an OpenCL buffer cannot be carved up freely (sub-buffers must start at
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN and the escape hatch ocal_buffer_get_cl_mem hands a cl_mem to
 * CLBlast, VkFFT and users), so each block is one whole cl_mem. A request is rounded up to its
 * class: 512 bytes, then four classes per power of two (1.25, 1.5, 1.75, 2 times 2^k). The
 * rounding wastes less than 25% of the request (at most 448 bytes below 512), every cached block
 * of a class fits every request of that class, and finding one is a list lookup, O(1).
 *
 * Safety: the main queue is in order, so a block freed after commands on it may be reused at
 * once by later commands on it. Commands on the transfer queue are not ordered against it:
 * a block freed while the transfer queue exists carries a marker of the main queue
 * (fence_main), which the next owner's transfer-queue commands wait for; and a block whose
 * last transfer-queue commands (fence_xfer) have not completed is not handed out at all.
 *
 * Cached bytes are bounded by the pool limit (the oldest blocks go first), and everything the
 * context holds by the memory limit; when an allocation fails for lack of memory (or would
 * pass the memory limit), the cache is freed and the allocation tried once more. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "memory_internal.h"

static const char func[] = "device memory allocation";

/* ---- size classes ----------------------------------------------------------------------- */

static size_t class_of(size_t n, int *cls) {
  if (n <= 512) {
    *cls = 0;
    return 512;
  }
  int k = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
  size_t step = (size_t)1 << (k - 2);
  size_t size = (n + step - 1) & ~(step - 1); /* 5, 6, 7 or 8 steps */
  *cls = 1 + (k - 9) * 4 + (int)(size / step - 5);
  return size;
}

/* ---- environment ------------------------------------------------------------------------ */

/* A limit from the option (>= 0), else the environment variable's setting (>= 0), else the
 * default. */
static uint64_t limit_of(int64_t option, int64_t setting, uint64_t fallback) {
  return option >= 0 ? (uint64_t)option : setting >= 0 ? (uint64_t)setting : fallback;
}

/* ---- block lists (caller holds m->lock) ------------------------------------------------- */

static size_t hash_of(cl_mem mem, size_t nbuckets) {
  uint64_t h = (uint64_t)(uintptr_t)mem * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 32) & (nbuckets - 1);
}

static int hash_insert(struct ocal__memory *m, ocal__block *b) {
  if (m->nused + 1 > m->nbuckets * 2) {
    size_t n = m->nbuckets ? m->nbuckets * 2 : 64;
    ocal__block **fresh = calloc(n, sizeof *fresh);
    if (!fresh) {
      if (!m->nbuckets) return -1; /* else keep the chains longer */
    } else {
      for (size_t i = 0; i < m->nbuckets; i++) {
        for (ocal__block *c = m->buckets[i], *next; c; c = next) {
          next = c->hnext;
          size_t h = hash_of(c->mem, n);
          c->hnext = fresh[h];
          fresh[h] = c;
        }
      }
      free(m->buckets);
      m->buckets = fresh;
      m->nbuckets = n;
    }
  }
  size_t h = hash_of(b->mem, m->nbuckets);
  b->hnext = m->buckets[h];
  m->buckets[h] = b;
  m->nused++;
  return 0;
}

static ocal__block *hash_find(struct ocal__memory *m, cl_mem mem, int remove) {
  if (!m->nbuckets) return NULL;
  ocal__block **p = &m->buckets[hash_of(mem, m->nbuckets)];
  for (; *p; p = &(*p)->hnext) {
    if ((*p)->mem == mem) {
      ocal__block *b = *p;
      if (remove) {
        *p = b->hnext;
        b->hnext = NULL;
        m->nused--;
      }
      return b;
    }
  }
  return NULL;
}

static void cache_remove(struct ocal__memory *m, ocal__block *b) {
  if (b->cprev) b->cprev->cnext = b->cnext;
  else m->classes[b->cls] = b->cnext;
  if (b->cnext) b->cnext->cprev = b->cprev;
  if (b->lprev) b->lprev->lnext = b->lnext;
  else m->lru_head = b->lnext;
  if (b->lnext) b->lnext->lprev = b->lprev;
  else m->lru_tail = b->lprev;
  b->cprev = b->cnext = b->lprev = b->lnext = NULL;
  m->stats.bytes_cached -= b->size;
}

static void cache_push(struct ocal__memory *m, ocal__block *b) {
  b->cprev = NULL;
  b->cnext = m->classes[b->cls];
  if (b->cnext) b->cnext->cprev = b;
  m->classes[b->cls] = b;
  b->lnext = NULL;
  b->lprev = m->lru_tail;
  if (m->lru_tail) m->lru_tail->lnext = b;
  else m->lru_head = b;
  m->lru_tail = b;
  m->stats.bytes_cached += b->size;
}

static int event_done(cl_event ev) {
  cl_int st;
  if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
    return 1; /* an event we cannot ask about cannot be waited for either */
  return st <= CL_COMPLETE; /* CL_COMPLETE (0) or an error (negative): nothing runs any more */
}

static void drop_event(cl_event *ev) {
  if (*ev) clReleaseEvent(*ev);
  *ev = NULL;
}

/* Gives a block back to the driver; OpenCL keeps the memory until queued commands finish. */
static void block_free(struct ocal__memory *m, ocal__block *b) {
  drop_event(&b->fence_main);
  drop_event(&b->fence_xfer[0]);
  drop_event(&b->fence_xfer[1]);
  clReleaseMemObject(b->mem);
  m->stats.device_frees++;
  free(b);
}

/* Frees cached blocks, oldest first, until at most `keep` bytes stay cached. */
static void cache_shrink(struct ocal__memory *m, uint64_t keep) {
  while (m->lru_head && m->stats.bytes_cached > keep) {
    ocal__block *b = m->lru_head;
    cache_remove(m, b);
    block_free(m, b);
  }
}

static void note_peaks(struct ocal__memory *m) {
  ocal_memory_stats *s = &m->stats;
  if (s->bytes_in_use > s->peak_bytes_in_use) s->peak_bytes_in_use = s->bytes_in_use;
  if (s->bytes_in_use + s->bytes_cached > s->peak_bytes_reserved)
    s->peak_bytes_reserved = s->bytes_in_use + s->bytes_cached;
}

static int is_oom(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY;
}

/* One try at new device memory: the memory limit first (drivers that allocate lazily would
 * only fail at first use, when it is too late to free the cache), then the driver. */
static ocal_status try_create(ocal_context ctx, struct ocal__memory *m, size_t size, cl_mem *mem,
                             cl_int *err) {
  *err = CL_SUCCESS;
  uint64_t held = m->stats.bytes_in_use + m->stats.bytes_cached;
  if (held + size > m->stats.memory_limit || held + size < held) {
    *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return ocal__fail(OCAL_OUT_OF_DEVICE_MEMORY, func,
                      "%zu more bytes would take the context's device memory to %llu bytes, "
                      "over its limit of %llu (memory_limit or OCAL_MEMORY_LIMIT; %llu bytes "
                      "in use, %llu cached) on device '%s'",
                      size, (unsigned long long)(held + size),
                      (unsigned long long)m->stats.memory_limit,
                      (unsigned long long)m->stats.bytes_in_use,
                      (unsigned long long)m->stats.bytes_cached, ctx->info.name);
  }
  *mem = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, size, NULL, err);
  if (*err != CL_SUCCESS) {
    *mem = NULL;
    return ocal__cl_fail(ctx->info.name, *err, "clCreateBuffer", func);
  }
  m->stats.device_allocs++;
  return OCAL_OK;
}

ocal_status ocal__pool_alloc(ocal_context ctx, size_t bytes, cl_mem *mem) {
  struct ocal__memory *m = ctx->memory;
  int cls = 0;
  size_t size = bytes;
  if (m->enabled) {
    size = class_of(bytes, &cls);
    if ((uint64_t)size > ctx->info.max_alloc_bytes) size = bytes; /* still class cls */
  }
  ocal__block *b = NULL;
  pthread_mutex_lock(&m->lock);
  if (m->enabled) {
    for (ocal__block *c = m->classes[cls]; c; c = c->cnext) {
      if (c->size < bytes) continue;
      if ((c->fence_xfer[0] && !event_done(c->fence_xfer[0])) ||
          (c->fence_xfer[1] && !event_done(c->fence_xfer[1])))
        continue; /* a transfer may still use it */
      drop_event(&c->fence_xfer[0]);
      drop_event(&c->fence_xfer[1]);
      if (c->fence_main && event_done(c->fence_main)) drop_event(&c->fence_main);
      cache_remove(m, c);
      c->reused_unfenced = !c->fence_main && !m->xfer[0] && !m->xfer[1];
      b = c;
      break;
    }
  }
  ocal_status status = OCAL_OK;
  if (b) {
    m->stats.hits++;
  } else if (!(b = malloc(sizeof *b))) {
    /* A record is made only on a miss: a hit, the common case, allocates nothing. */
    status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for a pool block");
  } else {
    *b = (ocal__block){0};
    m->stats.misses++;
    cl_int err;
    status = try_create(ctx, m, size, &b->mem, &err);
    if (status != OCAL_OK && is_oom(err) && m->stats.bytes_cached > 0) {
      /* The cache may be what is in the way: free it all and try once more. */
      m->stats.oom_retries++;
      cache_shrink(m, 0);
      status = try_create(ctx, m, size, &b->mem, &err);
    }
    b->size = size;
    b->cls = cls;
  }
  if (status == OCAL_OK && hash_insert(m, b) != 0) {
    block_free(m, b);
    b = NULL;
    status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the pool's table");
  }
  if (status == OCAL_OK) {
    m->stats.bytes_in_use += b->size;
    note_peaks(m);
    *mem = b->mem;
  } else if (b) {
    free(b);
  }
  pthread_mutex_unlock(&m->lock);
  return status;
}

void ocal__pool_free(ocal_context ctx, cl_mem mem) {
  struct ocal__memory *m = ctx->memory;
  pthread_mutex_lock(&m->lock);
  ocal__block *b = hash_find(m, mem, 1);
  if (!b) {
    /* Not the pool's (cannot happen for ocal's callers); OpenCL still frees it safely. */
    pthread_mutex_unlock(&m->lock);
    clReleaseMemObject(mem);
    return;
  }
  m->stats.bytes_in_use -= b->size;
  int keep = m->enabled && b->size <= m->stats.pool_limit;
  if (keep && (m->xfer[0] || m->xfer[1])) {
    /* The next owner may use a transfer queue, which does not wait for this queue. */
    cl_event ev = NULL;
    if (clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev) == CL_SUCCESS) {
      drop_event(&b->fence_main);
      b->fence_main = ev;
    } else {
      keep = 0;
    }
  }
  if (keep) {
    cache_shrink(m, m->stats.pool_limit - b->size);
    cache_push(m, b);
  } else {
    block_free(m, b);
  }
  pthread_mutex_unlock(&m->lock);
}

ocal_status ocal__pool_fence_all(ocal_context ctx, const char *fn) {
  struct ocal__memory *m = ctx->memory;
  int any = 0;
  for (ocal__block *b = m->lru_head; b && !any; b = b->lnext) any = !b->fence_main;
  for (size_t i = 0; i < m->nbuckets && !any; i++)
    for (ocal__block *b = m->buckets[i]; b && !any; b = b->hnext) any = b->reused_unfenced;
  if (!any) return OCAL_OK;
  cl_event all = NULL;
  cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &all);
  if (err == CL_SUCCESS) err = clFlush(ctx->queue);
  if (err != CL_SUCCESS) {
    if (all) clReleaseEvent(all);
    return ocal__cl_fail(ctx->info.name, err, "clEnqueueMarkerWithWaitList", fn);
  }
  for (ocal__block *b = m->lru_head; b; b = b->lnext)
    if (!b->fence_main && clRetainEvent(all) == CL_SUCCESS) b->fence_main = all;
  for (size_t i = 0; i < m->nbuckets; i++)
    for (ocal__block *b = m->buckets[i]; b; b = b->hnext)
      if (b->reused_unfenced) {
        b->reused_unfenced = 0;
        drop_event(&b->fence_main);
        if (clRetainEvent(all) == CL_SUCCESS) b->fence_main = all;
      }
  clReleaseEvent(all);
  return OCAL_OK;
}

cl_event ocal__pool_fence(ocal_context ctx, cl_mem mem) {
  struct ocal__memory *m = ctx->memory;
  cl_event ev = NULL;
  pthread_mutex_lock(&m->lock);
  ocal__block *b = hash_find(m, mem, 0);
  if (b && b->fence_main) {
    if (event_done(b->fence_main)) {
      drop_event(&b->fence_main);
    } else {
      ev = b->fence_main;
      clRetainEvent(ev);
    }
  }
  pthread_mutex_unlock(&m->lock);
  return ev;
}

void ocal__pool_note_transfer(ocal_context ctx, cl_mem mem, int which, cl_event ev) {
  struct ocal__memory *m = ctx->memory;
  pthread_mutex_lock(&m->lock);
  ocal__block *b = hash_find(m, mem, 0);
  if (b && clRetainEvent(ev) == CL_SUCCESS) {
    drop_event(&b->fence_xfer[which]);
    b->fence_xfer[which] = ev;
  }
  pthread_mutex_unlock(&m->lock);
}

/* ---- life of the memory state ----------------------------------------------------------- */

ocal_status ocal__memory_init(ocal_context ctx, const ocal_context_options *options) {
  struct ocal__memory *m = calloc(1, sizeof *m);
  if (!m) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_context_create", "no memory");
  if (pthread_mutex_init(&m->lock, NULL) != 0) {
    free(m);
    return ocal__fail(OCAL_INTERNAL, "ocal_context_create", "pthread_mutex_init failed");
  }
  if (pthread_mutex_init(&m->staging_lock, NULL) != 0) {
    pthread_mutex_destroy(&m->lock);
    free(m);
    return ocal__fail(OCAL_INTERNAL, "ocal_context_create", "pthread_mutex_init failed");
  }
  ctx->memory = m;
  const ocal__settings *set = &ctx->settings;
  m->enabled = options->pool >= 0 ? options->pool != 0 : set->pool != 0;
  m->stats.pool_enabled = m->enabled;
  m->stats.pool_limit = limit_of(options->pool_limit, set->pool_limit,
                                 ctx->info.global_mem_bytes / 2);
  m->stats.memory_limit = limit_of(options->memory_limit, set->memory_limit,
                                   ctx->info.global_mem_bytes);

  /* Staging pays where host memory and device memory are apart (discrete GPUs): several
   * threads copying 1 MiB chunks beat the driver's pageable path from 16 MiB on, and one
   * thread alone loses (docs/measurements.md#staging). On a CPU device
   * the "device" memory is host memory and a driver copy is one memcpy already. */
  int discrete = ctx->info.type == OCAL_DEVICE_GPU || ctx->info.type == OCAL_DEVICE_ACCELERATOR;
  if (discrete) {
    cl_bool unified = CL_FALSE;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
                        NULL) == CL_SUCCESS && unified)
      discrete = 0;
  }
  m->staging = options->staging >= 0 ? options->staging != 0
               : set->staging >= 0   ? set->staging
                                     : discrete;
  m->staging_min = set->staging_min >= 0 ? (size_t)set->staging_min : ((size_t)16 << 20);
  m->chunk = set->staging_chunk >= 0 ? (size_t)set->staging_chunk : ((size_t)1 << 20);
  /* Host copies run on several threads: half the processors, at most 8 (a memory bus is
   * saturated by a few). */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  m->staging_threads = cpus >= 16 ? 8 : cpus >= 2 ? (int)(cpus / 2) : 1;
  if (set->staging_threads >= 1)
    m->staging_threads = set->staging_threads > OCAL__STAGE_THREADS ? OCAL__STAGE_THREADS
                                                                    : (int)set->staging_threads;
  return OCAL_OK;
}

void ocal__memory_destroy(ocal_context ctx) {
  struct ocal__memory *m = ctx->memory;
  if (!m) return;
  ocal__transfer_destroy(ctx); /* the transfer queue, staging and pinned blocks */
  cache_shrink(m, 0);
  /* Blocks still in use here belong to areas that released their cl_mem themselves instead
   * of through ocal__device_free (none of ocal's do): only the records go. Buffers and
   * pinned blocks keep the context alive, so none of theirs is left. */
  for (size_t i = 0; i < m->nbuckets; i++) {
    for (ocal__block *b = m->buckets[i], *next; b; b = next) {
      next = b->hnext;
      drop_event(&b->fence_main);
      drop_event(&b->fence_xfer[0]);
      drop_event(&b->fence_xfer[1]);
      free(b);
    }
  }
  free(m->buckets);
  pthread_mutex_destroy(&m->staging_lock);
  pthread_mutex_destroy(&m->lock);
  free(m);
  ctx->memory = NULL;
}

/* ---- public calls ------------------------------------------------------------------------ */

ocal_status ocal_memory_get_stats(ocal_context ctx, ocal_memory_stats *stats) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!stats) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "stats must not be NULL");
  /* The first ocal_memory_stats with struct_size ends with memory_limit. */
  status = ocal__filled_check(__func__, "stats", "ocal_memory_stats", stats,
                              OCAL__SIZE_THROUGH(ocal_memory_stats, memory_limit),
                              sizeof *stats);
  if (status != OCAL_OK) return status;
  pthread_mutex_lock(&ctx->memory->lock);
  ocal__filled_write(stats, &ctx->memory->stats);
  pthread_mutex_unlock(&ctx->memory->lock);
  return OCAL_OK;
}

ocal_status ocal_memory_trim(ocal_context ctx) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  pthread_mutex_lock(&ctx->memory->lock);
  cache_shrink(ctx->memory, 0);
  pthread_mutex_unlock(&ctx->memory->lock);
  return OCAL_OK;
}

ocal_status ocal_memory_set_pool_limit(ocal_context ctx, uint64_t bytes) {
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  pthread_mutex_lock(&ctx->memory->lock);
  ctx->memory->stats.pool_limit = bytes;
  cache_shrink(ctx->memory, bytes);
  pthread_mutex_unlock(&ctx->memory->lock);
  return OCAL_OK;
}
