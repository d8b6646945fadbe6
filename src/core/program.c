/* ocal — compiled programs and kernels: the context's memory cache, then the disk cache,
 * then the compiler.
 *
 * The context lock is held across a build, so two threads asking for the same program build
 * it once; a thread asking for another program waits for that build. Builds happen once per
 * program and context, so the simplicity is worth the wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct ocal__program {
  ocal__program *next;
  char *source; /* a copy: the memory cache compares whole sources, never only hashes */
  const char *library_text; /* the embedded text it was built from (cl_sources.c), or NULL */
  char *options;
  cl_program program;
  ocal__kernel *kernels;
  int from_ptx; /* rebuilt from PTX for another target (ptx.c) */
  char *arg_facts; /* its kernels' arguments as the driver told them (see collect_arg_facts) */
};

static void free_kernels(ocal__kernel *k) {
  while (k) {
    ocal__kernel *next = k->next;
    clReleaseKernel(k->kernel);
    pthread_mutex_destroy(&k->lock);
    free(k->name);
    free(k);
    k = next;
  }
}

void ocal__program_cache_clear(ocal_context ctx) {
  ocal__program *p = ctx->programs;
  while (p) {
    ocal__program *next = p->next;
    free_kernels(p->kernels);
    if (p->program) clReleaseProgram(p->program);
    free(p->source);
    free(p->options);
    free(p->arg_facts);
    free(p);
    p = next;
  }
  ctx->programs = NULL;
}

/* Appends the compiler's log for the context's device to the last error. */
void ocal__append_build_log(ocal_context ctx, cl_program program) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
          CL_SUCCESS ||
      size <= 1) {
    ocal__append_error("\n(the compiler left no log)");
    return;
  }
  char *log = malloc(size + 1);
  if (!log) return;
  if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) ==
      CL_SUCCESS) {
    log[size] = '\0';
    ocal__append_error("\ncompiler log:\n%s", log);
  }
  free(log);
}

/* ---- kernel argument facts ----------------------------------------------------------- */

/* A program built with -cl-kernel-arg-info keeps its kernels' argument names, types and
 * address qualifiers; some drivers (Intel's CPU runtime) drop them from a binary loaded back
 * from the disk cache. So they are asked for once, after the compile, and kept with the
 * program and its cache file. The text holds, per kernel, a line "kernel\tNAME\tNARGS" and
 * then one line "QUALIFIER\tNAME\tTYPE" per argument (QUALIFIER the cl_kernel_arg_address_
 * qualifier in decimal). */
static int wants_arg_facts(const char *options) {
  return strstr(options, "-cl-kernel-arg-info") != NULL;
}

typedef struct text {
  char *s;
  size_t len, cap;
  int failed;
} text;

static void text_add(text *t, const char *piece) {
  size_t n = strlen(piece);
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *bigger = realloc(t->s, cap);
    if (!bigger) {
      t->failed = 1;
      return;
    }
    t->s = bigger;
    t->cap = cap;
  }
  memcpy(t->s + t->len, piece, n + 1);
  t->len += n;
}

/* A string property of a kernel or of one of its arguments (arg < 0: the kernel's name),
 * malloc'ed; NULL when the driver cannot say or the text would break the format. */
static char *kernel_string(cl_kernel k, int arg, cl_uint what) {
  size_t size = 0;
  cl_int err = arg < 0 ? clGetKernelInfo(k, what, 0, NULL, &size)
                       : clGetKernelArgInfo(k, (cl_uint)arg, what, 0, NULL, &size);
  if (err != CL_SUCCESS || size == 0 || size > 4096) return NULL;
  char *s = malloc(size + 1);
  if (!s) return NULL;
  err = arg < 0 ? clGetKernelInfo(k, what, size, s, NULL)
                : clGetKernelArgInfo(k, (cl_uint)arg, what, size, s, NULL);
  s[size] = '\0';
  if (err != CL_SUCCESS || strpbrk(s, "\t\n")) {
    free(s);
    return NULL;
  }
  return s;
}

/* One kernel's lines; 0 on success. */
static int describe_kernel(cl_kernel k, text *t) {
  cl_uint nargs = 0;
  char *name = kernel_string(k, -1, CL_KERNEL_FUNCTION_NAME);
  int ok = name && clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) ==
                       CL_SUCCESS;
  char line[64];
  if (ok) {
    text_add(t, "kernel\t");
    text_add(t, name);
    snprintf(line, sizeof line, "\t%u\n", (unsigned)nargs);
    text_add(t, line);
  }
  free(name);
  for (cl_uint i = 0; ok && i < nargs; i++) {
    cl_kernel_arg_address_qualifier aq;
    char *arg = kernel_string(k, (int)i, CL_KERNEL_ARG_NAME);
    char *type = kernel_string(k, (int)i, CL_KERNEL_ARG_TYPE_NAME);
    ok = arg && type && clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq,
                                           &aq, NULL) == CL_SUCCESS;
    if (ok) {
      snprintf(line, sizeof line, "%u\t", (unsigned)aq);
      text_add(t, line);
      text_add(t, arg);
      text_add(t, "\t");
      text_add(t, type);
      text_add(t, "\n");
    }
    free(arg);
    free(type);
  }
  return ok ? 0 : -1;
}

/* The argument facts of every kernel of a program just built (malloc'ed), or NULL when the
 * driver cannot give them all. */
static char *collect_arg_facts(cl_program program) {
  cl_uint n = 0;
  if (clCreateKernelsInProgram(program, 0, NULL, &n) != CL_SUCCESS) return NULL;
  cl_kernel *kernels = calloc(n ? n : 1, sizeof *kernels);
  text t = {0};
  /* A program without kernels has no facts to collect (and num_kernels 0 with an array is
   * an invalid call). */
  int ok = kernels && (n == 0 || clCreateKernelsInProgram(program, n, kernels, NULL) == CL_SUCCESS);
  text_add(&t, "");
  for (cl_uint i = 0; i < n && ok; i++) ok = describe_kernel(kernels[i], &t) == 0;
  for (cl_uint i = 0; kernels && i < n; i++)
    if (kernels[i]) clReleaseKernel(kernels[i]);
  free(kernels);
  if (!ok || t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

int ocal__program_arg_fact(const ocal__program *program, const char *kernel_name,
                           unsigned index, unsigned *nargs, cl_kernel_arg_address_qualifier *aq,
                           char *type, size_t type_size, char *name, size_t name_size) {
  if (!program->arg_facts) return -1;
  size_t klen = strlen(kernel_name);
  for (const char *p = program->arg_facts; *p;) {
    const char *eol = strchr(p, '\n');
    if (!eol) return -1;
    if (strncmp(p, "kernel\t", 7) == 0 && strncmp(p + 7, kernel_name, klen) == 0 &&
        p[7 + klen] == '\t') {
      *nargs = (unsigned)strtoul(p + 8 + klen, NULL, 10);
      if (index >= *nargs) return -1;
      p = eol + 1;
      for (unsigned i = 0; i < index && (eol = strchr(p, '\n')); i++) p = eol + 1;
      /* QUALIFIER\tNAME\tTYPE\n */
      char *end;
      unsigned long q = strtoul(p, &end, 10);
      const char *tab = *end == '\t' ? strchr(end + 1, '\t') : NULL;
      eol = strchr(p, '\n');
      if (!tab || !eol || tab > eol) return -1;
      *aq = (cl_kernel_arg_address_qualifier)q;
      snprintf(name, name_size, "%.*s", (int)(tab - end - 1), end + 1);
      snprintf(type, type_size, "%.*s", (int)(eol - tab - 1), tab + 1);
      return 0;
    }
    p = eol + 1;
  }
  return -1;
}

/* ---- the disk cache's entries ---------------------------------------------------------- */

/* An entry's payload: this magic, the argument facts' length (4 bytes) and text (empty for a
 * program built without -cl-kernel-arg-info), then the driver's binary. An entry of another
 * layout (an older ocal's) is rejected and rebuilt. */
static const char payload_magic[8] = {'O', 'C', 'A', 'L', 'A', 'R', 'G', '1'};
#define PAYLOAD_HEADER (sizeof payload_magic + 4)

/* Tries the disk cache: 1, a built program and its argument facts (NULL when the entry holds
 * none; an entry that lacks the facts its options ask for is a miss) on a valid hit, 0
 * otherwise. */
static int load_from_disk(ocal_context ctx, const char *key, const char *options,
                          cl_program *out, char **facts) {
  unsigned char *payload = NULL;
  size_t size = 0;
  int rejected = 0;
  *facts = NULL;
  if (!ocal__disk_cache_load(ctx->cache_dir, key, &payload, &size, &rejected)) {
    if (rejected) ctx->stats.disk_rejects++;
    return 0;
  }
  uint32_t facts_len = 0;
  int ok = size > PAYLOAD_HEADER && memcmp(payload, payload_magic, sizeof payload_magic) == 0;
  if (ok) {
    memcpy(&facts_len, payload + sizeof payload_magic, 4);
    ok = facts_len < size - PAYLOAD_HEADER &&
         memchr(payload + PAYLOAD_HEADER, '\0', facts_len) == NULL &&
         (facts_len > 0 || !wants_arg_facts(options));
  }
  if (ok && facts_len) {
    *facts = malloc((size_t)facts_len + 1);
    ok = *facts != NULL;
    if (ok) {
      memcpy(*facts, payload + PAYLOAD_HEADER, facts_len);
      (*facts)[facts_len] = '\0';
    }
  }
  cl_int err = CL_INVALID_BINARY, binary_status = CL_SUCCESS;
  cl_program program = NULL;
  if (ok) {
    size_t bin_size = size - PAYLOAD_HEADER - facts_len;
    const unsigned char *bins[1] = {payload + PAYLOAD_HEADER + facts_len};
    program = clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &bin_size, bins,
                                        &binary_status, &err);
  }
  free(payload);
  if (ok && err == CL_SUCCESS && binary_status == CL_SUCCESS &&
      clBuildProgram(program, 1, &ctx->device, NULL, NULL, NULL) == CL_SUCCESS) {
    *out = program;
    return 1;
  }
  /* Not an entry of this layout, or the driver refused the binary (a driver update the key
   * missed): rebuild from source. */
  if (ok && err == CL_SUCCESS) clReleaseProgram(program);
  free(*facts);
  *facts = NULL;
  ctx->stats.disk_rejects++;
  return 0;
}

static void store_to_disk(ocal_context ctx, const char *key, cl_program program,
                          const char *facts) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
          CL_SUCCESS ||
      size == 0)
    return;
  uint32_t facts_len = facts ? (uint32_t)strlen(facts) : 0;
  unsigned char *payload = malloc(PAYLOAD_HEADER + facts_len + size);
  if (!payload) return;
  memcpy(payload, payload_magic, sizeof payload_magic);
  memcpy(payload + sizeof payload_magic, &facts_len, 4);
  if (facts_len) memcpy(payload + PAYLOAD_HEADER, facts, facts_len);
  unsigned char *bins[1] = {payload + PAYLOAD_HEADER + facts_len};
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
    ocal__disk_cache_store(ctx->cache_dir, key, payload, PAYLOAD_HEADER + facts_len + size);
  free(payload);
}

/* The name messages start with: the public call being served, else (callers not yet passing
 * it) plain "ocal", never an internal function's name. */
static const char *who(const char *func) { return func ? func : "ocal"; }

static ocal_status compile(ocal_context ctx, const char *source_name, const char *source,
                           const char *options, cl_program *out, const char *func) {
  cl_int err;
  cl_program program = clCreateProgramWithSource(ctx->cl_ctx, 1, &source, NULL, &err);
  if (err != CL_SUCCESS)
    return ocal__cl_fail(ctx->info.name, err, "clCreateProgramWithSource", who(func));
  ctx->stats.compiles++;
  err = clBuildProgram(program, 1, &ctx->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    /* Options the driver does not take are the caller's bad argument, not a driver fault:
     * the status says so and the message says what to change. */
    int bad_options = err == CL_INVALID_BUILD_OPTIONS;
    ocal_status status = ocal__fail(
        err == CL_BUILD_PROGRAM_FAILURE ? OCAL_BUILD_FAILED
        : bad_options                   ? OCAL_INVALID_ARGUMENT
                                        : OCAL_OPENCL_ERROR,
        who(func),
        "%s failed to build with options '%s' on device '%s': clBuildProgram returned %s "
        "(%d)%s",
        source_name, options, ctx->info.name, ocal__cl_error_name(err), (int)err,
        bad_options ? ": the driver does not take these build options; fix or drop them" : "");
    ocal__append_build_log(ctx, program);
    clReleaseProgram(program);
    return status;
  }
  char target[32];
  if (ocal__ptx_target_option(options, target, sizeof target)) {
    ocal_status status = ocal__ptx_retarget(ctx, source_name, target, &program, who(func));
    if (status != OCAL_OK) {
      clReleaseProgram(program);
      return status;
    }
  }
  /* The tally (the caller holds the context lock): binary sizes are asked for here, once
   * per compile; a driver that cannot say leaves them out. */
  size_t nk = 0, bin = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL) != CL_SUCCESS)
    nk = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof bin, &bin, NULL) != CL_SUCCESS)
    bin = 0;
  ctx->compiled.kernels += nk;
  ctx->compiled.source_bytes += strlen(source);
  ctx->compiled.binary_bytes += bin;
  *out = program;
  return OCAL_OK;
}

void ocal__context_compile_tally(ocal_context ctx, ocal__compile_tally *out) {
  pthread_mutex_lock(&ctx->lock);
  *out = ctx->compiled;
  pthread_mutex_unlock(&ctx->lock);
}

/* source itself when it is one of the library's embedded texts (cl_sources.c), else NULL.
 * Those texts live as long as the process, so their address names them: a library call's lookup compares a pointer instead of
 * 16-120 KB of text, which every elementwise call used to do. */
static const char *library_text(const char *source) {
  for (size_t i = 0; i < ocal__source_count; i++)
    if (ocal__sources[i].text == source) return source;
  return NULL;
}

/* Whether entry p holds source (lib: library_text(source)). */
static int same_source(const ocal__program *p, const char *source, const char *lib) {
  if (lib && p->library_text) return p->library_text == lib;
  return strcmp(p->source, source) == 0;
}

static ocal_status program_get(ocal_context ctx, const char *source_name, const char *source,
                               const char *options, ocal__program **out,
                               ocal__program_origin *origin, const char *func) {
  ocal_status status = OCAL_OK;
  ocal__program_origin from = OCAL__PROGRAM_FROM_MEMORY;
  const char *lib = library_text(source);
  pthread_mutex_lock(&ctx->lock);
  for (ocal__program **pp = &ctx->programs; *pp; pp = &(*pp)->next) {
    ocal__program *p = *pp;
    if (strcmp(p->options, options) == 0 && same_source(p, source, lib)) {
      /* Most recently used first: a loop of calls finds its program at the head. */
      *pp = p->next;
      p->next = ctx->programs;
      ctx->programs = p;
      ctx->stats.memory_hits++;
      *out = p;
      pthread_mutex_unlock(&ctx->lock);
      if (origin) *origin = from;
      return OCAL_OK;
    }
  }
  ocal__program *entry = calloc(1, sizeof *entry);
  char *key = NULL;
  if (!entry || !(entry->source = ocal__strdup(source)) ||
      !(entry->options = ocal__strdup(options))) {
    status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, who(func), "no memory for the program cache");
    goto done;
  }
  entry->library_text = lib;
  char target[32];
  entry->from_ptx = ocal__ptx_target_option(options, target, sizeof target) != NULL;
  if (ctx->cache_dir) key = ocal__disk_cache_key(ctx, source, options);
  if (key && load_from_disk(ctx, key, options, &entry->program, &entry->arg_facts)) {
    ctx->stats.disk_hits++;
    from = OCAL__PROGRAM_FROM_DISK;
  } else {
    status = compile(ctx, source_name, source, options, &entry->program, func);
    if (status != OCAL_OK) goto done;
    from = OCAL__PROGRAM_BUILT;
    if (wants_arg_facts(options)) entry->arg_facts = collect_arg_facts(entry->program);
    /* A program whose facts the driver could not give is not stored: its cache entry would
     * be a miss anyway. */
    if (key && (entry->arg_facts || !wants_arg_facts(options))) {
      store_to_disk(ctx, key, entry->program, entry->arg_facts);
      from = OCAL__PROGRAM_BUILT_STORED;
    }
  }
  entry->next = ctx->programs;
  ctx->programs = entry;
  *out = entry;
  entry = NULL;
done:
  if (entry) {
    free(entry->source);
    free(entry->options);
    free(entry);
  }
  free(key);
  pthread_mutex_unlock(&ctx->lock);
  if (origin && status == OCAL_OK) *origin = from;
  return status;
}

ocal_status ocal__program_get(ocal_context ctx, const char *source_name, const char *source,
                              const char *options, ocal__program **out) {
  return ocal__program_get_from(ctx, source_name, source, options, out, NULL, NULL);
}

ocal_status ocal__program_get_from(ocal_context ctx, const char *source_name, const char *source,
                                   const char *options, ocal__program **out,
                                   ocal__program_origin *origin, const char *func) {
  if (!options) options = "";
  if (!ctx->limits.build_options[0] || strstr(options, "-cl-std"))
    return program_get(ctx, source_name, source, options, out, origin, func);
  /* An emulated lower OpenCL version: compile for that version of OpenCL C (limits.c). */
  size_t n = strlen(options) + strlen(ctx->limits.build_options) + 2;
  char *both = malloc(n);
  if (!both) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, who(func), "no memory for build options");
  snprintf(both, n, "%s%s%s", options, options[0] ? " " : "", ctx->limits.build_options);
  ocal_status status = program_get(ctx, source_name, source, both, out, origin, func);
  free(both);
  return status;
}

cl_program ocal__program_cl(const ocal__program *program) { return program->program; }
const char *ocal__program_source(const ocal__program *program) { return program->source; }

ocal_status ocal__kernel_get(ocal_context ctx, ocal__program *program, const char *kernel_name,
                             ocal__kernel **out) {
  return ocal__kernel_get_for(ctx, program, kernel_name, out, NULL);
}

ocal_status ocal__kernel_get_for(ocal_context ctx, ocal__program *program, const char *kernel_name,
                                 ocal__kernel **out, const char *func) {
  ocal_status status = OCAL_OK;
  pthread_mutex_lock(&ctx->lock);
  for (ocal__kernel *k = program->kernels; k; k = k->next) {
    if (strcmp(k->name, kernel_name) == 0) {
      *out = k;
      pthread_mutex_unlock(&ctx->lock);
      return OCAL_OK;
    }
  }
  ocal__kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = ocal__strdup(kernel_name))) {
    if (k) free(k);
    status = ocal__fail(OCAL_OUT_OF_HOST_MEMORY, who(func), "no memory for the kernel cache");
    goto done;
  }
  cl_int err;
  k->kernel = clCreateKernel(program->program, kernel_name, &err);
  if (err != CL_SUCCESS) {
    status = ocal__cl_fail(ctx->info.name, err, "clCreateKernel", who(func));
    ocal__append_error(" for kernel '%s'", kernel_name);
    free(k->name);
    free(k);
    goto done;
  }
  size_t wg = 0, multiple = 0;
  cl_ulong local_bytes = 0;
  clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_bytes,
                           &local_bytes, NULL);
  /* A kernel that needs more local memory than the device has (emulated limits included)
   * fails here, when it is created, with the figures, not later at its launch. Not for a
   * program rebuilt from PTX: NVIDIA's OpenCL reports the 48 KiB a kernel gets without CUDA's
   * opt-in, but PTX may declare up to the hardware's limit (227 KiB on an H100), which ptxas
   * enforces when it builds. */
  if (local_bytes > ctx->info.local_mem_bytes && !program->from_ptx) {
    status = ocal__fail(OCAL_UNSUPPORTED, who(func),
                        "kernel '%s' needs %llu bytes of local memory, more than the %llu of "
                        "device '%s'%s",
                        kernel_name, (unsigned long long)local_bytes,
                        (unsigned long long)ctx->info.local_mem_bytes, ctx->info.name,
                        ctx->limits.emulated ? " (as emulated by OCAL_LIMITS)" : "");
    clReleaseKernel(k->kernel);
    free(k->name);
    free(k);
    goto done;
  }
  if (wg > ctx->info.max_work_group_size) wg = ctx->info.max_work_group_size;
  clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                           sizeof multiple, &multiple, NULL);
  k->work_group_size = wg ? wg : 1;
  k->preferred_multiple = multiple ? multiple : 1;
  pthread_mutex_init(&k->lock, NULL);
  k->next = program->kernels;
  program->kernels = k;
  *out = k;
done:
  pthread_mutex_unlock(&ctx->lock);
  return status;
}

ocal_status ocal__library_kernel(ocal_context ctx, const char *source_name, const char *options,
                                 const char *kernel_name, ocal__kernel **kernel) {
  return ocal__library_kernel_from(ctx, source_name, options, kernel_name, kernel, NULL, NULL);
}

ocal_status ocal__library_kernel_from(ocal_context ctx, const char *source_name,
                                      const char *options, const char *kernel_name,
                                      ocal__kernel **kernel, ocal__program_origin *origin,
                                      const char *func) {
  for (size_t i = 0; i < ocal__source_count; i++) {
    if (strcmp(ocal__sources[i].name, source_name) == 0) {
      char label[128], *at = label;
      ocal__put(&at, label + sizeof label, "cl/");
      ocal__put(&at, label + sizeof label, source_name);
      ocal__put(&at, label + sizeof label, ".cl");
      ocal__program *program;
      ocal_status status = ocal__program_get_from(ctx, label, ocal__sources[i].text, options,
                                                  &program, origin, func);
      if (status != OCAL_OK) return status;
      return ocal__kernel_get_for(ctx, program, kernel_name, kernel, func);
    }
  }
  return ocal__fail(OCAL_INTERNAL, who(func), "the library has no embedded source cl/%s.cl",
                    source_name);
}

/* One work-item per element (or per vector of elements): measured on an H100, capping the
 * launch at a few thousand items per compute unit and looping (a grid-stride loop) lost 4-6%
 * of the copy bandwidth on memory-bound kernels; and CPU drivers (PoCL) run a work-group as
 * a loop over its items, vectorised across them, which a per-item loop defeats. Kernels keep
 * their grid-stride loops, so any launch size stays correct. */
ocal_status ocal__launch_1d(ocal_context ctx, ocal__kernel *k, size_t n, const char *func) {
  size_t local = k->work_group_size < 256 ? k->work_group_size : 256;
  if (local > k->preferred_multiple) local -= local % k->preferred_multiple;
  size_t groups = (n + local - 1) / local;
  if (groups == 0) groups = 1;
  size_t global = groups * local;
  return ocal__enqueue_nd(ctx, k->kernel, k->name, 1, &global, &local, func);
}

static ocal_status set_args(ocal_context ctx, ocal__kernel *k, size_t nargs,
                            const ocal__arg *args, const char *func) {
  for (size_t i = 0; i < nargs; i++) {
    cl_int err = clSetKernelArg(k->kernel, (cl_uint)i, args[i].size, args[i].value);
    if (err != CL_SUCCESS) {
      ocal_status status = ocal__cl_fail(ctx->info.name, err, "clSetKernelArg", func);
      ocal__append_error(" (argument %zu of kernel '%s')", i, k->name);
      return status;
    }
  }
  return OCAL_OK;
}

ocal_status ocal__kernel_run(ocal_context ctx, ocal__kernel *k, size_t n, size_t nargs,
                             const ocal__arg *args, const char *func) {
  pthread_mutex_lock(&k->lock);
  ocal_status status = set_args(ctx, k, nargs, args, func);
  if (status == OCAL_OK) status = ocal__launch_1d(ctx, k, n, func);
  pthread_mutex_unlock(&k->lock);
  return status;
}

ocal_status ocal__kernel_run_nd(ocal_context ctx, ocal__kernel *k, cl_uint dims,
                                const size_t *global, const size_t *local, size_t nargs,
                                const ocal__arg *args, const char *func) {
  ocal_status status = ocal__limits_check_launch(ctx, k, dims, local, func);
  if (status != OCAL_OK) return status;
  pthread_mutex_lock(&k->lock);
  status = set_args(ctx, k, nargs, args, func);
  if (status == OCAL_OK) status = ocal__enqueue_nd(ctx, k->kernel, k->name, dims, global, local, func);
  pthread_mutex_unlock(&k->lock);
  return status;
}

ocal_status ocal__enqueue_nd(ocal_context ctx, cl_kernel kernel, const char *name, cl_uint dims,
                             const size_t *global, const size_t *local, const char *func) {
  cl_int err = clEnqueueNDRangeKernel(ctx->queue, kernel, dims, NULL, global, local, 0, NULL,
                                      NULL);
  if (err == CL_SUCCESS) return OCAL_OK;
  ocal_status status = ocal__cl_fail(ctx->info.name, err, "clEnqueueNDRangeKernel", func);
  ocal__append_error(" (kernel '%s', global %zu", name, global[0]);
  for (cl_uint d = 1; d < dims; d++) ocal__append_error(" x %zu", global[d]);
  if (local) {
    ocal__append_error(", local %zu", local[0]);
    for (cl_uint d = 1; d < dims; d++) ocal__append_error(" x %zu", local[d]);
  }
  ocal__append_error(")");
  return status;
}

/* GPUs limit the second dimension of a launch (NVIDIA to 65535 groups). */
#define OCAL__MAX_DIM1 65535

ocal_status ocal__kernel_run_2d(ocal_context ctx, ocal__kernel *k, size_t cols, size_t rows,
                                size_t nargs, const ocal__arg *args, const char *func) {
  size_t local = k->work_group_size < 256 ? k->work_group_size : 256;
  size_t m = k->preferred_multiple;
  size_t want = (cols + m - 1) / m * m; /* narrow matrices: no more items than columns */
  if (want < local) local = want;
  if (local > m) local -= local % m;
  if (local == 0) local = 1;
  size_t global[2] = {(cols + local - 1) / local * local, rows}, lsize[2] = {local, 1};
  if (global[1] > OCAL__MAX_DIM1) global[1] = OCAL__MAX_DIM1;
  if (global[1] == 0) global[1] = 1;
  return ocal__kernel_run_nd(ctx, k, 2, global, lsize, nargs, args, func);
}

size_t ocal__kernel_pow2_local(const ocal__kernel *k, size_t want, size_t cap) {
  size_t limit = k->work_group_size < cap ? k->work_group_size : cap;
  if (want > limit) want = limit;
  size_t l = 1;
  while (l * 2 <= want) l *= 2;
  return l;
}
