/* libocal-mpi — declarations shared by its source files (never installed). */
#ifndef OCAL_MPI_INTERNAL_H
#define OCAL_MPI_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "ocal/mpi.h"

#define OCAL_MPI__MAGIC 0x6f6d7069u     /* "ompi" */
#define OCAL_MPI__REQ_MAGIC 0x6f726571u /* "oreq" */
/* Tag of the collectives' chunks; ocal_mpi_iexchange's tags lie below it. */
#define OCAL_MPI__TAG 32767

/* The kernel source (cl/mpi_accumulate.cl), embedded by src/mpi/local.mk's rule. */
extern const char ocal_mpi__accumulate_source[];

/* The element types the reductions take, in the order of the kernel table. */
#define OCAL_MPI__NTYPES 4
#define OCAL_MPI__NOPS 3

typedef enum job_kind {
  JOB_ALLREDUCE = 1,
  JOB_BROADCAST = 2,
  JOB_ALLGATHER = 3,
  JOB_REDUCE_SCATTER = 4,
  JOB_EXCHANGE = 5
} job_kind;

struct ocal_mpi_s {
  uint32_t magic;
  struct ocal_mpi_s *live_next; /* the list of live handles (mpi.c's check_mpi) */
  MPI_Comm comm; /* duplicate of the user's communicator: libocal-mpi's traffic only */
  int rank, size, local_rank, local_size, sharers, async, quiet;
  char device_id[128];
  ocal_context ctx;
  cl_context cl_ctx;
  cl_device_id cl_dev;
  /* Queues of libocal-mpi's own, so that its copies and additions do not wait behind the
   * kernels the program queues on the context's main queue after starting a collective;
   * the node-local path's reductions have their own (q_red), so that a reduction waiting
   * for the device's compute units does not hold up the next chunk's uploads. */
  cl_command_queue q_d2h, q_h2d, q_red;
  size_t chunk;
  int slots;
  unsigned char *pin_send, *pin_recv; /* slots * chunk bytes each, pinned */
  ocal_buffer scratch;                /* slots * chunk bytes of device memory (u8) */
  cl_mem scratch_mem;
  size_t scratch_off;
  /* Accumulate kernels, built on first use by the calling thread (under lock), used only
   * by the thread that runs collectives. */
  ocal_program progs[OCAL_MPI__NTYPES][OCAL_MPI__NOPS];
  ocal_kernel kernels[OCAL_MPI__NTYPES][OCAL_MPI__NOPS];
  cl_kernel cl_kernels[OCAL_MPI__NTYPES][OCAL_MPI__NOPS];
  /* ... and the ordered reductions of the node-local path (same programs). */
  ocal_kernel ord_kernels[OCAL_MPI__NTYPES][OCAL_MPI__NOPS];
  cl_kernel cl_ord[OCAL_MPI__NTYPES][OCAL_MPI__NOPS];
  size_t group; /* work-group multiple for the accumulate launch */
  /* Settings read at creation (OCAL_MPI_*). */
  int shared_setting; /* -1 auto, 0 off, 1 on (no speed check) */
  int shared_fault;   /* tests only: 1 the window fails, 2 the speed check fails */
  size_t small;       /* allreduces below this many bytes: one MPI_Allreduce of host memory */
  /* The node: the ranks that share memory (a pretend node under OCAL_MPI_NODE_SIZE), and the
   * communicator of the nodes' first ranks (MPI_COMM_NULL on the others). */
  MPI_Comm node, leaders;
  int node_rank, node_size, nodes;
  /* The node-local path (shared.c): every node rank's staging segment in one shared window,
   * each registered with this rank's device (CL_MEM_USE_HOST_PTR), and device scratch for
   * the peers' chunks. shared is 1 when it runs; path says which path runs and why. */
  int shared;
  char path[256];
  MPI_Win win;
  unsigned char **seg;  /* node_size segments of two halves: a chunk, then room for a part */
  cl_mem *seg_mem;      /* the registrations */
  size_t seg_bytes, seg_half;
  ocal_buffer shm_scratch; /* 2 x (node_size - 1) chunks */
  cl_mem shm_scratch_mem;
  size_t shm_scratch_off;
  /* The queue of collectives for the progress thread (async only). */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;      /* a collective was queued, or stop was set */
  pthread_cond_t done_cond; /* a collective finished */
  int stop;
  struct ocal_mpi_request_s *head, *tail;
  /* A request kept for a call whose own request cannot be allocated: that call still takes
   * part in the ranks' check (as an invalid one), so every rank fails it instead of waiting. */
  struct ocal_mpi_request_s *spare;
  int pending;     /* requests queued or running */
  int busy;        /* a blocking call runs a collective on its own thread: the thread waits */
  int outstanding; /* requests handed out and not yet finished by ocal_mpi_wait/test */
};

struct ocal_mpi_request_s {
  uint32_t magic;
  ocal_mpi m;
  const char *func; /* the public call, for messages */
  job_kind kind;
  ocal_dtype dtype;
  int tidx; /* index of dtype in the kernel table, -1 when not reducible */
  ocal_mpi_op op;
  int root;
  size_t count;   /* elements: of buf (allreduce, broadcast), send (allgather), recv (r-s) */
  int valid;      /* 0 when this rank's arguments were wrong: every rank then fails */
  ocal_status invalid_status; /* ... this rank with this status and message */
  char invalid_msg[512];
  ocal_buffer a, b; /* views held for the collective's lifetime (a: buf or send; b: recv) */
  ocal_buffer tmp;  /* reduce-scatter's working copy of send */
  ocal_mpi_transfer *xfers; /* exchange: nsend sends then nrecv receives, views in .buf */
  size_t nsend, nrecv;
  cl_event start;      /* marker of the main queue at the call */
  cl_event user_event; /* completes when the collective has */
  ocal_status status;
  char msg[1024];
  int cl_failed; /* an OpenCL call failed: further device work is skipped, messages still flow */
  int blocking;  /* a blocking call: may run on the calling thread when the handle is idle */
  int all_blocking; /* every rank's call blocks (the common check says) */
  int direct;    /* ... and does, an allreduce below m->small on the context's own queue */
  int is_spare;  /* the handle's spare request (m->spare): given back, not freed */
  /* The ranks the ring runs over: the whole communicator, or the nodes' first ranks. */
  MPI_Comm xcomm;
  int xrank, xsize;
  int done;
  struct ocal_mpi_request_s *next;
};

/* Runs one collective to its end (collectives.c); sets r->status and r->msg. */
void ocal_mpi__run(struct ocal_mpi_request_s *r);

/* Helpers of collectives.c that shared.c uses too. */
void ocal_mpi__fail(struct ocal_mpi_request_s *r, ocal_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int ocal_mpi__cl_ok(struct ocal_mpi_request_s *r, cl_int err, const char *call);
void ocal_mpi__mpi_check(struct ocal_mpi_request_s *r, int err, const char *call);
/* The ring allreduce of n elements of size es of mem (at byte offset base) over r->xcomm. */
void ocal_mpi__ring_allreduce(struct ocal_mpi_request_s *r, cl_mem mem, size_t base, size_t es,
                              size_t n, cl_event first);

/* The node-local path (shared.c). Set-up at creation, collective over the communicator:
 * decides m->shared and m->path. */
void ocal_mpi__shared_setup(ocal_mpi m);
void ocal_mpi__shared_free(ocal_mpi m);
/* The collectives through the node's shared window (m->shared, one node for all but
 * allreduce, which runs hierarchically over several). */
void ocal_mpi__shared_allreduce(struct ocal_mpi_request_s *r, cl_mem mem, size_t base, size_t es,
                                size_t n);
void ocal_mpi__shared_broadcast(struct ocal_mpi_request_s *r, cl_mem mem, size_t base, size_t es,
                                size_t n);
void ocal_mpi__shared_allgather(struct ocal_mpi_request_s *r, size_t es, size_t n);
void ocal_mpi__shared_reduce_scatter(struct ocal_mpi_request_s *r, size_t es, size_t n);

#endif /* OCAL_MPI_INTERNAL_H */
