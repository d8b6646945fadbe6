/* libocal-mpi — one rank's state: device choice, staging memory, the progress thread, and the
 * public calls that check their arguments and queue collectives (collectives.c runs them). */
#include <ctype.h>
#include <sched.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi_internal.h"

/* After ocal's header, which sets the OpenCL version ocal targets. */
#include <CL/cl_ext.h>

typedef struct ocal_mpi_request_s req;

#define DEFAULT_CHUNK ((size_t)4 << 20)
#define DEFAULT_SLOTS 4
/* Below this many bytes an allreduce is one MPI_Allreduce of host memory (latency). */
#define DEFAULT_SMALL ((size_t)64 << 10)

/* The live handles: a released one is found missing here without reading its freed memory
 * (mpi.h promises that a released handle fails the call). A rank holds one or a few. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static ocal_mpi live_head;

static void live_add(ocal_mpi m) {
  pthread_mutex_lock(&live_lock);
  m->live_next = live_head;
  live_head = m;
  pthread_mutex_unlock(&live_lock);
}

static void live_remove(ocal_mpi m) {
  pthread_mutex_lock(&live_lock);
  for (ocal_mpi *p = &live_head; *p; p = &(*p)->live_next)
    if (*p == m) {
      *p = m->live_next;
      break;
    }
  pthread_mutex_unlock(&live_lock);
}

static ocal_status check_mpi(ocal_mpi m, const char *func) {
  pthread_mutex_lock(&live_lock);
  ocal_mpi p = live_head;
  while (p && p != m) p = p->live_next;
  pthread_mutex_unlock(&live_lock);
  if (!m || !p)
    return ocal_error_set(OCAL_INVALID_HANDLE, func,
                          "the ocal_mpi handle is NULL, released, or not one from "
                          "ocal_mpi_create");
  return OCAL_OK;
}

/* Fails ocal_mpi_create with the message of a libocal call that failed inside it, less that
 * call's name: the message names the call the user made ("ocal_context_create: " gives way
 * to "ocal_mpi_create: "). msg is a copy, not ocal_last_error() itself, which this rewrites. */
static ocal_status fail_with(ocal_status st, const char *msg) {
  size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_");
  if (n > 5 && strncmp(msg, "ocal_", 5) == 0 && strncmp(msg + n, ": ", 2) == 0) msg += n + 2;
  return ocal_error_set(st, "ocal_mpi_create", "%s", msg);
}

/* ---- settings ---------------------------------------------------------------------------- */

/* Reads one OCAL_MPI_* integer-valued setting through libocal's settings table (validated
 * there, with its message); `unset` stands for the table's value of an unset variable. */
static ocal_status setting(const char *name, long long unset, long long dflt, long long *out) {
  long long v = 0;
  ocal_status st = ocal_setting_get(name, &v, NULL, 0);
  if (st != OCAL_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ocal_last_error());
    return fail_with(st, msg);
  }
  *out = v == unset ? dflt : v;
  return OCAL_OK;
}

/* ---- device choice ----------------------------------------------------------------------- */

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n) return 1;
  }
  return n == 0;
}

static int is_type_word(const char *s, ocal_device_type *type) {
  if (!strcasecmp(s, "gpu")) *type = OCAL_DEVICE_GPU;
  else if (!strcasecmp(s, "cpu")) *type = OCAL_DEVICE_CPU;
  else if (!strcasecmp(s, "accelerator")) *type = OCAL_DEVICE_ACCELERATOR;
  else return 0;
  return 1;
}

/* Turns the user's selector into this local rank's device ("P:D" in out): the candidates are
 * the devices the selector allows (with none, the GPUs, else accelerators, else CPUs), and local
 * rank i takes candidate i modulo their number; CPU devices are shared, one for all. A
 * selector that names one device ("P:D") or matches nothing is passed on as it is, so that
 * ocal_context_create reports it in its own words. */
static ocal_status pick_device(const char *sel, int local_rank, char *out, size_t out_size) {
  snprintf(out, out_size, "%s", sel ? sel : "");
  size_t n = 0;
  ocal_status st = ocal_device_list(0, NULL, &n);
  if (st != OCAL_OK || n == 0) return st;
  ocal_device_info *all = calloc(n, sizeof *all);
  if (!all) return ocal_error_set(OCAL_OUT_OF_HOST_MEMORY, "ocal_mpi_create", "no memory");
  all[0].struct_size = sizeof *all;
  if ((st = ocal_device_list(n, all, &n)) != OCAL_OK) {
    free(all);
    return st;
  }
  int p, d;
  char extra;
  ocal_device_type type = OCAL_DEVICE_GPU;
  int by_type = 1;
  if (sel && *sel) {
    if (sscanf(sel, "%d:%d%c", &p, &d, &extra) == 2) {
      free(all);
      return OCAL_OK;
    }
    by_type = is_type_word(sel, &type);
  } else {
    int have[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) have[all[i].type & 3] = 1;
    type = have[OCAL_DEVICE_GPU] ? OCAL_DEVICE_GPU
           : have[OCAL_DEVICE_ACCELERATOR] ? OCAL_DEVICE_ACCELERATOR
           : have[OCAL_DEVICE_CPU] ? OCAL_DEVICE_CPU : OCAL_DEVICE_OTHER;
  }
  size_t count = 0, first = 0, chosen = 0;
  int first_is_cpu = 0;
  for (size_t i = 0; i < n; i++) {
    int ok = by_type ? all[i].type == type
                     : contains_nocase(all[i].name, sel) || contains_nocase(all[i].platform_name, sel);
    if (!ok) continue;
    if (count == 0) {
      first = i;
      first_is_cpu = all[i].type == OCAL_DEVICE_CPU;
    }
    count++;
  }
  if (count > 0) {
    size_t want = first_is_cpu ? 0 : (size_t)local_rank % count, k = 0;
    for (size_t i = first; i < n; i++) {
      int ok = by_type ? all[i].type == type
                       : contains_nocase(all[i].name, sel) ||
                             contains_nocase(all[i].platform_name, sel);
      if (!ok) continue;
      if (k++ == want) {
        chosen = i;
        break;
      }
    }
    snprintf(out, out_size, "%d:%d", all[chosen].platform_index, all[chosen].device_index);
  }
  free(all);
  return OCAL_OK;
}

/* What tells this device apart from the others of the node: its PCI address, else its UUID,
 * else its platform and device index (which name one device within one machine too). */
static void device_identity(ocal_mpi m) {
  ocal_device_info info = {sizeof info};
  ocal_context_get_device_info(m->ctx, &info);
  size_t len = 0;
  char *ext = NULL;
  if (clGetDeviceInfo(m->cl_dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) == CL_SUCCESS &&
      (ext = calloc(1, len + 1)) &&
      clGetDeviceInfo(m->cl_dev, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS) {
    cl_device_pci_bus_info_khr pci;
    cl_uchar uuid[CL_UUID_SIZE_KHR];
    if (strstr(ext, "cl_khr_pci_bus_info") &&
        clGetDeviceInfo(m->cl_dev, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, NULL) ==
            CL_SUCCESS) {
      snprintf(m->device_id, sizeof m->device_id, "pci:%04x:%02x:%02x.%x", pci.pci_domain,
               pci.pci_bus, pci.pci_device, pci.pci_function);
      free(ext);
      return;
    }
    if (strstr(ext, "cl_khr_device_uuid") &&
        clGetDeviceInfo(m->cl_dev, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
      int k = snprintf(m->device_id, sizeof m->device_id, "uuid:");
      for (int i = 0; i < CL_UUID_SIZE_KHR; i++)
        k += snprintf(m->device_id + k, sizeof m->device_id - (size_t)k, "%02x", uuid[i]);
      free(ext);
      return;
    }
  }
  free(ext);
  snprintf(m->device_id, sizeof m->device_id, "cl:%d:%d", info.platform_index,
           info.device_index);
}

/* Counts the ranks of this node on this rank's device; the node's first rank on a shared GPU
 * says so on stderr (ranks that share a GPU contend for it: it works, but slowly). */
static void count_sharers(ocal_mpi m, MPI_Comm node) {
  char *ids = calloc((size_t)m->local_size, sizeof m->device_id);
  m->sharers = 1;
  if (!ids) return;
  MPI_Allgather(m->device_id, (int)sizeof m->device_id, MPI_CHAR, ids, (int)sizeof m->device_id,
                MPI_CHAR, node);
  int sharers = 0, first = -1;
  for (int i = 0; i < m->local_size; i++)
    if (!strcmp(ids + (size_t)i * sizeof m->device_id, m->device_id)) {
      if (first < 0) first = i;
      sharers++;
    }
  free(ids);
  m->sharers = sharers;
  ocal_device_info info = {sizeof info};
  ocal_context_get_device_info(m->ctx, &info);
  if (sharers > 1 && first == m->local_rank && info.type != OCAL_DEVICE_CPU && !m->quiet)
    fprintf(stderr,
            "ocal_mpi: %d ranks of this node share the %s %s (%s): they will contend for it; "
            "start at most one rank per device for speed\n",
            sharers, ocal_device_type_name(info.type), info.name, m->device_id);
}

/* ---- the progress thread ----------------------------------------------------------------- */

static void finish(req *r) {
  ocal_mpi m = r->m;
  /* Complete even when the collective failed: OpenCL leaves to each implementation what
   * becomes of commands waiting on a user event set to an error, and PoCL's never run (a
   * later finish hangs) or abort; the status comes back from ocal_mpi_wait. */
  if (r->user_event) clSetUserEventStatus(r->user_event, CL_COMPLETE);
  pthread_mutex_lock(&m->lock);
  r->done = 1;
  m->pending--;
  pthread_cond_broadcast(&m->done_cond);
  pthread_mutex_unlock(&m->lock);
}

static void *progress(void *arg) {
  ocal_mpi m = arg;
  for (;;) {
    pthread_mutex_lock(&m->lock);
    while ((!m->head || m->busy) && !m->stop) pthread_cond_wait(&m->cond, &m->lock);
    req *r = m->head;
    if (!r) { /* stop, and nothing left to run */
      pthread_mutex_unlock(&m->lock);
      return NULL;
    }
    m->head = r->next;
    if (!m->head) m->tail = NULL;
    pthread_mutex_unlock(&m->lock);
    ocal_mpi__run(r);
    finish(r);
  }
}

/* ---- creation and release ---------------------------------------------------------------- */

/* The ring's queues and staging memory. */
static ocal_status staging(ocal_mpi m) {
  static const char *func = "ocal_mpi_create";
  cl_int err;
  m->q_d2h = clCreateCommandQueue(m->cl_ctx, m->cl_dev, 0, &err);
  if (err == CL_SUCCESS) m->q_h2d = clCreateCommandQueue(m->cl_ctx, m->cl_dev, 0, &err);
  if (err == CL_SUCCESS) m->q_red = clCreateCommandQueue(m->cl_ctx, m->cl_dev, 0, &err);
  if (err != CL_SUCCESS)
    return ocal_error_set(OCAL_OPENCL_ERROR, func, "clCreateCommandQueue failed with %s",
                          ocal_cl_error_name(err));
  size_t room = m->chunk * (size_t)m->slots;
  ocal_status st;
  if ((st = ocal_pinned_alloc(m->ctx, room, (void **)&m->pin_send)) != OCAL_OK ||
      (st = ocal_pinned_alloc(m->ctx, room, (void **)&m->pin_recv)) != OCAL_OK ||
      (st = ocal_buffer_create(m->ctx, OCAL_U8, 1, &room, &m->scratch)) != OCAL_OK ||
      (st = ocal_buffer_get_cl_mem(m->scratch, &m->scratch_mem, &m->scratch_off)) != OCAL_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ocal_last_error());
    return ocal_error_set(st, func, "staging memory of 3 x %zu bytes: %s", room, msg);
  }
  return OCAL_OK;
}

static void destroy(ocal_mpi m) {
  live_remove(m);
  for (int t = 0; t < OCAL_MPI__NTYPES; t++)
    for (int o = 0; o < OCAL_MPI__NOPS; o++) {
      ocal_kernel_release(m->kernels[t][o]);
      ocal_kernel_release(m->ord_kernels[t][o]);
      ocal_program_release(m->progs[t][o]);
    }
  ocal_mpi__shared_free(m);
  ocal_buffer_release(m->scratch);
  if (m->pin_send) ocal_pinned_free(m->ctx, m->pin_send);
  if (m->pin_recv) ocal_pinned_free(m->ctx, m->pin_recv);
  if (m->q_d2h) clReleaseCommandQueue(m->q_d2h);
  if (m->q_h2d) clReleaseCommandQueue(m->q_h2d);
  if (m->q_red) clReleaseCommandQueue(m->q_red);
  ocal_context_release(m->ctx);
  if (m->node != MPI_COMM_NULL) MPI_Comm_free(&m->node);
  if (m->leaders != MPI_COMM_NULL) MPI_Comm_free(&m->leaders);
  if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
  free(m->spare);
  pthread_mutex_destroy(&m->lock);
  pthread_cond_destroy(&m->cond);
  pthread_cond_destroy(&m->done_cond);
  m->magic = 0;
  free(m);
}

ocal_status ocal_mpi_create(MPI_Comm comm, const ocal_context_options *options, ocal_mpi *mpi) {
  static const char *func = "ocal_mpi_create";
  if (!mpi) return ocal_error_set(OCAL_INVALID_ARGUMENT, func, "mpi (the out-parameter) is NULL");
  *mpi = NULL;
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized)
    return ocal_error_set(OCAL_INVALID_ARGUMENT, func,
                          "MPI is not initialised: call MPI_Init_thread (with "
                          "MPI_THREAD_MULTIPLE for overlap) first");
  if (comm == MPI_COMM_NULL)
    return ocal_error_set(OCAL_INVALID_ARGUMENT, func, "comm is MPI_COMM_NULL");
  long long chunk, slots, async, quiet, shared, small, node_size, fault;
  char device_env[256] = "";
  ocal_status st;
  if ((st = setting("OCAL_MPI_CHUNK", -1, (long long)DEFAULT_CHUNK, &chunk)) != OCAL_OK ||
      (st = setting("OCAL_MPI_SLOTS", 0, DEFAULT_SLOTS, &slots)) != OCAL_OK ||
      (st = setting("OCAL_MPI_ASYNC", -1, 1, &async)) != OCAL_OK ||
      (st = setting("OCAL_MPI_QUIET", -1, 0, &quiet)) != OCAL_OK ||
      (st = setting("OCAL_MPI_SHARED", -2, -1, &shared)) != OCAL_OK ||
      (st = setting("OCAL_MPI_SMALL", -1, DEFAULT_SMALL, &small)) != OCAL_OK ||
      (st = setting("OCAL_MPI_NODE_SIZE", 0, 0, &node_size)) != OCAL_OK ||
      (st = setting("OCAL_MPI_SHARED_FAULT", -1, 0, &fault)) != OCAL_OK)
    return st;
  if ((st = ocal_setting_get("OCAL_DEVICE", NULL, device_env, sizeof device_env)) != OCAL_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ocal_last_error());
    return fail_with(st, msg);
  }
  chunk = chunk / 64 * 64; /* whole elements of every type in every slot */

  ocal_mpi m = calloc(1, sizeof *m);
  if (m && !(m->spare = calloc(1, sizeof *m->spare))) {
    free(m);
    m = NULL;
  }
  if (!m) return ocal_error_set(OCAL_OUT_OF_HOST_MEMORY, func, "no memory");
  m->magic = OCAL_MPI__MAGIC;
  m->comm = m->node = m->leaders = MPI_COMM_NULL;
  m->win = MPI_WIN_NULL;
  m->chunk = chunk;
  m->slots = (int)slots;
  m->quiet = (int)quiet;
  m->shared_setting = (int)shared;
  m->small = (size_t)small;
  m->shared_fault = (int)fault;
  m->group = 64;
  pthread_mutex_init(&m->lock, NULL);
  pthread_cond_init(&m->cond, NULL);
  pthread_cond_init(&m->done_cond, NULL);
  MPI_Comm_dup(comm, &m->comm);
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->size);
  MPI_Comm node;
  MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &m->local_rank);
  MPI_Comm_size(node, &m->local_size);
  /* The node of the collectives' paths: the machine's ranks, or pretend nodes of node_size
   * of them (tests); and the nodes' first ranks, between which the ring runs. */
  if (node_size > 0)
    MPI_Comm_split(node, m->local_rank / (int)node_size, m->local_rank, &m->node);
  else
    MPI_Comm_dup(node, &m->node);
  MPI_Comm_rank(m->node, &m->node_rank);
  MPI_Comm_size(m->node, &m->node_size);
  MPI_Comm_split(m->comm, m->node_rank == 0 ? 0 : MPI_UNDEFINED, m->rank, &m->leaders);
  if (m->leaders != MPI_COMM_NULL) MPI_Comm_size(m->leaders, &m->nodes);
  MPI_Bcast(&m->nodes, 1, MPI_INT, 0, m->node);

  ocal_context_options o;
  ocal_context_options_init(&o);
  /* Only the caller's struct_size bytes: a program built against an older, shorter struct
   * must not be read past its end. ocal_context_create then checks struct_size itself, so
   * the copy carries the caller's value: one below a whole size_t (0: a struct not started
   * from ocal_context_options_init) would otherwise leave the defaults' and pass unseen. */
  if (options) {
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
    o.struct_size = options->struct_size;
  }
  const char *sel = o.device && *o.device ? o.device : device_env;
  char chosen[300];
  st = pick_device(sel, m->local_rank, chosen, sizeof chosen);
  if (st == OCAL_OK) {
    o.device = chosen;
    st = ocal_context_create(&o, &m->ctx);
  }
  /* Every rank of the node takes part in the identity exchange, also one that failed, so
   * that the others do not wait for it. */
  if (st == OCAL_OK) {
    ocal_context_get_cl_context(m->ctx, &m->cl_ctx);
    ocal_context_get_cl_device(m->ctx, &m->cl_dev);
    device_identity(m);
  } else {
    snprintf(m->device_id, sizeof m->device_id, "none:%d", m->rank);
  }
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", st != OCAL_OK ? ocal_last_error() : "");
  count_sharers(m, node);
  MPI_Comm_free(&node);
  if (st == OCAL_OK) {
    st = staging(m);
    if (st != OCAL_OK) snprintf(msg, sizeof msg, "%s", ocal_last_error());
  }
  /* Every rank says whether it got this far, also one that failed, so that the others do not
   * wait for it in the node-local path's set-up (which they then leave out). */
  int ok = st == OCAL_OK, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm);
  if (st != OCAL_OK) {
    destroy(m);
    return fail_with(st, msg);
  }
  if (all_ok)
    ocal_mpi__shared_setup(m);
  else
    snprintf(m->path, sizeof m->path, "ring: another rank failed ocal_mpi_create");
  int level = 0;
  MPI_Query_thread(&level);
  m->async = async && level == MPI_THREAD_MULTIPLE;
  if (m->async && pthread_create(&m->thread, NULL, progress, m) != 0) m->async = 0;
  live_add(m);
  *mpi = m;
  return OCAL_OK;
}

ocal_status ocal_mpi_release(ocal_mpi mpi) {
  if (!mpi) return OCAL_OK;
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  pthread_mutex_lock(&mpi->lock);
  int left = mpi->outstanding;
  pthread_mutex_unlock(&mpi->lock);
  if (left > 0)
    return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__,
                          "%d request(s) not finished: call ocal_mpi_wait on each first "
                          "(nothing was released)", left);
  if (mpi->async) {
    pthread_mutex_lock(&mpi->lock);
    mpi->stop = 1;
    pthread_cond_broadcast(&mpi->cond);
    pthread_mutex_unlock(&mpi->lock);
    pthread_join(mpi->thread, NULL);
  }
  destroy(mpi);
  return OCAL_OK;
}

ocal_status ocal_mpi_get_context(ocal_mpi mpi, ocal_context *ctx) {
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!ctx) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "ctx is NULL");
  *ctx = mpi->ctx;
  return OCAL_OK;
}

ocal_status ocal_mpi_get_info(ocal_mpi mpi, ocal_mpi_info *info) {
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!info) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "info is NULL");
  /* Only the caller's struct_size bytes are written, as for every struct ocal fills (this
   * library may not use libocal's helper); the first ocal_mpi_info with struct_size ends
   * with device_id. */
  const size_t min = offsetof(ocal_mpi_info, device_id) + sizeof info->device_id;
  if (info->struct_size < min || info->struct_size > sizeof *info) {
    char taken[48]; /* one size, or the range since the first version */
    if (min == sizeof *info)
      snprintf(taken, sizeof taken, "%zu", min);
    else
      snprintf(taken, sizeof taken, "%zu to %zu", min, sizeof *info);
    return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__,
                          "info->struct_size is %zu, but this library takes %s: set it to "
                          "sizeof(ocal_mpi_info) before the call",
                          info->struct_size, taken);
  }
  ocal_mpi_info all = {sizeof all};
  all.rank = mpi->rank;
  all.size = mpi->size;
  all.local_rank = mpi->local_rank;
  all.local_size = mpi->local_size;
  all.device_sharers = mpi->sharers;
  all.async = mpi->async;
  all.chunk_bytes = mpi->chunk;
  all.slots = mpi->slots;
  snprintf(all.device_id, sizeof all.device_id, "%s", mpi->device_id);
  all.nodes = mpi->nodes;
  all.shared = mpi->shared;
  all.small_bytes = mpi->small;
  snprintf(all.path, sizeof all.path, "%s", mpi->path);
  memcpy((char *)info + sizeof info->struct_size, (char *)&all + sizeof all.struct_size,
         info->struct_size - sizeof info->struct_size);
  return OCAL_OK;
}

const char *ocal_mpi_op_name(ocal_mpi_op op) {
  switch (op) {
  case OCAL_MPI_SUM: return "sum";
  case OCAL_MPI_MAX: return "max";
  case OCAL_MPI_MIN: return "min";
  }
  return "invalid";
}

/* ---- requests ---------------------------------------------------------------------------- */

static int type_index(ocal_dtype t) {
  switch (t) {
  case OCAL_F32: return 0;
  case OCAL_F64: return 1;
  case OCAL_I32: return 2;
  case OCAL_I64: return 3;
  default: return -1;
  }
}

/* Builds the accumulate kernel of a type and operation on first use (the calling thread
 * builds, under the lock; only the collectives' thread sets its arguments). */
static ocal_status ensure_kernel(ocal_mpi m, int t, ocal_mpi_op op) {
  static const char *types[OCAL_MPI__NTYPES] = {"-DT=float -DOCAL_FLOAT",
                                                "-DT=double -DOCAL_FLOAT -DOCAL_FP64",
                                                "-DT=int", "-DT=long"};
  static const char *ops[OCAL_MPI__NOPS] = {"-DOCAL_OP_SUM", "-DOCAL_OP_MAX", "-DOCAL_OP_MIN"};
  ocal_status st = OCAL_OK;
  pthread_mutex_lock(&m->lock);
  if (!m->cl_kernels[t][op]) {
    char opts[128];
    snprintf(opts, sizeof opts, "%s %s", types[t], ops[op]);
    if ((st = ocal_program_create(m->ctx, ocal_mpi__accumulate_source, opts, &m->progs[t][op])) ==
            OCAL_OK &&
        (st = ocal_kernel_create(m->progs[t][op], "ocal_mpi_accumulate", &m->kernels[t][op])) ==
            OCAL_OK &&
        (st = ocal_kernel_create(m->progs[t][op], "ocal_mpi_reduce_ordered",
                                 &m->ord_kernels[t][op])) == OCAL_OK &&
        (st = ocal_kernel_get_cl_kernel(m->ord_kernels[t][op], &m->cl_ord[t][op])) == OCAL_OK)
      st = ocal_kernel_get_cl_kernel(m->kernels[t][op], &m->cl_kernels[t][op]);
    if (st != OCAL_OK) { /* nothing half-made stays behind: the next call builds afresh */
      ocal_kernel_release(m->kernels[t][op]);
      ocal_kernel_release(m->ord_kernels[t][op]);
      ocal_program_release(m->progs[t][op]);
      m->kernels[t][op] = m->ord_kernels[t][op] = NULL;
      m->progs[t][op] = NULL;
      m->cl_kernels[t][op] = m->cl_ord[t][op] = NULL;
    }
  }
  pthread_mutex_unlock(&m->lock);
  return st;
}

static void invalid(req *r, ocal_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void invalid(req *r, ocal_status st, const char *fmt, ...) {
  if (!r->valid) return; /* the first problem is the one reported */
  r->valid = 0;
  r->invalid_status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->invalid_msg, sizeof r->invalid_msg, fmt, ap);
  va_end(ap);
}

static req *req_new(ocal_mpi m, const char *func, job_kind kind) {
  req *r = calloc(1, sizeof *r);
  int spare = 0;
  if (!r) {
    pthread_mutex_lock(&m->lock);
    r = m->spare;
    m->spare = NULL;
    pthread_mutex_unlock(&m->lock);
    if (!r) return NULL; /* the spare is in use too: this rank fails alone */
    memset(r, 0, sizeof *r);
    spare = 1;
  }
  r->is_spare = spare;
  r->magic = OCAL_MPI__REQ_MAGIC;
  r->m = m;
  r->func = func;
  r->kind = kind;
  r->valid = 1;
  r->tidx = -1;
  r->root = 0;
  r->op = OCAL_MPI_SUM;
  r->dtype = OCAL_U8;
  if (spare) invalid(r, OCAL_OUT_OF_HOST_MEMORY, "no host memory for the request");
  return r;
}

/* A view of the whole buffer, held by the request so the memory outlives a premature release;
 * checks that it belongs to the rank's context. */
static ocal_buffer hold(req *r, ocal_buffer buf, const char *what, size_t *numel, ocal_dtype *dt) {
  ocal_context c = NULL;
  *numel = 0;
  *dt = OCAL_U8;
  if (!buf || ocal_buffer_get_context(buf, &c) != OCAL_OK) {
    invalid(r, OCAL_INVALID_HANDLE, "%s is NULL or not a buffer", what);
    return NULL;
  }
  if (c != r->m->ctx) {
    invalid(r, OCAL_INVALID_ARGUMENT,
            "%s belongs to another context: create it in ocal_mpi_get_context's context", what);
    return NULL;
  }
  ocal_buffer_get_numel(buf, numel);
  ocal_buffer_get_dtype(buf, dt);
  ocal_buffer v = NULL;
  ocal_status st = ocal_buffer_view(buf, 0, 1, numel, &v);
  if (st != OCAL_OK) invalid(r, st, "no view of %s: %s", what, ocal_last_error());
  return v;
}

/* Whether two buffers share any byte of device memory (through the public escape hatch:
 * libocal's own helper is internal to it). */
static int overlap(ocal_buffer a, ocal_buffer b) {
  cl_mem ma = NULL, mb = NULL;
  size_t oa = 0, ob = 0, na = 0, nb = 0;
  ocal_dtype ta = OCAL_U8, tb = OCAL_U8;
  if (ocal_buffer_get_cl_mem(a, &ma, &oa) != OCAL_OK ||
      ocal_buffer_get_cl_mem(b, &mb, &ob) != OCAL_OK || !ma || ma != mb)
    return 0;
  ocal_buffer_get_numel(a, &na);
  ocal_buffer_get_numel(b, &nb);
  ocal_buffer_get_dtype(a, &ta);
  ocal_buffer_get_dtype(b, &tb);
  na *= ocal_dtype_size(ta);
  nb *= ocal_dtype_size(tb);
  return na && nb && oa < ob + nb && ob < oa + na;
}

static void check_reducible(req *r, ocal_dtype dt, ocal_mpi_op op) {
  if ((unsigned)op > OCAL_MPI_MIN)
    invalid(r, OCAL_INVALID_ARGUMENT, "op %d is not OCAL_MPI_SUM, OCAL_MPI_MAX or OCAL_MPI_MIN",
            (int)op);
  r->tidx = type_index(dt);
  if (r->tidx < 0)
    invalid(r, OCAL_TYPE_MISMATCH, "reductions take f32, f64, i32 or i64 buffers, not %s",
            ocal_dtype_name(dt));
  if (r->valid && ensure_kernel(r->m, r->tidx, op) != OCAL_OK)
    invalid(r, OCAL_BUILD_FAILED, "the device reduction kernel: %s", ocal_last_error());
}

static void req_free(req *r) {
  ocal_buffer_release(r->a);
  ocal_buffer_release(r->b);
  ocal_buffer_release(r->tmp);
  if (r->xfers) {
    for (size_t i = 0; i < r->nsend + r->nrecv; i++) ocal_buffer_release(r->xfers[i].buf);
    free(r->xfers);
  }
  if (r->start) clReleaseEvent(r->start);
  if (r->user_event) clReleaseEvent(r->user_event);
  r->magic = 0;
  if (r->is_spare) {
    ocal_mpi m = r->m;
    pthread_mutex_lock(&m->lock);
    m->spare = r;
    pthread_mutex_unlock(&m->lock);
    return;
  }
  free(r);
}

/* A blocking call on a handle with nothing queued or running runs its collective on the
 * calling thread (the hand-over to the progress thread and back costs more than a small
 * collective); an allreduce below m->small then needs no events at all (r->direct). Returns
 * 1 when it ran. */
static int run_here(req *r) {
  ocal_mpi m = r->m;
  if (!r->blocking || !m->async) return 0;
  pthread_mutex_lock(&m->lock);
  int idle = m->pending == 0 && !m->busy;
  if (idle) m->busy = 1, m->pending++, m->outstanding++;
  pthread_mutex_unlock(&m->lock);
  if (!idle) return 0;
  r->direct = r->kind == JOB_ALLREDUCE && (!r->valid || r->count * ocal_dtype_size(r->dtype) < m->small);
  if (!r->direct) {
    ocal_event marker = NULL;
    cl_event cl = NULL;
    if (ocal_context_enqueue_marker(m->ctx, &marker) == OCAL_OK &&
        ocal_event_get_cl_event(marker, &cl) == OCAL_OK) {
      clRetainEvent(cl);
      r->start = cl;
    }
    ocal_event_release(marker);
    if (!r->start)
      invalid(r, OCAL_OPENCL_ERROR, "no OpenCL event for the collective: %s", ocal_last_error());
  }
  ocal_mpi__run(r);
  pthread_mutex_lock(&m->lock);
  m->busy = 0;
  pthread_cond_signal(&m->cond); /* a request another thread queued meanwhile */
  pthread_mutex_unlock(&m->lock);
  finish(r);
  return 1;
}

/* Queues a checked request (or runs it now without the progress thread). Invalid requests
 * are queued too: the ranks' common check must see every rank's call. */
static ocal_status submit(req *r, ocal_mpi_request *out) {
  ocal_mpi m = r->m;
  cl_int err;
  if (run_here(r)) {
    *out = r;
    return OCAL_OK;
  }
  r->user_event = clCreateUserEvent(m->cl_ctx, &err);
  if (err != CL_SUCCESS) r->user_event = NULL;
  ocal_event marker = NULL;
  cl_event cl = NULL;
  if (ocal_context_enqueue_marker(m->ctx, &marker) == OCAL_OK && ocal_event_get_cl_event(marker, &cl) == OCAL_OK) {
    clRetainEvent(cl);
    r->start = cl;
  }
  ocal_event_release(marker);
  if (!r->start || !r->user_event)
    invalid(r, OCAL_OPENCL_ERROR, "no OpenCL event for the collective: %s", ocal_last_error());
  pthread_mutex_lock(&m->lock);
  m->outstanding++;
  pthread_mutex_unlock(&m->lock);
  if (m->async) {
    pthread_mutex_lock(&m->lock);
    if (m->tail) m->tail->next = r;
    else m->head = r;
    m->tail = r;
    m->pending++;
    pthread_cond_signal(&m->cond);
    pthread_mutex_unlock(&m->lock);
  } else {
    m->pending++;
    ocal_mpi__run(r);
    finish(r);
  }
  *out = r;
  return OCAL_OK;
}

/* Set by a blocking form around its call of the non-blocking form: the request it makes is
 * waited for at once, so it may run on this thread (run_here). */
static _Thread_local int blocking_call;

static ocal_status start_request(req *r, ocal_mpi_request *out, const char *func) {
  if (!r) return ocal_error_set(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for a request");
  r->blocking = blocking_call;
  return submit(r, out);
}

ocal_status ocal_mpi_iallreduce(ocal_mpi mpi, ocal_buffer buf, ocal_mpi_op op,
                                ocal_mpi_request *req_out) {
  const char *func = blocking_call ? "ocal_mpi_allreduce" : __func__; /* the call made */
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!req_out) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "req is NULL");
  *req_out = NULL;
  req *r = req_new(mpi, func, JOB_ALLREDUCE);
  if (r) {
    r->op = op;
    r->a = hold(r, buf, "buf", &r->count, &r->dtype);
    if (r->valid) check_reducible(r, r->dtype, op);
  }
  return start_request(r, req_out, __func__);
}

ocal_status ocal_mpi_ibroadcast(ocal_mpi mpi, ocal_buffer buf, int root, ocal_mpi_request *req_out) {
  const char *func = blocking_call ? "ocal_mpi_broadcast" : __func__; /* the call made */
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!req_out) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "req is NULL");
  *req_out = NULL;
  req *r = req_new(mpi, func, JOB_BROADCAST);
  if (r) {
    r->root = root;
    r->a = hold(r, buf, "buf", &r->count, &r->dtype);
    if (root < 0 || root >= mpi->size)
      invalid(r, OCAL_INVALID_ARGUMENT, "root %d is not a rank (0 to %d)", root, mpi->size - 1);
  }
  return start_request(r, req_out, __func__);
}

ocal_status ocal_mpi_iallgather(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                ocal_mpi_request *req_out) {
  const char *func = blocking_call ? "ocal_mpi_allgather" : __func__; /* the call made */
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!req_out) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "req is NULL");
  *req_out = NULL;
  req *r = req_new(mpi, func, JOB_ALLGATHER);
  if (r) {
    size_t rn = 0;
    ocal_dtype rt;
    r->a = hold(r, send, "send", &r->count, &r->dtype);
    r->b = hold(r, recv, "recv", &rn, &rt);
    if (r->valid && rt != r->dtype)
      invalid(r, OCAL_TYPE_MISMATCH, "send is %s but recv is %s", ocal_dtype_name(r->dtype),
              ocal_dtype_name(rt));
    if (r->valid && rn != r->count * (size_t)mpi->size)
      invalid(r, OCAL_SHAPE_MISMATCH,
              "recv has %zu elements; it needs %d ranks x %zu (send's) = %zu", rn, mpi->size,
              r->count, r->count * (size_t)mpi->size);
    if (r->valid && overlap(r->a, r->b))
      invalid(r, OCAL_INVALID_ARGUMENT,
              "send and recv overlap (views of one buffer): pass a send buffer of its own");
  }
  return start_request(r, req_out, __func__);
}

ocal_status ocal_mpi_ireduce_scatter(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                     ocal_mpi_op op, ocal_mpi_request *req_out) {
  const char *func = blocking_call ? "ocal_mpi_reduce_scatter" : __func__; /* the call made */
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!req_out) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "req is NULL");
  *req_out = NULL;
  req *r = req_new(mpi, func, JOB_REDUCE_SCATTER);
  if (r) {
    size_t sn = 0;
    ocal_dtype stype;
    r->op = op;
    r->a = hold(r, send, "send", &sn, &stype);
    r->b = hold(r, recv, "recv", &r->count, &r->dtype);
    if (r->valid && stype != r->dtype)
      invalid(r, OCAL_TYPE_MISMATCH, "send is %s but recv is %s", ocal_dtype_name(stype),
              ocal_dtype_name(r->dtype));
    if (r->valid && sn != r->count * (size_t)mpi->size)
      invalid(r, OCAL_SHAPE_MISMATCH,
              "send has %zu elements; it needs %d ranks x %zu (recv's) = %zu", sn, mpi->size,
              r->count, r->count * (size_t)mpi->size);
    /* recv written over part of send would change send, which mpi.h leaves unchanged. */
    if (r->valid && overlap(r->a, r->b))
      invalid(r, OCAL_INVALID_ARGUMENT,
              "send and recv overlap (views of one buffer): pass a recv buffer of its own");
    if (r->valid) check_reducible(r, r->dtype, op);
    if (r->valid && sn > 0 &&
        ocal_buffer_create(mpi->ctx, r->dtype, 1, &sn, &r->tmp) != OCAL_OK)
      invalid(r, OCAL_OUT_OF_DEVICE_MEMORY, "no device memory for a working copy of send: %s",
              ocal_last_error());
  }
  return start_request(r, req_out, __func__);
}

ocal_status ocal_mpi_iexchange(ocal_mpi mpi, size_t nsend, const ocal_mpi_transfer *sends,
                               size_t nrecv, const ocal_mpi_transfer *recvs,
                               ocal_mpi_request *req_out) {
  ocal_status st = check_mpi(mpi, __func__);
  if (st != OCAL_OK) return st;
  if (!req_out) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "req is NULL");
  *req_out = NULL;
  if ((nsend && !sends) || (nrecv && !recvs))
    return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "sends or recvs is NULL");
  /* Not a collective: a wrong argument fails this rank's call at once. */
  for (size_t i = 0; i < nsend + nrecv; i++) {
    const ocal_mpi_transfer *t = i < nsend ? &sends[i] : &recvs[i - nsend];
    const char *what = i < nsend ? "sends" : "recvs";
    size_t k = i < nsend ? i : i - nsend, n = 0, end;
    ocal_context c = NULL;
    if (!t->buf || ocal_buffer_get_context(t->buf, &c) != OCAL_OK || c != mpi->ctx)
      return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__,
                            "%s[%zu].buf is NULL or not a buffer of ocal_mpi_get_context's context",
                            what, k);
    ocal_buffer_get_numel(t->buf, &n);
    if (t->count > SIZE_MAX - t->offset || (end = t->offset + t->count) > n)
      return ocal_error_set(OCAL_SHAPE_MISMATCH, __func__,
                            "%s[%zu]: elements %zu to %zu lie outside the buffer's %zu", what, k,
                            t->offset, t->offset + t->count, n);
    if (t->peer < 0 || t->peer >= mpi->size || t->tag < 0 || t->tag >= OCAL_MPI__TAG)
      return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__,
                            "%s[%zu]: peer %d or tag %d out of range (peers 0 to %d, tags 0 to %d)",
                            what, k, t->peer, t->tag, mpi->size - 1, OCAL_MPI__TAG - 1);
  }
  req *r = req_new(mpi, __func__, JOB_EXCHANGE);
  if (r && r->is_spare) { /* not a collective: no peer waits for a check */
    req_free(r);
    r = NULL;
  }
  if (!r) return ocal_error_set(OCAL_OUT_OF_HOST_MEMORY, __func__, "no memory for a request");
  r->xfers = calloc(nsend + nrecv + 1, sizeof *r->xfers);
  if (!r->xfers) {
    req_free(r);
    return ocal_error_set(OCAL_OUT_OF_HOST_MEMORY, __func__, "no memory for a request");
  }
  r->nsend = nsend;
  r->nrecv = nrecv;
  for (size_t i = 0; i < nsend + nrecv; i++) {
    r->xfers[i] = i < nsend ? sends[i] : recvs[i - nsend];
    size_t n;
    ocal_dtype dt;
    r->xfers[i].buf = hold(r, r->xfers[i].buf, "a transfer's buffer", &n, &dt);
  }
  return submit(r, req_out);
}

static ocal_status check_req(ocal_mpi_request *req_p, const char *func) {
  if (!req_p || !*req_p || (*req_p)->magic != OCAL_MPI__REQ_MAGIC)
    return ocal_error_set(OCAL_INVALID_ARGUMENT, func,
                          "req is NULL, or not a request in flight (waited for already?)");
  return OCAL_OK;
}

/* Ends a finished request on the calling thread: its status and message become the thread's. */
static ocal_status conclude(ocal_mpi_request *req_p) {
  req *r = *req_p;
  ocal_mpi m = r->m;
  pthread_mutex_lock(&m->lock);
  m->outstanding--;
  pthread_mutex_unlock(&m->lock);
  ocal_status st = r->status;
  if (st != OCAL_OK) ocal_error_set(st, r->func, "%s", r->msg);
  req_free(r);
  *req_p = NULL;
  return st;
}

ocal_status ocal_mpi_wait(ocal_mpi_request *req_p) {
  ocal_status st = check_req(req_p, __func__);
  if (st != OCAL_OK) return st;
  ocal_mpi m = (*req_p)->m;
  pthread_mutex_lock(&m->lock);
  while (!(*req_p)->done) pthread_cond_wait(&m->done_cond, &m->lock);
  pthread_mutex_unlock(&m->lock);
  return conclude(req_p);
}

ocal_status ocal_mpi_test(ocal_mpi_request *req_p, int *done) {
  ocal_status st = check_req(req_p, __func__);
  if (st != OCAL_OK) return st;
  if (!done) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "done is NULL");
  ocal_mpi m = (*req_p)->m;
  pthread_mutex_lock(&m->lock);
  *done = (*req_p)->done;
  pthread_mutex_unlock(&m->lock);
  /* A caller polling in a loop would otherwise take the lock over and over: with more threads
   * than processors the progress thread, which needs it to finish the request, can starve. */
  if (!*done) sched_yield();
  return *done ? conclude(req_p) : OCAL_OK;
}

ocal_status ocal_mpi_request_event(ocal_mpi_request r, ocal_event *event) {
  if (!event) return ocal_error_set(OCAL_INVALID_ARGUMENT, __func__, "event is NULL");
  *event = NULL;
  if (!r || r->magic != OCAL_MPI__REQ_MAGIC)
    return ocal_error_set(OCAL_INVALID_HANDLE, __func__, "req is NULL or not a request in flight");
  if (!r->user_event)
    return ocal_error_set(OCAL_OPENCL_ERROR, __func__, "the request has no OpenCL event");
  return ocal_event_from_cl(r->user_event, event);
}

/* ---- blocking forms ---------------------------------------------------------------------- */

/* Each checks its handle itself first, so that a bad one is reported under the name the
 * caller used, not the non-blocking form's (the request's own errors already carry the
 * collective's plain name). */

ocal_status ocal_mpi_allreduce(ocal_mpi mpi, ocal_buffer buf, ocal_mpi_op op) {
  ocal_mpi_request r;
  if (check_mpi(mpi, __func__) != OCAL_OK) return OCAL_INVALID_HANDLE;
  blocking_call = 1;
  ocal_status st = ocal_mpi_iallreduce(mpi, buf, op, &r);
  blocking_call = 0;
  return st != OCAL_OK ? st : ocal_mpi_wait(&r);
}

ocal_status ocal_mpi_broadcast(ocal_mpi mpi, ocal_buffer buf, int root) {
  ocal_mpi_request r;
  if (check_mpi(mpi, __func__) != OCAL_OK) return OCAL_INVALID_HANDLE;
  blocking_call = 1;
  ocal_status st = ocal_mpi_ibroadcast(mpi, buf, root, &r);
  blocking_call = 0;
  return st != OCAL_OK ? st : ocal_mpi_wait(&r);
}

ocal_status ocal_mpi_allgather(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv) {
  ocal_mpi_request r;
  if (check_mpi(mpi, __func__) != OCAL_OK) return OCAL_INVALID_HANDLE;
  blocking_call = 1;
  ocal_status st = ocal_mpi_iallgather(mpi, send, recv, &r);
  blocking_call = 0;
  return st != OCAL_OK ? st : ocal_mpi_wait(&r);
}

ocal_status ocal_mpi_reduce_scatter(ocal_mpi mpi, ocal_buffer send, ocal_buffer recv,
                                    ocal_mpi_op op) {
  ocal_mpi_request r;
  if (check_mpi(mpi, __func__) != OCAL_OK) return OCAL_INVALID_HANDLE;
  blocking_call = 1;
  ocal_status st = ocal_mpi_ireduce_scatter(mpi, send, recv, op, &r);
  blocking_call = 0;
  return st != OCAL_OK ? st : ocal_mpi_wait(&r);
}
