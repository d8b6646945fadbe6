/* ocal — the memory state of a context, shared by pool.c and transfer.c (never installed). */
#ifndef OCAL_MEMORY_INTERNAL_H
#define OCAL_MEMORY_INTERNAL_H

#include "internal.h"

/* Size classes: 512 bytes, then four per power of two (see class_of in pool.c). 64-bit sizes
 * need 1 + 4 * 55 of them. */
#define OCAL__POOL_CLASSES 224
#define OCAL__STAGE_THREADS 16 /* staging threads at most; two slots each */

/* One device allocation (a whole cl_mem) known to the pool: in use (in the hash table) or
 * cached (in its class list and the LRU list). */
typedef struct ocal__block {
  cl_mem mem;
  size_t size; /* allocated bytes, the class size (or the request where that is too big) */
  int cls;
  struct ocal__block *hnext;             /* hash chain, while in use */
  struct ocal__block *cprev, *cnext;     /* class list, while cached: newest first */
  struct ocal__block *lprev, *lnext;     /* LRU list, while cached: oldest first */
  /* A marker on the main queue recorded when the block was freed while the transfer queue
   * existed: commands of the next owner on the transfer queue must wait for it. */
  cl_event fence_main;
  /* The last command on the block of each transfer queue: the block is not handed out again
   * before they have completed. */
  cl_event fence_xfer[2];
  /* Handed out from the cache while no transfer queue existed: the previous owner's commands
   * on the main queue left no fence (see ocal__pool_fence_all). */
  int reused_unfenced;
} ocal__block;

typedef struct ocal__pinned {
  struct ocal__pinned *next;
  cl_mem mem;
  void *ptr;
  size_t bytes;
} ocal__pinned;

struct ocal__memory {
  pthread_mutex_t lock; /* the pool, the pinned list, the transfer queue */
  int enabled;
  ocal__block *classes[OCAL__POOL_CLASSES];
  ocal__block *lru_head, *lru_tail;
  ocal__block **buckets;
  size_t nbuckets, nused;
  ocal_memory_stats stats;
  cl_command_queue xfer[2]; /* transfer queues for writes [0] and reads [1]; NULL until used */
  ocal__pinned *pinned;

  /* Staged transfers: one at a time per context, under staging_lock. */
  pthread_mutex_t staging_lock;
  int staging;        /* 1: blocking pageable transfers of >= staging_min bytes are staged */
  size_t staging_min; /* threshold in bytes */
  size_t chunk;       /* bytes per staging slot */
  int staging_threads; /* host threads that copy at once, 1 to OCAL__STAGE_THREADS */
  cl_mem stage_mem[2 * OCAL__STAGE_THREADS];
  void *stage_ptr[2 * OCAL__STAGE_THREADS];
};

/* The pool behind ocal__device_alloc / ocal__device_free (alloc.c checks the request first). */
ocal_status ocal__pool_alloc(ocal_context ctx, size_t bytes, cl_mem *mem);
void ocal__pool_free(ocal_context ctx, cl_mem mem);

/* Transfer queue `which` (0 writes, 1 reads), created on first use; a failure names `func`,
 * the public call being served. */
ocal_status ocal__transfer_queue(ocal_context ctx, int which, cl_command_queue *queue,
                                 const char *func);

/* Before the first transfer queue exists (m->lock held): gives every block that was recycled
 * without a fence, cached or handed out again, a marker of everything queued on the main
 * queue so far, so that a transfer-queue command on it waits for its earlier owner's work and
 * no other command waits for the main queue. */
ocal_status ocal__pool_fence_all(ocal_context ctx, const char *func);

/* A pending main-queue fence of the block behind mem (retained; the caller releases it), or
 * NULL when there is none or it has completed. */
cl_event ocal__pool_fence(ocal_context ctx, cl_mem mem);

/* Records ev (retained) as the latest command of transfer queue `which` on the block behind
 * mem. */
void ocal__pool_note_transfer(ocal_context ctx, cl_mem mem, int which, cl_event ev);

/* Frees the staging ring and pinned blocks (transfer.c), then the pool (pool.c). */
void ocal__transfer_destroy(ocal_context ctx);

#endif /* OCAL_MEMORY_INTERNAL_H */
