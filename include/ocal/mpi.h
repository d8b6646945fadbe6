/** \file
 * ocal — collectives over MPI on ocal buffers (the optional library libocal-mpi).
 *
 * Include this header yourself (ocal.h does not: libocal never depends on MPI) and link with
 * `pkg-config --cflags --libs ocal-mpi`. MPI must be initialised before ocal_mpi_create; for
 * non-blocking calls that progress while your program computes, initialise it with
 * MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...): libocal-mpi then runs its collectives on a
 * thread of its own. With a lower thread level every call runs to completion before it returns
 * (correct, without overlap); ocal_mpi_get_info says which.
 *
 * One ocal_mpi per rank holds an ocal context on the rank's device. The ranks of one node
 * (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) take different devices among those the
 * selector allows (GPUs by default): local rank i gets candidate i modulo their number. When
 * two ranks of a node end up on the same GPU (more ranks than GPUs), this is detected from the
 * device's PCI bus id (cl_khr_pci_bus_info) or UUID (cl_khr_device_uuid), reported once on
 * stderr by the node's first rank and in ocal_mpi_info; it is not an error. Where there is no
 * GPU, every rank uses the CPU device.
 *
 * Collectives take one of three paths (docs/mpi.md; ocal_mpi_info's path says which and why).
 * Node-local: the ranks of a node share their staging memory (one MPI shared window, each
 * rank's segment registered with every rank's device through CL_MEM_USE_HOST_PTR at
 * ocal_mpi_create, after a check that the device moves it at least at half the speed of
 * pinned memory); a rank downloads each chunk once into its segment, the peers upload it, and
 * reductions run on the device in rank order, so every rank gets the same bits (on three or
 * more ranks of a node a blocking allreduce is a reduce-scatter and an allgather through the
 * window; a non-blocking one, which may meet busy devices, has every rank reduce every chunk,
 * so that no rank waits for a peer's kernel; a blocking call may meet non-blocking ones on
 * the other ranks). Across nodes,
 * allreduce reduces within each node, runs the ring between the nodes' first ranks and
 * broadcasts within each node. The ring, where the node-local path cannot run: a buffer is
 * cut into chunks (OCAL_MPI_CHUNK bytes, default 4 MiB) that go device -> pinned host memory
 * -> MPI -> pinned host memory -> device, several chunks in flight at once (OCAL_MPI_SLOTS,
 * default 4), on two command queues of libocal-mpi's own beside the context's main queue;
 * allreduce is a ring reduce-scatter then a ring allgather. Allreduces below OCAL_MPI_SMALL
 * bytes (default 64 KiB) are one MPI_Allreduce of host memory. Every collective first checks,
 * with one small MPI_Allreduce, that all ranks called the same collective with the same
 * element type, element count, operation and root: when they did not, every rank returns the
 * same error instead of hanging.
 *
 * When one rank's arguments are wrong. A collective's (allreduce, broadcast, allgather,
 * reduce-scatter, blocking or not) buffer, operation, element type, root, send/recv pairing,
 * and the device resources it prepares are checked on each rank, and a rank that finds a
 * fault still takes part in that check: the faulty rank gets its own status and message
 * (e.g. OCAL_TYPE_MISMATCH, "reductions take f32, f64, i32 or i64 buffers, not u8"), every
 * other rank the same status with "the arguments of another rank's call were wrong (its own
 * message says how)" (of several faulty ranks' statuses, the greatest code), no data moves,
 * and every handle stays usable. When all
 * ranks' arguments are valid but differ, every rank gets the same status: OCAL_TYPE_MISMATCH
 * for the element type, OCAL_SHAPE_MISMATCH for the element count, OCAL_INVALID_ARGUMENT for
 * the collective, operation or root; the message gives the range across the ranks. The
 * blocking calls return these statuses; the non-blocking ones return OCAL_OK and
 * ocal_mpi_wait (or ocal_mpi_test once done) returns them. Three kinds of fault are this
 * rank's alone, reported at once before any message is sent, and leave the other ranks
 * waiting in the collective (until this rank calls a next one, which they then take for
 * theirs): a NULL or released ocal_mpi handle, a NULL req of a non-blocking call, and no
 * host memory for the request. An OpenCL error on one rank during the collective fails
 * that rank's call only; it still sends and receives every message, so the others finish
 * with OCAL_OK, but their results are undefined wherever they depend on that rank's data.
 * ocal_mpi_iexchange is not a collective: a wrong argument fails the calling rank at once,
 * and its peers' matching receives or sends wait until it posts them. ocal_mpi_create:
 * a rank that fails before duplicating comm (NULL mpi, MPI not initialised, MPI_COMM_NULL,
 * a bad OCAL_MPI_* setting) leaves the others waiting in MPI_Comm_dup; one whose context
 * cannot be created still takes part in the node's device exchange and fails alone, and the
 * other ranks' calls succeed.
 *
 * Ordering with device work: a collective starts after every command queued on the context's
 * main queue before the call (it waits for a marker). Its results are in the buffer when a
 * blocking call returns, or when ocal_mpi_wait returns, or, for device work, once the event of
 * ocal_mpi_request_event has completed (pass it to ocal_context_enqueue_wait). Until then do not touch
 * the buffers it uses, and do not release them.
 *
 * Environment (read through libocal's settings table, ocal_setting_get): OCAL_MPI_CHUNK
 * (bytes, 4096 to 1G), OCAL_MPI_SLOTS (1 to 16), OCAL_MPI_ASYNC (0: never use the progress
 * thread), OCAL_MPI_QUIET, OCAL_MPI_SHARED (off: the ring; on: the node-local path without
 * its speed check), OCAL_MPI_SMALL (bytes); for tests OCAL_MPI_NODE_SIZE (pretend nodes of
 * that many ranks) and OCAL_MPI_SHARED_FAULT (window or speed: the node-local set-up fails).
 * With PoCL, give each rank its own POCL_CACHE_DIR: PoCL crashes when ranks share its kernel
 * cache (ocal's own disk cache is safe to share, its writes are atomic). */
#ifndef OCAL_MPI_H
#define OCAL_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "ocal.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to one rank's state: its communicator, device context and staging memory.
 * Created by ocal_mpi_create, freed by ocal_mpi_release. */
typedef struct ocal_mpi_s *ocal_mpi;

/** Opaque handle to a non-blocking collective in flight. Finished (and freed) by ocal_mpi_wait,
 * or by ocal_mpi_test once it reports completion. */
typedef struct ocal_mpi_request_s *ocal_mpi_request;

/** The reduction of allreduce and reduce-scatter. */
typedef enum ocal_mpi_op {
  OCAL_MPI_SUM = 0,
  OCAL_MPI_MAX = 1,
  OCAL_MPI_MIN = 2
} ocal_mpi_op;

/** Facts of one rank's ocal_mpi.
 * The library fills it; set struct_size = sizeof(ocal_mpi_info) before the call
 * (`ocal_mpi_info x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_mpi_info {
  size_t struct_size;   /**< sizeof(ocal_mpi_info), set by the caller */
  int rank;             /**< rank in the communicator */
  int size;             /**< number of ranks */
  int local_rank;       /**< rank among the ranks of this node */
  int local_size;       /**< number of ranks on this node */
  int device_sharers;   /**< ranks of this node on this rank's device, itself included (1:
                             the device is this rank's alone) */
  int async;            /**< 1 when non-blocking calls progress on libocal-mpi's thread */
  size_t chunk_bytes;   /**< bytes per pipelined chunk */
  int slots;            /**< chunks in flight */
  char device_id[128];  /**< how the device was told apart: "pci:DDDD:BB:DD.F", "uuid:...",
                             or "cl:P:D" (platform and device index) without either extension */
  int nodes;            /**< number of nodes the collectives' paths see (OCAL_MPI_NODE_SIZE
                             cuts one machine into pretend nodes) */
  int shared;           /**< 1 when collectives take the node-local path through shared
                             host memory, 0 when the ring over MPI point-to-point runs */
  size_t small_bytes;   /**< allreduces below this size are one MPI_Allreduce of host memory */
  char path[256];       /**< which path runs and why, e.g. "node-local shared memory: ..." or
                             "ring: OCAL_MPI_SHARED=off" */
} ocal_mpi_info;

/** One transfer of ocal_mpi_iexchange: count elements of buf from element offset, to or from
 * rank peer, matched by tag (0 to 32766;
 * libocal-mpi uses 32767 itself). */
typedef struct ocal_mpi_transfer {
  ocal_buffer buf; /**< the buffer (of the handle's context) to send from or receive into */
  size_t offset;   /**< first element of the part */
  size_t count;    /**< number of elements of the part */
  int peer;        /**< the other rank */
  int tag;         /**< matches a send with its receive, 0 to 32766 */
} ocal_mpi_transfer;

/** Creates this rank's ocal_mpi: duplicates \p comm (libocal-mpi's messages never meet
 * yours), picks this rank's device and creates an ocal context on it. Collective over comm.
 * \param comm the communicator; MPI must be initialised.
 * \param options context options (NULL: defaults). Their device selector (else OCAL_DEVICE)
 *        names the candidates ("gpu", "cpu", a piece of a name; "P:D" is one device for
 *        every rank); local rank i takes candidate i modulo their number.
 * \param mpi receives the handle; NULL on failure.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT (MPI not initialised, NULL mpi); the statuses of
 *          ocal_context_create; an error on one rank is not reported to the others. */
OCAL_API ocal_status ocal_mpi_create(MPI_Comm comm, const ocal_context_options *options,
                                     ocal_mpi *mpi);

/** Frees the handle, its context, staging memory and communicator. Every request must have
 * been finished (ocal_mpi_wait, or ocal_mpi_test reporting it done) and every buffer of the
 * context released. Collective over the communicator (it frees a duplicated communicator).
 * NULL is accepted (no-op).
 * \param mpi the handle.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT, releasing nothing, while a
 *          request is unfinished. */
OCAL_API ocal_status ocal_mpi_release(ocal_mpi mpi);

/** The ocal context of this rank's device, owned by \p mpi (do not release it).
 * \param mpi the handle. \param ctx receives the context.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT. */
OCAL_API ocal_status ocal_mpi_get_context(ocal_mpi mpi, ocal_context *ctx);

/** Facts of this rank: ranks, device sharing, staging settings.
 * \param mpi the handle. \param info receives them; set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when info is NULL or
 *          info->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_mpi_get_info(ocal_mpi mpi, ocal_mpi_info *info);

/** Name of a reduction ("sum", "max", "min").
 * \param op any value.
 * \returns a static string; "invalid" for a value that is not an ocal_mpi_op. */
OCAL_API const char *ocal_mpi_op_name(ocal_mpi_op op);

/** Reduces \p buf over all ranks, in place: afterwards every rank holds the elementwise sum
 * (max, min) of every rank's buf. Blocking. Types f32, f64, i32, i64; every rank passes the
 * same type and element count (shapes may differ).
 * \param mpi the handle. \param buf the buffer (or view), of mpi's context. \param op the
 * reduction.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT, OCAL_INVALID_HANDLE, OCAL_TYPE_MISMATCH (a type
 *          other than those four); OCAL_SHAPE_MISMATCH / OCAL_TYPE_MISMATCH on every rank when
 *          the ranks' calls differ; an OpenCL error. */
OCAL_API ocal_status ocal_mpi_allreduce(ocal_mpi mpi, ocal_buffer buf, ocal_mpi_op op);

/** Copies \p buf of rank \p root into \p buf of every other rank. Blocking. Any element type.
 * \param mpi the handle. \param buf the buffer. \param root the rank that sends.
 * \returns as ocal_mpi_allreduce. */
OCAL_API ocal_status ocal_mpi_broadcast(ocal_mpi mpi, ocal_buffer buf, int root);

/** Gathers every rank's \p send (n elements) into \p recv (size * n elements, rank r's at
 * r * n) on every rank. Blocking. Any element type; send and recv of one type, not
 * overlapping.
 * \param mpi the handle. \param send n elements. \param recv size * n elements.
 * \returns as ocal_mpi_allreduce; OCAL_SHAPE_MISMATCH when recv is not size * n long;
 *          OCAL_INVALID_ARGUMENT when send and recv overlap (send a view inside recv, MPI's
 *          in-place form: pass a send buffer of its own). */
OCAL_API ocal_status ocal_mpi_allgather(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv);

/** Reduces every rank's \p send (size * n elements) elementwise and leaves block r (elements
 * r * n to r * n + n - 1 of the result) in rank r's \p recv (n elements). Blocking. send and
 * recv of one type, not overlapping.
 * \param mpi the handle. \param send size * n elements (left unchanged). \param recv n
 * elements. \param op the reduction.
 * \returns as ocal_mpi_allreduce; OCAL_SHAPE_MISMATCH when send is not size * n long;
 *          OCAL_INVALID_ARGUMENT when send and recv overlap (recv a view inside send, MPI's
 *          in-place form: pass a recv buffer of its own). */
OCAL_API ocal_status ocal_mpi_reduce_scatter(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                             ocal_mpi_op op);

/** Non-blocking ocal_mpi_allreduce: queues the collective and returns at once.
 * Collectives run in the order they were called, which must be the same on every rank.
 * Only a bad handle or a NULL req fails the call itself; every other error (this rank's
 * wrong buffer, type or root, or calls that differ across ranks) comes back from
 * ocal_mpi_wait, on every rank, because every rank must take part in the ranks' common
 * check. The other i* calls below work the same way.
 * \param mpi the handle. \param buf the buffer. \param op the reduction.
 * \param req receives the request (NULL on failure); finish it with ocal_mpi_wait or
 *        ocal_mpi_test.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when req is NULL. */
OCAL_API ocal_status ocal_mpi_iallreduce(ocal_mpi mpi, ocal_buffer buf, ocal_mpi_op op,
                                         ocal_mpi_request *req);
/** Non-blocking ocal_mpi_broadcast (see ocal_mpi_iallreduce).
 * \param mpi the handle. \param buf the buffer. \param root the rank that sends.
 * \param req receives the request.
 * \returns as ocal_mpi_iallreduce. */
OCAL_API ocal_status ocal_mpi_ibroadcast(ocal_mpi mpi, ocal_buffer buf, int root,
                                         ocal_mpi_request *req);
/** Non-blocking ocal_mpi_allgather (see ocal_mpi_iallreduce).
 * \param mpi the handle. \param send n elements. \param recv size * n elements.
 * \param req receives the request.
 * \returns as ocal_mpi_iallreduce. */
OCAL_API ocal_status ocal_mpi_iallgather(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                         ocal_mpi_request *req);
/** Non-blocking ocal_mpi_reduce_scatter (see ocal_mpi_iallreduce).
 * \param mpi the handle. \param send size * n elements. \param recv n elements.
 * \param op the reduction. \param req receives the request.
 * \returns as ocal_mpi_iallreduce. */
OCAL_API ocal_status ocal_mpi_ireduce_scatter(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                              ocal_mpi_op op, ocal_mpi_request *req);

/** Point-to-point transfers of parts of ocal buffers (a halo exchange): every receive is
 * posted, every send staged and sent, every received part written into its buffer. Queued
 * in order with the collectives; ranks that exchange with each other must queue their
 * exchanges in the same order relative to their collectives. Not a collective: each rank
 * names its own peers, and ranks without peers need not call it.
 * \param mpi the handle. \param nsend number of sends. \param sends what to send (may be
 * NULL when nsend is 0). \param nrecv number of receives. \param recvs where to receive.
 * \param req receives the request.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT (a peer or tag out of range), OCAL_SHAPE_MISMATCH
 *          (a range outside its buffer). An MPI failure, such as a receive shorter than what
 *          its peer sends, aborts the job as MPI's default error handler does (docs/mpi.md). */
OCAL_API ocal_status ocal_mpi_iexchange(ocal_mpi mpi, size_t nsend, const ocal_mpi_transfer *sends,
                                        size_t nrecv, const ocal_mpi_transfer *recvs,
                                        ocal_mpi_request *req);

/** Blocks until the request's collective has finished, frees the request and sets *req to
 * NULL. The buffers then hold their results, for the host and for any later device work.
 * \param req the request; NULL or *req NULL is OCAL_INVALID_ARGUMENT.
 * \returns the collective's status (on every rank the same for the ranks' common check). */
OCAL_API ocal_status ocal_mpi_wait(ocal_mpi_request *req);

/** Tells whether the request has finished, without blocking. When it has, frees it, sets
 * *req to NULL and returns the collective's status, as ocal_mpi_wait.
 * \param req the request. \param done receives 1 when finished, else 0.
 * \returns OCAL_OK while it runs; else as ocal_mpi_wait. */
OCAL_API ocal_status ocal_mpi_test(ocal_mpi_request *req, int *done);

/** An event that completes when the request's collective has finished on the device, to
 * order device work after it without blocking the host: ocal_context_enqueue_wait(ctx, 1, &event).
 * It completes when the collective fails too (device work ordered after it then runs on the
 * buffers as the failure left them, which are undefined): the collective's status comes from
 * ocal_mpi_wait or ocal_mpi_test. Release it with ocal_event_release, whether or not the
 * request is still alive.
 * \param req the request. \param event receives the event.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT; an OpenCL error. */
OCAL_API ocal_status ocal_mpi_request_event(ocal_mpi_request req, ocal_event *event);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_MPI_H */
