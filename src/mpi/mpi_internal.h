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
  MPI_Comm comm; /* duplicate of the user's communicator: libocal-mpi's traffic only */
  int rank, size, local_rank, local_size, sharers, async;
  char device_id[128];
  ocal_context ctx;
  cl_context cl_ctx;
  cl_device_id cl_dev;
  /* Queues of libocal-mpi's own, so that its copies and additions do not wait behind the
   * kernels the program queues on the context's main queue after starting a collective. */
  cl_command_queue q_d2h, q_h2d;
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
  size_t group; /* work-group multiple for the accumulate launch */
  /* The queue of collectives for the progress thread (async only). */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;      /* a collective was queued, or stop was set */
  pthread_cond_t done_cond; /* a collective finished */
  int stop;
  struct ocal_mpi_request_s *head, *tail;
  int pending;     /* requests queued or running */
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
  int done;
  struct ocal_mpi_request_s *next;
};

/* Runs one collective to its end (collectives.c); sets r->status and r->msg. */
void ocal_mpi__run(struct ocal_mpi_request_s *r);

#endif /* OCAL_MPI_INTERNAL_H */
