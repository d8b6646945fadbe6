/* ocal — declarations shared by the library's source files (never installed).
 *
 * Internal non-static names carry the prefix ocal__ so they cannot clash with users' names;
 * the shared object exports only OCAL_API declarations. */
#ifndef OCAL_INTERNAL_H
#define OCAL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The core's own public headers only: the core knows no operation (tests/layering.sh). */
#include "ocal/buffer.h"
#include "ocal/cl.h"
#include "ocal/context.h"
#include "ocal/device.h"
#include "ocal/export.h"
#include "ocal/memory.h"
#include "ocal/status.h"
#include "ocal/types.h"
#include "ocal/version.h"
#include "settings.h"

/* ---- errors (status.c) ---------------------------------------------------------------- */

/* Records "func: message" as the calling thread's last error and returns status. */
ocal_status ocal__fail(ocal_status status, const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define OCAL_FAIL(status, ...) ocal__fail((status), __func__, __VA_ARGS__)

/* Copies a public option struct that starts with `size_t struct_size` into *dst, which the
 * caller has filled with the defaults: only the caller's struct_size bytes are read, so a
 * program compiled against an older, shorter struct leaves the newer fields at their
 * defaults. min_size is the size of the struct in the first version that had struct_size
 * (fixed, not sizeof, once fields are added); a struct_size below it or above sizeof the
 * library's own struct (a newer program on an older library, or a struct not started from
 * its _init function) fails with OCAL_INVALID_ARGUMENT naming the public call and init. */
ocal_status ocal__options_copy(const char *func, const char *init, void *dst, size_t dst_size,
                               const void *src, size_t min_size);

/* The public structs the library fills start with `size_t struct_size`, which the caller
 * sets to sizeof the struct before the call. ocal__filled_check checks it (dst may be NULL
 * when NULL is allowed): min_size is the struct's size in the first version that had
 * struct_size (fixed, not sizeof, once fields are added); outside min_size to full_size it
 * fails with OCAL_INVALID_ARGUMENT naming the public call, the parameter and the type.
 * ocal__filled_write then copies the library's full struct src into dst, writing only the
 * caller's struct_size bytes (struct_size itself is left as the caller set it), so a program
 * compiled against an older, shorter struct gets the fields it knows and nothing past them. */
#define OCAL__SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* The first ocal_device_info with struct_size ends with has_fp64. */
#define OCAL__DEVICE_INFO_MIN OCAL__SIZE_THROUGH(ocal_device_info, has_fp64)
ocal_status ocal__filled_check(const char *func, const char *param, const char *type,
                               const void *dst, size_t min_size, size_t full_size);
void ocal__filled_write(void *dst, const void *src);

/* Records a failed OpenCL call: its name (the text of `call` up to the first '('), the
 * error's name, the device; returns the ocal status the error maps to. */
ocal_status ocal__cl_fail(const char *device_name, cl_int err, const char *call,
                          const char *func);

/* The one place OpenCL return codes are checked: on failure, returns from the calling
 * function with the mapped status and a message that quotes the failing call. */
#define OCAL_CL_CHECK(device_name, expr)                                  \
  do {                                                                    \
    cl_int ocal__err = (expr);                                            \
    if (ocal__err != CL_SUCCESS)                                          \
      return ocal__cl_fail((device_name), ocal__err, #expr, __func__);    \
  } while (0)

/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_UNKNOWN_ERROR". */
const char *ocal__cl_error_name(cl_int err);

/* Puts "func: " before the thread's last error message: for a failure of an internal step
 * (device memory allocation) that the public call `func` passes on. */
void ocal__prefix_error(const char *func);

/* Puts the public call `func` in place of "ocal" where the thread's last error names no call
 * ("ocal: ..."): for an internal step that fails without knowing which public call it serves
 * (a library kernel that the device cannot run). Any other message stays as it is. */
void ocal__claim_error(const char *func);

/* Appends to the thread's last error message (for build logs and device lists). */
void ocal__append_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- devices (device.c) --------------------------------------------------------------- */

/* Whether a device selector is NULL, empty or only blanks: the ones OCAL_DEVICE stands in for. */
int ocal__selector_blank(const char *selector);

/* Resolves a selector (see ocal/device.h) to a device and its OpenCL handles; a blank one
 * means `env_selector` (OCAL_DEVICE as the settings read it), else the default order (GPU,
 * accelerator, CPU); one of 256 characters or more is refused. Messages name `func`. */
ocal_status ocal__device_resolve(const char *func, const char *selector, const char *env_selector,
                                 ocal_device_info *info,
                                 cl_platform_id *platform, cl_device_id *device);

/* Finds a device among those the ICD loader lists, for a context adopting it: its facts and
 * platform. OCAL_INVALID_ARGUMENT (naming `func`) when it is none of them. */
ocal_status ocal__device_find(const char *func, cl_device_id device, ocal_device_info *info,
                              cl_platform_id *platform);

/* The OpenCL calls through which device.c enumerates, as pointers a white-box test may
 * replace to make one fail (they default to the real calls; tests/check_device.c). */
typedef cl_int (*ocal__cl_get_device_ids_fn)(cl_platform_id, cl_device_type, cl_uint,
                                             cl_device_id *, cl_uint *);
typedef cl_int (*ocal__cl_get_device_info_fn)(cl_device_id, cl_device_info, size_t, void *,
                                              size_t *);
extern ocal__cl_get_device_ids_fn ocal__cl_get_device_ids;
extern ocal__cl_get_device_info_fn ocal__cl_get_device_info;

/* ---- contexts (context.c) ------------------------------------------------------------- */

#define OCAL__CONTEXT_MAGIC 0x6f63616cu /* "ocal" */
#define OCAL__BUFFER_MAGIC 0x6f627566u  /* "obuf" */

typedef struct ocal__program ocal__program; /* program.c */
typedef struct ocal__kernel ocal__kernel;   /* program.c */

/* What limits.c adds to the device's facts (ctx->info holds the rest, after emulation). */
typedef struct ocal__limits {
  int emulated;            /* 1 when the limits option or OCAL_LIMITS made the device smaller */
  unsigned cl_version;     /* OpenCL version, major * 100 + minor * 10 (120, 300), 0 unknown */
  unsigned sub_group_size; /* SIMD width the driver reports (warp, wavefront), 0 unknown */
  int int64_atomics;       /* 1 when the device has cl_khr_int64_base_atomics */
  unsigned vendor_id;      /* CL_DEVICE_VENDOR_ID */
  unsigned compute_capability; /* major * 10 + minor where the driver reports one
                                  (cl_nv_device_attribute_query: 90 on an H100), else 0 */
  char build_options[24];  /* "-cl-std=CL1.2" when a lower OpenCL version is emulated */
  char text[256];          /* the limits spec applied, "" when none */
} ocal__limits;

/* State that an area built on the core (BLAS, FFT, ...) keeps per context, so the core needs
 * to know nothing about operations: found by the address of a static `key` in the area's
 * file, created on first use, destroyed when the context goes. */
typedef struct ocal__attachment {
  struct ocal__attachment *next;
  const void *key;
  void *data;
  void (*destroy)(void *data);
} ocal__attachment;

/* What a context's compiles cost, beyond ocal_cache_stats' count (kept out of that public
 * struct, which callers allocate, so its size stays the ABI baseline's): kernels per program
 * and the size of the compiler's output show what a first call builds that it never runs.
 * Guarded by the context lock; bench/first_calls reads it. */
typedef struct ocal__compile_tally {
  uint64_t kernels;       /* kernels in the programs compiled from source */
  uint64_t source_bytes;  /* bytes of source handed to the compiler (before #if guards) */
  uint64_t binary_bytes;  /* bytes of the built binaries (PTX on NVIDIA), 0 where unknown */
} ocal__compile_tally;

/* Copies the context's compile tally (under its lock). */
void ocal__context_compile_tally(ocal_context ctx, ocal__compile_tally *out);

/* The context's fields belong to src/core: areas read what they need through the accessors
 * below (tests/layering.sh checks that no area reaches into the struct). */
struct ocal_context_s {
  uint32_t magic;
  atomic_int refs; /* the user's reference plus one per live buffer */
  atomic_int released; /* the user's reference is gone (buffers may keep the context) */
  cl_platform_id platform;
  cl_device_id device;
  cl_context cl_ctx;
  cl_command_queue queue;
  ocal_device_info info; /* the device's facts, made smaller by OCAL_LIMITS (limits.c) */
  ocal__limits limits;
  int fp64;        /* double precision usable (device has it and it was not turned off) */
  char *cache_dir; /* disk cache directory, NULL when the disk cache is off */
  pthread_mutex_t lock; /* guards programs and stats */
  ocal__program *programs;
  ocal_cache_stats stats;
  ocal__compile_tally compiled; /* what the compiler was given and made (program.c) */
  ocal__attachment *attachments;
  struct ocal__memory *memory; /* pool, pinned blocks, transfer queue, staging (memory.c) */
  ocal__settings settings; /* the OCAL_* variables, read once at creation (settings.c) */
};

/* Validates a context handle; returns OCAL_OK or OCAL_INVALID_HANDLE with a message. */
ocal_status ocal__check_context(ocal_context ctx, const char *func);
/* A known element type that the context can hold (f64 and c64 need its fp64); messages
 * name func. */
ocal_status ocal__check_dtype(ocal_context ctx, ocal_dtype dtype, const char *func);

/* Returns the context's attachment for `key`, calling create(ctx, &data) on first use (under
 * the context lock, so create must not take it; its failure status is returned as is, its
 * message claimed for `func` when it names no call, as create does not know which public call
 * it serves). destroy(data) runs at context release, after the queue has finished, before it
 * goes. */
ocal_status ocal__context_attachment(ocal_context ctx, const void *key,
                                     ocal_status (*create)(ocal_context ctx, void **data),
                                     void (*destroy)(void *data), void **data,
                                     const char *func);

void ocal__context_retain(ocal_context ctx);
void ocal__context_unref(ocal_context ctx);

/* What areas may know of a context (valid for its lifetime; no reference is taken): its
 * OpenCL objects, the device's facts (made smaller by emulated limits), whether double
 * precision may be used, the disk cache directory (NULL when off), the extra build options
 * of an emulated OpenCL version ("" when none), the device's vendor id, its compute
 * capability and its SIMD width (ocal__limits). */
cl_platform_id ocal__context_platform(ocal_context ctx);
cl_device_id ocal__context_device(ocal_context ctx);
cl_context ocal__context_cl(ocal_context ctx);
cl_command_queue ocal__context_queue(ocal_context ctx);
const ocal_device_info *ocal__context_info(ocal_context ctx);
int ocal__context_fp64(ocal_context ctx);
const char *ocal__context_cache_dir(ocal_context ctx);
const char *ocal__context_build_options(ocal_context ctx);
unsigned ocal__context_vendor_id(ocal_context ctx);
unsigned ocal__context_compute_capability(ocal_context ctx);
/* ptx_hints.c: the gate of the NVIDIA cache-hint loads (cl/ptx_load.cl). Allowed: the driver
 * reports a PTX compute capability (inline PTX reaches no other compiler). Choose: `named`
 * where a setting names a hint (named != unset), else `automatic` where allowed and no build
 * with hints was refused before, else `plain`. Type: the PTX type and register class of a
 * load of dtype (0 for types without one). */
int ocal__ptx_hints_allowed(ocal_context ctx);
int ocal__ptx_hint_choose(ocal_context ctx, int named, int unset, int automatic, int plain,
                          int refused);
int ocal__ptx_type(ocal_dtype dtype, const char **type, const char **reg);
unsigned ocal__context_sub_group_size(ocal_context ctx);
int ocal__context_int64_atomics(ocal_context ctx);

/* ---- device limits (limits.c) -------------------------------------------------------- */

/* The one place that decides the limits a context plans with: reads what the driver reports
 * beyond ctx->info, applies the limits option (else OCAL_LIMITS: "key=value,..." or a
 * profile name: amd, intel-igpu, mobile), clamping so the device only ever looks smaller,
 * and sets ctx->fp64 from the device, fp64_option (-1: OCAL_FP64) and the limits. A bad spec
 * fails with OCAL_INVALID_ARGUMENT naming `func` and where the spec came from. */
ocal_status ocal__limits_init(ocal_context ctx, const char *option, int fp64_option,
                              const char *func);

/* Whether an OCAL_LIMITS spec parses (its keys, values and profiles), with no device: the
 * settings table's check, so ocal_setting_get refuses what ocal_context_create refuses. */
int ocal__limits_spec_valid(const char *spec);

/* Checks an explicit work-group size against the kernel's and the device's (emulated)
 * limits, so a planner that ignores them fails here under emulation too. */
ocal_status ocal__limits_check_launch(ocal_context ctx, const ocal__kernel *k, cl_uint dims,
                                      const size_t *local, const char *func);

/* ---- device memory (alloc.c) ---------------------------------------------------------- */

/* The one function through which ocal allocates device memory: served by the context's
 * caching pool (pool.c), which may hand out a cl_mem larger than asked. bytes > 0. A failure's
 * message starts with `func`, the public call being served, then says the allocation failed. */
ocal_status ocal__device_alloc(ocal_context ctx, size_t bytes, cl_mem *mem, const char *func);
/* Returns memory from ocal__device_alloc. Safe while queued commands still use it: the pool
 * hands it out again only to commands that are ordered after them. */
void ocal__device_free(ocal_context ctx, cl_mem mem);

/* A scratch buffer of at least `bytes` bytes: *mem (NULL at first) of *have bytes, replaced
 * by a larger one (half as large again at least, 64 KiB at least) when it is too small. The
 * caller serialises the operations that use it. Failures name `func`. */
ocal_status ocal__scratch_reserve(ocal_context ctx, cl_mem *mem, size_t *have, size_t bytes,
                                  const char *func);

/* The tile states of a single-pass scan with decoupled look-back (cl/scan.cl's
 * NAME_lookback, and generated scans): a ticket counter and 8 words per tile (`cap` tiles):
 * flags and two-word values, or packed words (cl/scan.cl). `tickets` counts the tickets handed out, `epoch` the launches (flags carry
 * it, so the buffer is cleared only when it is new or grows, or the epoch wraps). Zeroed
 * (all NULL/0) before first use; free `mem` with ocal__device_free. */
typedef struct ocal__lookback {
  cl_mem mem;
  size_t cap;
  cl_uint tickets, epoch;
} ocal__lookback;

/* With the owner's lock held: state for `tiles` tiles, and this launch's ticket base and
 * epoch (the kernel's ticket_base and epoch arguments). Failures name `func`. */
ocal_status ocal__lookback_reserve(ocal_context ctx, ocal__lookback *lb, size_t tiles,
                                   cl_uint *base, cl_uint *epoch, const char *func);

/* Whether the device runs a single-pass scan: one pass needs work-groups that, once started,
 * keep running while others wait for them. GPUs and CPU drivers give that (a started group
 * holds a compute unit or a thread until it ends); accelerators and unknown devices need
 * not, so they keep the three-pass scans whatever OCAL_SCAN says. Among the others the
 * choice depends on the device type and OCAL_SCAN only (auto and single: one pass; three),
 * never on sizes or timings. */
int ocal__lookback_device(ocal_context ctx);

/* ---- memory: pool, pinned host memory, transfer queue (pool.c, transfer.c) ----------- */

/* Sets up the context's memory state from its options (at context creation). */
ocal_status ocal__memory_init(ocal_context ctx, const ocal_context_options *options);
/* Finishes the transfer queue and frees everything the memory state holds (at release,
 * after the main queue has finished and the attachments are gone). */
void ocal__memory_destroy(ocal_context ctx);
/* Waits for every command of the context's transfer queues (those created so far); the
 * OpenCL error of the first that fails, attributed to func. */
ocal_status ocal__transfer_finish(ocal_context ctx, const char *func);

/* ---- buffers (buffer.c) --------------------------------------------------------------- */

struct ocal_buffer_s {
  uint32_t magic;
  atomic_int refs;      /* the user's reference plus one per live view */
  atomic_int released;  /* the user's reference is gone: the handle is dead to the API even
                           while views keep the struct (and its memory) alive */
  ocal_context ctx;
  ocal_buffer base;     /* the buffer that owns the memory; NULL when this one does */
  cl_mem mem;           /* the memory (the base's for views); NULL when empty */
  size_t offset;        /* first element within mem, in elements */
  ocal_dtype dtype;
  int ndim;
  size_t shape[OCAL_MAX_DIMS];
  size_t numel;
  int adopted;          /* mem came from ocal_buffer_from_cl_mem: retained, not the pool's */
};

ocal_status ocal__check_buffer(ocal_buffer buf, const char *func);
/* The same, the message naming the argument ("x", "b", ...). */
ocal_status ocal__check_buffer_arg(ocal_buffer buf, const char *name, const char *func);
/* Whether two buffers (views) share bytes of one cl_mem. */
int ocal__buffers_overlap(ocal_buffer a, ocal_buffer b);

/* The one way messages write a shape: "[4, 6]" ("[]" for no dimensions). Writes at most size
 * bytes (size > 0) and returns out, so that it can stand in a message's arguments. */
const char *ocal__shape_format(int ndim, const size_t *shape, char *out, size_t size);

/* Checks a host transfer's arguments; *bytes and *origin receive its size and byte offset. */
ocal_status ocal__check_transfer(ocal_buffer buf, size_t offset, size_t count, const void *host,
                                 const char *func, size_t *bytes, size_t *origin);

/* A blocking transfer of pageable host memory through the pinned staging ring (transfer.c),
 * when the context stages transfers of that size: returns 1 with *status set when it did
 * the transfer, 0 when the caller should transfer directly. A failure names `func`, the
 * public call being served. */
int ocal__staged_transfer(ocal_context ctx, int write, cl_mem mem, size_t origin, size_t bytes,
                          void *host, ocal_status *status, const char *func);

/* Wraps a cl_event into an ocal_event (event.c); on failure waits for and frees it, and the
 * message names `func`, the public call being served. */
ocal_status ocal__event_wrap(cl_event cl, ocal_event *out, const char *func);

/* ---- embedded .cl sources (generated cl_sources.c) ------------------------------------ */

typedef struct ocal__source {
  const char *name; /* file name without .cl, e.g. "fill" */
  const char *text;
} ocal__source;

extern const ocal__source ocal__sources[];
extern const size_t ocal__source_count;

/* ---- programs and kernels (program.c, disk_cache.c) ----------------------------------- */

/* A kernel from the context's cache. The cl_kernel is shared: hold `lock` while setting its
 * arguments and enqueuing it (ocal__kernel_lock / unlock). */
struct ocal__kernel {
  struct ocal__kernel *next;
  char *name;
  cl_kernel kernel;
  size_t work_group_size; /* CL_KERNEL_WORK_GROUP_SIZE on this device, within the limits */
  size_t preferred_multiple;
  pthread_mutex_t lock;
};

/* Returns the built program for (source, options), from the memory cache, else the disk
 * cache, else by compiling it. `source_name` labels messages ("fill.cl"). */
ocal_status ocal__program_get(ocal_context ctx, const char *source_name, const char *source,
                              const char *options, ocal__program **program);

/* Where ocal__program_get_from found a program: the answer to "did this call compile, and
 * did it come from or go to the disk cache", given by the call itself (a caller that diffed
 * the context's counters would also count other threads' builds). */
typedef enum ocal__program_origin {
  OCAL__PROGRAM_FROM_MEMORY,  /* the context's memory cache */
  OCAL__PROGRAM_FROM_DISK,    /* a binary from the disk cache */
  OCAL__PROGRAM_BUILT,        /* compiled now; the disk cache is off */
  OCAL__PROGRAM_BUILT_STORED  /* compiled now and offered to the disk cache */
} ocal__program_origin;

/* ocal__program_get, also saying where the program came from (origin may be NULL; set on
 * success only), with `func`, the public call being served, starting any message. The forms
 * without func (ocal__program_get, ocal__kernel_get, ocal__library_kernel) start theirs with
 * "ocal": new code passes func. */
ocal_status ocal__program_get_from(ocal_context ctx, const char *source_name, const char *source,
                                   const char *options, ocal__program **program,
                                   ocal__program_origin *origin, const char *func);

/* The OpenCL program of a cached program, and the source it was built from (both owned by
 * the context's cache: valid until the context goes). For user kernels (src/gen/). */
cl_program ocal__program_cl(const ocal__program *program);
const char *ocal__program_source(const ocal__program *program);

/* What the driver said of argument `index` of kernel `kernel_name` when a program built with
 * -cl-kernel-arg-info was compiled (kept with its disk cache entry, as a binary loaded back
 * may have lost it): the kernel's argument count, the address qualifier, the type and the
 * name (cut to the sizes given). 0 on success, -1 when the program holds no such facts. */
int ocal__program_arg_fact(const ocal__program *program, const char *kernel_name,
                           unsigned index, unsigned *nargs, cl_kernel_arg_address_qualifier *aq,
                           char *type, size_t type_size, char *name, size_t name_size);

/* Returns kernel `kernel_name` of a program (created once, then cached); a failure names
 * func (NULL: "ocal"). */
ocal_status ocal__kernel_get(ocal_context ctx, ocal__program *program, const char *kernel_name,
                             ocal__kernel **kernel);
ocal_status ocal__kernel_get_for(ocal_context ctx, ocal__program *program, const char *kernel_name,
                                 ocal__kernel **kernel, const char *func);

/* Shortcut: a kernel of one of the library's embedded cl/ sources. */
ocal_status ocal__library_kernel(ocal_context ctx, const char *source_name, const char *options,
                                 const char *kernel_name, ocal__kernel **kernel);

/* ocal__library_kernel, also saying where its program came from (see ocal__program_origin;
 * origin may be NULL), with func, the public call being served, starting any message. */
/* Appends the compiler's log of program on the context's device to the last error. */
void ocal__append_build_log(ocal_context ctx, cl_program program);
/* ptx.c: build options containing -DOCAL_PTX_TARGET=NAME ask for the program to be rebuilt
 * from its PTX for target NAME, its "//@" lines made live (NVIDIA only). The option's target
 * (copied into target), or NULL when options do not ask. */
const char *ocal__ptx_target_option(const char *options, char *target, size_t size);
/* PTX text with its ".target" directive naming `target` and every "//@" removed (the PTX
 * ISA version raised to 8.3 where the text uses tensormap instructions); a new string, NULL
 * when text is not PTX with .version and .target directives (or no memory). */
char *ocal__ptx_retarget_text(const char *text, const char *target);
/* Replaces the built *program by its PTX retargeted; OCAL_BUILD_FAILED where the binary is not
 * PTX or the driver refuses it (*program then unchanged). */
ocal_status ocal__ptx_retarget(ocal_context ctx, const char *source_name, const char *target,
                               cl_program *program, const char *func);
ocal_status ocal__library_kernel_from(ocal_context ctx, const char *source_name,
                                      const char *options, const char *kernel_name,
                                      ocal__kernel **kernel, ocal__program_origin *origin,
                                      const char *func);

/* Frees every cached program and kernel of a context (at context release). */
void ocal__program_cache_clear(ocal_context ctx);

/* Build options for element type dtype: "-DT=float -DOCAL_DTYPE_f32" and the fp64 pragma
 * switch. F16 and BF16 give their storage, "-DT=ushort -DOCAL_DTYPE_f16": kernels that only
 * move bits (fill) take them as they are; kernels that compute must test OCAL_DTYPE_f16/bf16.
 * Writes at most size bytes. */
void ocal__dtype_options(ocal_dtype dtype, char *out, size_t size);

/* OpenCL C name of an element type ("float", "uchar"), and its kind. */
const char *ocal__dtype_cl_type(ocal_dtype dtype);
int ocal__dtype_is_float(ocal_dtype dtype);   /* f32, f64 */
int ocal__dtype_is_signed(ocal_dtype dtype);  /* i32, i64 (the signed integers) */
int ocal__dtype_is_complex(ocal_dtype dtype); /* c32, c64 */
int ocal__dtype_is_half(ocal_dtype dtype);    /* f16, bf16: stored in 16 bits, computed in f32 */

/* Fails with OCAL_UNSUPPORTED, naming func, when dtype is f16 or bf16: for operations that do
 * not take them. `what` names the operation's inputs in the message ("FFT plans"). */
ocal_status ocal__reject_half(ocal_dtype dtype, const char *what, const char *func);

/* One f32 to an F16 or BF16 bit pattern (round to nearest even), and back. */
uint16_t ocal__half_from_float(ocal_dtype dtype, float v);
float ocal__half_to_float(ocal_dtype dtype, uint16_t h);

/* One kernel argument: its size in bytes and a pointer to its value. */
typedef struct ocal__arg {
  size_t size;
  const void *value;
} ocal__arg;
#define OCAL__ARG(v) ((ocal__arg){sizeof(v), &(v)})

/* Sets the arguments of a cached kernel and enqueues a grid-stride launch over n items,
 * holding the kernel's lock for both (the one way ocal's operations launch kernels); a
 * failure names `func`, the public call being served. */
ocal_status ocal__kernel_run(ocal_context ctx, ocal__kernel *k, size_t n, size_t nargs,
                             const ocal__arg *args, const char *func);

/* The same over a cols x rows range: dimension 0 covers the columns exactly (the kernel
 * guards get_global_id(0) < cols); dimension 1 may be smaller than rows (GPUs cap it), so
 * the kernel loops over rows with stride get_global_size(1). */
ocal_status ocal__kernel_run_2d(ocal_context ctx, ocal__kernel *k, size_t cols, size_t rows,
                                size_t nargs, const ocal__arg *args, const char *func);

/* Sets the arguments and enqueues one launch over an explicit range: `dims` dimensions,
 * `global` items, `local` items per work-group (NULL: the driver's choice), holding the
 * kernel's lock; a failure names `func`, the public call being served. */
ocal_status ocal__kernel_run_nd(ocal_context ctx, ocal__kernel *k, cl_uint dims,
                                const size_t *global, const size_t *local, size_t nargs,
                                const ocal__arg *args, const char *func);

/* The largest power of two <= want, <= cap and <= what kernel k allows per work-group. */
size_t ocal__kernel_pow2_local(const ocal__kernel *k, size_t want, size_t cap);

/* The one clEnqueueNDRangeKernel of the library (no event, no wait list): on failure the
 * message names `func`, the kernel `name` and the range. Callers have set the arguments. */
ocal_status ocal__enqueue_nd(ocal_context ctx, cl_kernel kernel, const char *name, cl_uint dims,
                             const size_t *global, const size_t *local, const char *func);

/* Enqueues a 1-D launch of a grid-stride kernel over n items: the work-group size and the
 * number of groups come from the kernel's and the device's facts. Caller holds k->lock; a
 * failure names `func`, the kernel and the range (through ocal__enqueue_nd). */
ocal_status ocal__launch_1d(ocal_context ctx, ocal__kernel *k, size_t n, const char *func);

/* Disk cache of program binaries (disk_cache.c). The key text names everything the binary
 * depends on; load returns 1 and a malloc'ed binary on a valid hit, 0 otherwise (a corrupt
 * or foreign file counts in *rejected). Store is atomic and never fails the caller. */
char *ocal__disk_cache_key(ocal_context ctx, const char *source, const char *options);
int ocal__disk_cache_load(const char *dir, const char *key, unsigned char **binary,
                          size_t *size, int *rejected);
void ocal__disk_cache_store(const char *dir, const char *key, const unsigned char *binary,
                            size_t size);
/* The disk cache directory (malloc'ed): dir_option, else env_dir (OCAL_CACHE_DIR as the
 * settings read it), else $XDG_CACHE_HOME/ocal, else $HOME/.cache/ocal; NULL when none can
 * be named. */
char *ocal__disk_cache_dir(const char *dir_option, const char *env_dir);

/* 64-bit FNV-1a, for cache keys and file checksums. */
uint64_t ocal__fnv1a64(const void *data, size_t size, uint64_t seed);
#define OCAL__FNV_SEED 0xcbf29ce484222325ull

/* Overflow-checked size arithmetic: returns 0 and stores the result, or 1 on overflow. */
static inline int ocal__mul_overflows(size_t a, size_t b, size_t *out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline int ocal__add_overflows(size_t a, size_t b, size_t *out) {
  return __builtin_add_overflow(a, b, out);
}

/* a / b rounded up, and a rounded up to a multiple of b (b > 0; no overflow for a + b). */
static inline size_t ocal__ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }
static inline size_t ocal__round_up(size_t a, size_t b) { return ocal__ceil_div(a, b) * b; }

/* Seconds on the monotonic clock, for the library's own timings (plan creation, tuning,
 * measured choices, profiles). */
static inline double ocal__seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* strdup that reports failure through the status rules; returns NULL when out of memory. */
char *ocal__strdup(const char *s);

/* Copies s to *at, never past end - 1, NUL-terminates, and moves *at to the NUL: strings built
 * on every call (build options, kernel labels) are put together with it, as snprintf's format
 * parsing cost a small call more than its checks. */
void ocal__put(char **at, char *end, const char *s);

#endif /* OCAL_INTERNAL_H */
