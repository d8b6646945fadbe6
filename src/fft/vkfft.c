/* ocal — the VkFFT engine: VkFFT's OpenCL backend (one header, vkFFT.h, compiled only here).
 *
 * VkFFT generates OpenCL C for each plan and compiles it at plan creation, which takes from
 * 0.1 s to seconds. ocal keeps the compiled programs in its disk cache, so that another
 * process creates the same plan without the compiler:
 *
 * VkFFT's own saveApplicationToString / loadApplicationFromString do not serve for this in
 * the OpenCL backend of the VkFFT version Debian ships (1.2.26): the save path writes each
 * program binary with sprintf("%s"), which cuts binaries that contain NUL bytes (PoCL's,
 * and the ELF binaries of AMD and Intel; only NVIDIA's PTX text survives), and the loader
 * drops the last byte of each. So ocal takes the two OpenCL calls through which VkFFT makes
 * its programs instead: clCreateProgramWithSource and clBuildProgram are redirected, in this
 * file only, to functions that look the source up in ocal's disk cache (keyed by platform,
 * device, driver, ocal version, VkFFT version and the source's hash, checksummed, written
 * atomically) and hand VkFFT a program made from the cached binary; after a build from
 * source they store the binary. Everything else VkFFT does is unchanged. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- the program cache VkFFT's kernels go through ------------------------------------- */

/* What one thread's plan creation is doing: set around initializeVkFFT, so the redirected
 * OpenCL calls know the context and can count what they did. */
typedef struct build_session {
  ocal_context ctx;
  const char *tune;    /* the tuning fields applied, as text: part of the cache key */
  int use_disk;        /* 0: the disk cache is off, or a cached binary was refused: compile */
  int loaded, compiled, stored;
  struct pending {     /* programs made from source, to be stored once built */
    cl_program program;
    char *key;
  } pending[64];
  int npending;
  char *build_log;     /* the compiler's log of the first failed build (bounded, NUL-ended) */
} build_session;

static _Thread_local build_session *session;

static cl_program cached_create_program_with_source(cl_context context, cl_uint count,
                                                    const char **strings, const size_t *lengths,
                                                    cl_int *errcode_ret);
static cl_int cached_build_program(cl_program program, cl_uint num_devices,
                                   const cl_device_id *device_list, const char *options,
                                   void(CL_CALLBACK *notify)(cl_program, void *), void *user_data);

static cl_int vk_get_device_info(cl_device_id device, cl_device_info what, size_t size,
                                 void *value, size_t *size_ret);
static cl_int vk_get_program_build_info(cl_program program, cl_device_id device,
                                        cl_program_build_info what, size_t size, void *value,
                                        size_t *size_ret);
static int vk_printf(const char *format, ...);

/* <CL/cl.h> was included (through engine.h) before these defines, so only the calls inside
 * vkFFT.h are redirected, not the declarations. Beside the two program calls: the device
 * queries (see vk_get_device_info), the build log and printf, with which VkFFT's OpenCL
 * backend prints a failed build's log (read past its end: VkFFT allocates it without room
 * for a NUL) and the whole generated source to standard output. A library must not print;
 * ocal captures the log in cached_build_program and puts it into ocal_last_error. */
/* VkFFT's host allocations, tracked per plan. VkFFT 1.2.26 does not free everything it
 * allocated when a later allocation or device query of the same plan creation fails (the
 * 4 MB code buffer of VkFFTPlanAxis when the shader generator runs out of memory, say): its
 * deleteVkFFT can no longer reach those blocks. So every block it allocates carries a header
 * that links it into the list of the plan being created (vk_alloc_list, set around
 * initializeVkFFT); its free unlinks it. After deleteVkFFT, whatever is still on the plan's
 * list is VkFFT's leftover and is freed (vk_free_all), on failure and at plan release. */
typedef struct vk_block {
  struct vk_block *prev, *next;
  struct vk_list *list; /* NULL: allocated outside a plan creation, on no list */
  size_t pad;           /* keeps the block 32 bytes: malloc's alignment for what follows */
} vk_block;
typedef struct vk_list {
  vk_block *first;
} vk_list;
static pthread_mutex_t vk_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local vk_list *vk_alloc_list;

static void *vk_malloc(size_t n) {
  if (n > SIZE_MAX - sizeof(vk_block)) return NULL;
  vk_block *b = malloc(sizeof *b + n);
  if (!b) return NULL;
  b->list = vk_alloc_list;
  b->prev = b->next = NULL;
  if (b->list) {
    pthread_mutex_lock(&vk_alloc_lock);
    b->next = b->list->first;
    if (b->next) b->next->prev = b;
    b->list->first = b;
    pthread_mutex_unlock(&vk_alloc_lock);
  }
  return b + 1;
}

static void *vk_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = vk_malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

static void vk_free(void *p) {
  if (!p) return;
  vk_block *b = (vk_block *)p - 1;
  if (b->list) {
    pthread_mutex_lock(&vk_alloc_lock);
    if (b->prev)
      b->prev->next = b->next;
    else
      b->list->first = b->next;
    if (b->next) b->next->prev = b->prev;
    pthread_mutex_unlock(&vk_alloc_lock);
  }
  free(b);
}

/* Frees what VkFFT left on a plan's list (call after deleteVkFFT). */
static void vk_free_all(vk_list *l) {
  pthread_mutex_lock(&vk_alloc_lock);
  while (l->first) {
    vk_block *b = l->first;
    l->first = b->next;
    free(b);
  }
  pthread_mutex_unlock(&vk_alloc_lock);
}

#define malloc(n) vk_malloc(n)
#define calloc(n, m) vk_calloc(n, m)
#define free(p) vk_free(p)
#define clCreateProgramWithSource cached_create_program_with_source
#define clBuildProgram cached_build_program
#define clGetDeviceInfo vk_get_device_info
#define clGetProgramBuildInfo vk_get_program_build_info
#define printf(...) vk_printf(__VA_ARGS__)
#define VKFFT_BACKEND 3
#if defined(__GNUC__)
#pragma GCC diagnostic push
#if defined(__clang__)
/* Clang (the ThreadSanitizer and fuzzing builds) does not know some of GCC's groups below. */
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#endif
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wvla"
#pragma GCC diagnostic ignored "-Wpointer-arith"
#pragma GCC diagnostic ignored "-Wold-style-declaration"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wempty-body"
#endif
#include <vkFFT.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#undef malloc
#undef calloc
#undef free
#undef clCreateProgramWithSource
#undef clBuildProgram
#undef clGetDeviceInfo
#undef clGetProgramBuildInfo
#undef printf

static int vk_printf(const char *format, ...) {
  (void)format;
  return 0;
}

/* Test hook (white-box, tests/check_fft.c): when set, the next VkFFT program built from
 * source gets a line the compiler rejects, so that the build-failure path runs for real. */
int ocal__vkfft_break_next_build;

/* The longest build log kept for ocal_last_error (which holds 16 KiB in all). */
#define BUILD_LOG_MAX 8192

/* VkFFT's OpenCL backend sizes its work-groups from the device's limits: on a GPU each
 * work-item is a hardware thread; on a CPU driver such as PoCL a whole work-group runs on
 * one thread, whose stack holds every work-item's private values that live across a
 * barrier. A Bluestein upload of 2187 or 4096 work-items (C2C 16385, R2C f64 65536, ...) then
 * overflowed PoCL's thread stacks (8 MiB by default): SIGSEGV inside the driver after
 * OCAL_OK. So on devices of type CL_DEVICE_TYPE_CPU ocal answers VkFFT's queries with a
 * smaller work-group (CPU_MAX_THREADS) and local memory (CPU_LOCAL_BYTES, which bounds the
 * points one upload holds, and so the private values), the sizes of a GPU: VkFFT then splits
 * long transforms into more uploads instead. The other queries VkFFT makes of the limits are
 * answered from the context's facts (all read when it was created), so none can fail
 * halfway through VkFFT's initialisation (where a failed query leaked VkFFT's list). Those
 * facts are the context's limits (limits.c, OCAL_LIMITS included), so an emulated smaller
 * device gets the kernels VkFFT would make for such a device. */
#define CPU_MAX_THREADS 256
#define CPU_LOCAL_BYTES 32768

static cl_int answer(const void *v, size_t bytes, size_t size, void *value, size_t *size_ret) {
  if (size_ret) *size_ret = bytes;
  if (value) {
    if (size < bytes) return CL_INVALID_VALUE;
    memcpy(value, v, bytes);
  }
  return CL_SUCCESS;
}

static cl_int vk_get_device_info(cl_device_id device, cl_device_info what, size_t size,
                                 void *value, size_t *size_ret) {
  build_session *s = session;
  if (!s || device != ocal__context_device(s->ctx))
    return clGetDeviceInfo(device, what, size, value, size_ret);
  const ocal_device_info *info = ocal__context_info(s->ctx);
  int cpu = info->type == OCAL_DEVICE_CPU;
  switch (what) {
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: {
      size_t v = info->max_work_group_size;
      if (cpu && v > CPU_MAX_THREADS) v = CPU_MAX_THREADS;
      return answer(&v, sizeof v, size, value, size_ret);
    }
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: {
      cl_uint v = 3; /* the three sizes below (OpenCL devices have at least three) */
      return answer(&v, sizeof v, size, value, size_ret);
    }
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
      size_t v[3];
      for (int i = 0; i < 3; i++) {
        v[i] = info->max_work_item_sizes[i];
        if (cpu && v[i] > CPU_MAX_THREADS) v[i] = CPU_MAX_THREADS;
      }
      return answer(v, sizeof v, size, value, size_ret);
    }
    case CL_DEVICE_LOCAL_MEM_SIZE: {
      cl_ulong v = info->local_mem_bytes;
      if (cpu && v > CPU_LOCAL_BYTES) v = CPU_LOCAL_BYTES;
      return answer(&v, sizeof v, size, value, size_ret);
    }
    default:
      return clGetDeviceInfo(device, what, size, value, size_ret);
  }
}

/* VkFFT reads a failed build's log into a buffer of the reported size and prints it: ocal has
 * the log already (cached_build_program), so VkFFT gets an empty one. */
static cl_int vk_get_program_build_info(cl_program program, cl_device_id device,
                                        cl_program_build_info what, size_t size, void *value,
                                        size_t *size_ret) {
  if (what != CL_PROGRAM_BUILD_LOG)
    return clGetProgramBuildInfo(program, device, what, size, value, size_ret);
  static const char empty = '\0';
  return answer(&empty, 1, size, value, size_ret);
}

/* The build log of program, bounded and NUL-terminated (malloc'ed), or NULL. */
static char *read_build_log(cl_program program, cl_device_id device) {
  size_t n = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS ||
      n == 0)
    return NULL;
  char *log = malloc(n + 1);
  if (!log) return NULL;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
    free(log);
    return NULL;
  }
  log[n] = '\0';
  if (strlen(log) > BUILD_LOG_MAX) strcpy(log + BUILD_LOG_MAX - 4, "...");
  return log;
}

/* The key's "options" part: the engine and its version, which change the generated code, and
 * the configuration fields ocal sets beyond the problem (tune_text below). The source's hash
 * already differs whenever a field changes the generated code; naming the fields as well
 * keeps two configurations apart even where VkFFT would print the same text. */
static void key_options(char *out, size_t size, const char *tune) {
  snprintf(out, size, "engine=vkfft vkfft_version=%d tune=%s", VkFFTGetVersion(),
           tune ? tune : "");
}

static cl_program cached_create_program_with_source(cl_context context, cl_uint count,
                                                    const char **strings, const size_t *lengths,
                                                    cl_int *errcode_ret) {
  build_session *s = session;
  if (s && ocal__vkfft_break_next_build && count == 1) {
    ocal__vkfft_break_next_build = 0;
    const char *broken[2] = {strings[0], "\n#error ocal test: a forced VkFFT build failure\n"};
    size_t lens[2] = {lengths ? lengths[0] : strlen(strings[0]), strlen(broken[1])};
    return clCreateProgramWithSource(context, 2, broken, lens, errcode_ret);
  }
  if (!s || !s->use_disk || count != 1 || s->npending == 64)
    return clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  char options[384];
  key_options(options, sizeof options, s->tune);
  size_t used = strlen(options);
  snprintf(options + used, sizeof options - used, " %s", ocal__context_build_options(s->ctx));
  /* VkFFT passes the source's length; the key wants a NUL-terminated string. */
  char *source = NULL;
  if (lengths && lengths[0]) {
    source = malloc(lengths[0] + 1);
    if (!source) return clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
    memcpy(source, strings[0], lengths[0]);
    source[lengths[0]] = '\0';
  }
  char *key = ocal__disk_cache_key(s->ctx, source ? source : strings[0], options);
  free(source);
  if (key) {
    unsigned char *binary = NULL;
    size_t size = 0;
    int rejected = 0;
    if (ocal__disk_cache_load(ocal__context_cache_dir(s->ctx), key, &binary, &size, &rejected)) {
      cl_int err, status;
      const unsigned char *b = binary;
      cl_device_id device = ocal__context_device(s->ctx);
      cl_program p = clCreateProgramWithBinary(context, 1, &device, &size, &b, &status, &err);
      free(binary);
      if (err == CL_SUCCESS && status == CL_SUCCESS) {
        free(key);
        s->loaded++;
        if (errcode_ret) *errcode_ret = CL_SUCCESS;
        return p;
      }
      if (p) clReleaseProgram(p);
    }
  }
  cl_program p = clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  s->compiled++;
  if (p && key) {
    s->pending[s->npending].program = p;
    s->pending[s->npending].key = key;
    s->npending++;
  } else {
    free(key);
  }
  return p;
}

static cl_int cached_build_program(cl_program program, cl_uint num_devices,
                                   const cl_device_id *device_list, const char *options,
                                   void(CL_CALLBACK *notify)(cl_program, void *), void *user_data) {
  build_session *s = session;
  /* An emulated lower OpenCL version: VkFFT's kernels are compiled for it too (limits.c). */
  char both[512];
  if (s && ocal__context_build_options(s->ctx)[0] && (!options || !strstr(options, "-cl-std"))) {
    snprintf(both, sizeof both, "%s %s", options ? options : "",
             ocal__context_build_options(s->ctx));
    options = both;
  }
  cl_int err = clBuildProgram(program, num_devices, device_list, options, notify, user_data);
  if (!s) return err;
  if (err != CL_SUCCESS && !s->build_log)
    s->build_log =
        read_build_log(program, num_devices ? device_list[0] : ocal__context_device(s->ctx));
  for (int i = 0; i < s->npending; i++) {
    if (s->pending[i].program != program) continue;
    size_t size = 0;
    if (err == CL_SUCCESS &&
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) ==
            CL_SUCCESS &&
        size > 0) {
      unsigned char *binary = malloc(size);
      if (binary && clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary,
                                     NULL) == CL_SUCCESS) {
        ocal__disk_cache_store(ocal__context_cache_dir(s->ctx), s->pending[i].key, binary, size);
        s->stored++;
      }
      free(binary);
    }
    free(s->pending[i].key);
    s->pending[i] = s->pending[--s->npending];
    break;
  }
  return err;
}

static void session_end(build_session *s) {
  for (int i = 0; i < s->npending; i++) free(s->pending[i].key);
  s->npending = 0;
  free(s->build_log);
  s->build_log = NULL;
}

/* ---- tuning ---------------------------------------------------------------------------- */

/* VkFFTConfiguration fields that change how VkFFT splits and codes a transform but not what it
 * computes, which ocal may set (tune_builtin) and OCAL_VKFFT_TUNE may override, for measuring
 * other settings without a rebuild: OCAL_VKFFT_TUNE="coalescedMemory=128,aimThreads=256".
 * It is read at plan creation (plans already in a context's cache keep theirs); an unknown
 * field or a value that is not a number fails the plan creation. A value of 0 means VkFFT's
 * own default, as in VkFFTConfiguration ("coalescedMemory=0" undoes what tune_builtin sets).
 * bench/fft_tune.sh times the fft suite's shapes under a list of such settings. Fields that change the output's layout
 * (disableReorderFourStep) or the precision are left out. */
static const struct tune_field {
  const char *name;
  size_t offset;
} tune_fields[] = {
#define TUNE_FIELD(f) {#f, offsetof(VkFFTConfiguration, f)}
    TUNE_FIELD(coalescedMemory),      TUNE_FIELD(aimThreads),
    TUNE_FIELD(numSharedBanks),       TUNE_FIELD(registerBoost),
    TUNE_FIELD(registerBoostNonPow2), TUNE_FIELD(registerBoost4Step),
    TUNE_FIELD(performBandwidthBoost), TUNE_FIELD(useLUT),
    TUNE_FIELD(swapTo3Stage4Step),    TUNE_FIELD(considerAllAxesStrided),
    TUNE_FIELD(fixMaxRadixBluestein),
#undef TUNE_FIELD
};
#define NTUNE (sizeof tune_fields / sizeof tune_fields[0])

static uint64_t *tune_slot(VkFFTConfiguration *c, size_t i) {
  return (uint64_t *)(void *)((char *)c + tune_fields[i].offset);
}

/* Applies "field=value,..." to c. Returns OCAL_OK, or fails naming what it could not read. */
static ocal_status tune_parse(VkFFTConfiguration *c, const char *text) {
  const char *q = text;
  while (*q) {
    if (*q == ',' || *q == ' ') {
      q++;
      continue;
    }
    size_t len = strcspn(q, "=, ");
    size_t i = 0;
    while (i < NTUNE && !(strlen(tune_fields[i].name) == len &&
                          strncmp(tune_fields[i].name, q, len) == 0))
      i++;
    if (i == NTUNE || q[len] != '=')
      return ocal__fail(OCAL_INVALID_ARGUMENT, "ocal_fft_plan_create",
                        "OCAL_VKFFT_TUNE: '%.*s' is not a field ocal lets "
                        "you set (coalescedMemory, aimThreads, numSharedBanks, registerBoost, "
                        "registerBoostNonPow2, registerBoost4Step, performBandwidthBoost, useLUT, "
                        "swapTo3Stage4Step, considerAllAxesStrided, fixMaxRadixBluestein), or "
                        "lacks '=value'",
                        (int)len, q);
    char *end;
    long long v = strtoll(q + len + 1, &end, 0);
    if (end == q + len + 1 || (*end && *end != ',' && *end != ' '))
      return ocal__fail(OCAL_INVALID_ARGUMENT, "ocal_fft_plan_create",
                        "OCAL_VKFFT_TUNE: the value of %s is not a "
                        "number",
                        tune_fields[i].name);
    *tune_slot(c, i) = (uint64_t)v; /* performBandwidthBoost takes -1 */
    q = end;
  }
  return OCAL_OK;
}

/* What ocal sets beyond VkFFT's own defaults, on NVIDIA (the vendor id VkFFT itself keys
 * its defaults on, coalescedMemory = 32 among them; limits.c reads it), single precision and
 * C2C only, in terms of the local memory VkFFT plans with (48 KiB: 32 KiB rounded down to a
 * power of two, s = 1024 complex values a strided upload holds at 32-byte coalescing):
 * - 1-D power-of-two lengths that take three uploads (above s * s): coalescedMemory = 128,
 *   so that the strided uploads read whole 128-byte rows (docs/measurements.md#vkfft-coalesced);
 * - 2-D transforms whose strided axis is a power of two in (2s, 4s] and whose contiguous
 *   axis is at most 8s: registerBoost = 2 in place of VkFFT's NVIDIA default of 4. With 4,
 *   VkFFT takes such a strided axis in one upload holding four times the local memory's worth
 *   in registers; with 2 in two uploads, 7-12 % faster on an H200 at 4096 strided. A longer
 *   contiguous axis needs the boost of 4 for its own single upload (1-D 16384 went 30 %
 *   slower without it, 4096 x 16384 14 %), and 3-D shapes lost 1 %
 *   (docs/measurements.md#vkfft-register-boost).
 * Everything else keeps VkFFT's defaults. */
static void tune_builtin(ocal_context ctx, const ocal__fft_problem *p, VkFFTConfiguration *c) {
  if (p->kind != OCAL_FFT_C2C || p->dbl || ocal__context_vendor_id(ctx) != 0x10DE) return;
  /* VkFFT keeps 16 bytes of NVIDIA's local memory for the system, then rounds down. */
  uint64_t have = ocal__context_info(ctx)->local_mem_bytes;
  uint64_t local = have > 16 ? have - 16 : 0, pow2 = 1;
  while (pow2 * 2 <= local) pow2 *= 2;
  uint64_t s_default = pow2 / 32, s_wide = pow2 / 128;
  if (p->ndim == 1) {
    uint64_t n = p->lengths[0];
    if ((n & (n - 1)) || s_wide < 2 || n <= s_default * s_default ||
        n > s_wide * s_wide * s_wide)
      return;
    c->coalescedMemory = 128;
  } else if (p->ndim == 2) {
    uint64_t strided = p->lengths[0], contiguous = p->lengths[1];
    if (!(strided & (strided - 1)) && strided > 2 * s_default && strided <= 4 * s_default &&
        contiguous <= 8 * s_default)
      c->registerBoost = 2;
  }
}

/* The fields set, as "name=value,...": part of the disk cache key. */
static void tune_text(VkFFTConfiguration *c, char *out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  for (size_t i = 0; i < NTUNE && n < size; i++) {
    uint64_t v = *tune_slot(c, i);
    if (v)
      n += (size_t)snprintf(out + n, size - n, "%s%s=%lld", n ? "," : "", tune_fields[i].name,
                            (long long)v);
  }
}

/* The tuning fields of p's configuration: ocal's rule, then OCAL_VKFFT_TUNE over it. */
static ocal_status tune_fields_for(const ocal__fft_problem *p, VkFFTConfiguration *c) {
  tune_builtin(p->ctx, p, c);
  const char *env = p->ctx->settings.vkfft_tune; /* OCAL_VKFFT_TUNE */
  return env && *env ? tune_parse(c, env) : OCAL_OK;
}

void ocal__vkfft_tune_key(const ocal__fft_problem *p, char *out, size_t size) {
  VkFFTConfiguration c;
  memset(&c, 0, sizeof c);
  /* A value tune_parse refuses fails the VkFFT plan itself; the key is then never used. */
  (void)tune_fields_for(p, &c);
  tune_text(&c, out, size);
}

/* ---- plans ---------------------------------------------------------------------------- */

typedef struct vk_plan {
  const ocal__fft_problem *p;
  /* VkFFT keeps pointers to these: they live as long as the plan. */
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  uint64_t buffer_bytes, input_bytes;
  VkFFTApplication app;
  vk_list allocs; /* VkFFT's host blocks of this plan (see vk_malloc) */
} vk_plan;

static const char *result_text(VkFFTResult r) {
  switch (r) {
    case VKFFT_ERROR_MALLOC_FAILED: return "out of host memory";
    case VKFFT_ERROR_FAILED_TO_ALLOCATE: return "device memory allocation failed";
    case VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM: return "clCreateProgram failed";
    case VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM: return "the OpenCL compiler failed";
    case VKFFT_ERROR_FAILED_TO_CREATE_SHADER_MODULE: return "clCreateKernel failed";
    case VKFFT_ERROR_UNSUPPORTED_RADIX: return "unsupported radix";
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH: return "unsupported length";
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C: return "unsupported length for R2C/C2R";
    case VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL: return "clEnqueueNDRangeKernel failed";
    case VKFFT_ERROR_FAILED_TO_SET_KERNEL_ARG: return "clSetKernelArg failed";
    case VKFFT_ERROR_FAILED_TO_GET_ATTRIBUTE: return "clGetDeviceInfo failed";
    case VKFFT_ERROR_INSUFFICIENT_CODE_BUFFER: return "generated code too long";
    default: return "VkFFT error";
  }
}

static ocal_status result_status(VkFFTResult r) {
  switch (r) {
    case VKFFT_ERROR_MALLOC_FAILED: return OCAL_OUT_OF_HOST_MEMORY;
    case VKFFT_ERROR_FAILED_TO_ALLOCATE: return OCAL_OUT_OF_DEVICE_MEMORY;
    case VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM: return OCAL_BUILD_FAILED;
    case VKFFT_ERROR_UNSUPPORTED_RADIX:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C:
    case VKFFT_ERROR_UNSUPPORTED_FFT_OMIT: return OCAL_UNSUPPORTED;
    default: return OCAL_OPENCL_ERROR;
  }
}

static ocal_status vk_plan_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  ocal_context ctx = p->ctx;
  vk_plan *v = calloc(1, sizeof *v);
  if (!v)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for a VkFFT plan");
  v->p = p;
  v->platform = ocal__context_platform(ctx);
  v->device = ocal__context_device(ctx);
  v->context = ocal__context_cl(ctx);
  v->queue = ocal__context_queue(ctx);

  VkFFTConfiguration c;
  memset(&c, 0, sizeof c);
  c.FFTdim = (uint64_t)p->ndim;
  /* VkFFT counts dimensions from the contiguous one; ocal's lengths are row-major. */
  for (int i = 0; i < p->ndim; i++) c.size[i] = p->lengths[p->ndim - 1 - i];
  /* A batch of 1-D and 2-D transforms is one more (untransformed) dimension, the layout
   * VkFFT is tuned for; 3-D transforms use numberBatches. */
  if (p->ndim < 3)
    c.size[p->ndim] = p->batch;
  else
    c.numberBatches = p->batch;
  c.platform = &v->platform;
  c.device = &v->device;
  c.context = &v->context;
  c.commandQueue = &v->queue; /* used at creation by Bluestein's precomputation */
  c.doublePrecision = (uint64_t)p->dbl;
  c.specifyOffsetsAtLaunch = 1;

  size_t real = p->batch, cplx = p->batch;
  for (int i = 0; i < p->ndim; i++) {
    real *= p->lengths[i];
    cplx *= i == p->ndim - 1 && p->kind != OCAL_FFT_C2C ? p->lengths[i] / 2 + 1 : p->lengths[i];
  }
  size_t rsize = p->dbl ? 8 : 4;
  if (p->kind == OCAL_FFT_C2C) {
    v->buffer_bytes = v->input_bytes = real * 2 * rsize;
    /* Out of place, VkFFT reads the input buffer and computes in the output: the input stays
     * as it was. */
    c.isInputFormatted = p->in_place ? 0 : 1;
  } else {
    /* The complex side is VkFFT's "buffer", the real side (not padded: NumPy's layout) its
     * "input buffer"; C2R writes its result back to that input buffer. */
    v->buffer_bytes = cplx * 2 * rsize;
    v->input_bytes = real * rsize;
    c.performR2C = 1;
    c.isInputFormatted = 1;
    c.inputBufferStride[0] = c.size[0];
    if (p->kind == OCAL_FFT_R2C) {
      c.makeForwardPlanOnly = 1;
    } else {
      c.makeInversePlanOnly = 1;
      c.inverseReturnToInputBuffer = 1;
    }
  }
  c.bufferSize = &v->buffer_bytes;
  if (c.isInputFormatted) c.inputBufferSize = &v->input_bytes;
  if (v->buffer_bytes >= ((uint64_t)1 << 31) || v->input_bytes >= ((uint64_t)1 << 31))
    c.useUint64 = 1;

  /* VkFFT's inverse normalisation is 1/N; anything else plan.c applies. */
  double n = (double)ocal__fft_problem_n(p);
  out->applied[0] = 1.0;
  out->applied[1] = 1.0;
  if (p->kind != OCAL_FFT_R2C && p->scale[1] == 1.0 / n) {
    c.normalize = 1;
    out->applied[1] = 1.0 / n;
  }

  ocal_status tuned = tune_fields_for(p, &c);
  if (tuned != OCAL_OK) {
    free(v);
    return tuned;
  }
  char tune[384];
  tune_text(&c, tune, sizeof tune);

  build_session s;
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.tune = tune;
  s.use_disk = ocal__context_cache_dir(ctx) != NULL;
  session = &s;
  vk_alloc_list = &v->allocs;
  VkFFTResult r = initializeVkFFT(&v->app, c);
  if (r != VKFFT_SUCCESS && s.loaded > 0) {
    /* A cached binary the driver took but could not use: compile everything afresh. */
    session_end(&s);
    deleteVkFFT(&v->app);
    vk_free_all(&v->allocs);
    memset(&v->app, 0, sizeof v->app);
    s.use_disk = 0;
    s.loaded = s.compiled = s.stored = 0;
    r = initializeVkFFT(&v->app, c);
  }
  vk_alloc_list = NULL;
  session = NULL;
  if (r != VKFFT_SUCCESS) {
    /* initializeVkFFT frees what it made on most of its failure paths, not all: a failed
     * device query or host allocation after VkFFTPlanAxis (or inside it) returns with the
     * plans, kernels and Bluestein buffers made so far still held. deleteVkFFT frees
     * whatever it can still reach and clears each pointer it frees, so calling it again
     * after initializeVkFFT's own call is harmless; vk_free_all frees the rest. */
    deleteVkFFT(&v->app);
    vk_free_all(&v->allocs);
    free(v);
    ocal_status st = ocal__fail(result_status(r), "ocal_fft_plan_create",
                                "VkFFT could not create the plan (%s) on device "
                                "'%s': %s (VkFFTResult %d)",
                                p->text, ocal__context_info(ctx)->name, result_text(r), (int)r);
    if (s.build_log) ocal__append_error("\nbuild log:\n%s", s.build_log);
    session_end(&s);
    return st;
  }
  session_end(&s);
  out->state = v;
  out->from_disk_cache = s.loaded > 0 && s.compiled == 0;
  out->stored_to_disk = s.stored > 0;
  return OCAL_OK;
}

static ocal_status vk_execute(void *state, int direction, cl_mem in, size_t in_offset, cl_mem out,
                              size_t out_offset, const char *func) {
  vk_plan *v = state;
  const ocal__fft_problem *p = v->p;
  VkFFTLaunchParams lp;
  memset(&lp, 0, sizeof lp);
  lp.commandQueue = &v->queue;
  if (p->kind == OCAL_FFT_C2C && p->in_place) {
    lp.buffer = &in;
    lp.bufferOffset = in_offset;
  } else if (p->kind == OCAL_FFT_C2R) {
    lp.buffer = &in;
    lp.bufferOffset = in_offset;
    lp.inputBuffer = &out;
    lp.inputBufferOffset = out_offset;
  } else { /* C2C out of place and R2C: read the input buffer, write the output */
    lp.inputBuffer = &in;
    lp.inputBufferOffset = in_offset;
    lp.buffer = &out;
    lp.bufferOffset = out_offset;
  }
  VkFFTResult r = VkFFTAppend(&v->app, direction, &lp);
  if (r != VKFFT_SUCCESS)
    return ocal__fail(result_status(r), func,
                      "VkFFT could not run the plan (%s) on device '%s': %s "
                      "(VkFFTResult %d)",
                      p->text, ocal__context_info(p->ctx)->name, result_text(r), (int)r);
  return OCAL_OK;
}

static void vk_plan_destroy(void *state) {
  vk_plan *v = state;
  deleteVkFFT(&v->app);
  vk_free_all(&v->allocs);
  free(v);
}

const ocal__fft_engine ocal__fft_vkfft = {
    .name = "vkfft",
    .takes_offsets = 2,
    .plan_create = vk_plan_create,
    .execute = vk_execute,
    .plan_destroy = vk_plan_destroy,
};
