/* ocal — raw programs and kernels: the user's OpenCL C, built through the context's caches,
 * with arguments checked against the kernel's declaration and launch sizes checked against
 * the device before anything reaches the driver.
 *
 * A program handle points at the context's cached program (which lives until the context
 * goes). A kernel handle owns its own cl_kernel, not the cache's shared one: its arguments
 * persist between calls (set, launch, set one, launch again), so another handle or ocal's
 * own use of the same kernel must not see them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_internal.h"

#define PROGRAM_MAGIC 0x6f707267u /* "oprg" */
#define KERNEL_MAGIC 0x6f6b726eu  /* "okrn" */

struct ocal_program_s {
  uint32_t magic;
  ocal_context ctx;
  ocal__program *program; /* owned by the context's cache */
};

typedef struct karg {
  ocal__arg_kind kind; /* OCAL__ARG_UNKNOWN when neither the driver nor the source said */
  int type_known;      /* 0: a type name only the source gave, not a built-in one (a macro?) */
  char type[OCAL__SIG_NAME_MAX];
  char name[OCAL__SIG_NAME_MAX];
  int set;
  ocal_buffer buffer; /* a reference while set to a buffer */
  cl_mem sub;         /* the sub-buffer of a view at an offset */
  size_t local_bytes;
} karg;

struct ocal_kernel_s {
  uint32_t magic;
  ocal_context ctx;
  cl_kernel kernel;
  char *name;
  int nargs;
  int described; /* argument kinds known (from the driver or the source) */
  karg *args;
  size_t wg_size;          /* CL_KERNEL_WORK_GROUP_SIZE */
  size_t preferred;        /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
  cl_ulong kernel_local;   /* CL_KERNEL_LOCAL_MEM_SIZE: its own __local arrays */
  size_t reqd[3];          /* CL_KERNEL_COMPILE_WORK_GROUP_SIZE: reqd_work_group_size, or 0s */
  size_t max_items[3];     /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
  size_t max_wg;           /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  cl_ulong device_local;   /* CL_DEVICE_LOCAL_MEM_SIZE */
  cl_uint address_bits;    /* CL_DEVICE_ADDRESS_BITS */
  cl_uint base_align_bits; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN */
};

/* ---- programs ------------------------------------------------------------------------ */

static ocal_status check_program(ocal_program p, const char *func) {
  if (!p || p->magic != PROGRAM_MAGIC)
    return ocal__fail(OCAL_INVALID_HANDLE, func, "program is NULL or not an ocal_program");
  return OCAL_OK;
}

static ocal_status check_kernel(ocal_kernel k, const char *func) {
  if (!k || k->magic != KERNEL_MAGIC)
    return ocal__fail(OCAL_INVALID_HANDLE, func, "kernel is NULL or not an ocal_kernel");
  return OCAL_OK;
}

/* Builds (or finds) the program; label names it in messages. */
static ocal_status program_create(const char *func, ocal_context ctx, const char *label,
                                  const char *source, const char *options, ocal_program *out) {
  /* Argument names and kinds for the checks; the option does not change the code. */
  static const char arg_info[] = "-cl-kernel-arg-info";
  size_t olen = options ? strlen(options) : 0;
  char *opts = malloc(olen + sizeof arg_info + 1);
  struct ocal_program_s *p = calloc(1, sizeof *p);
  if (!opts || !p) {
    free(opts);
    free(p);
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for the program");
  }
  if (olen)
    sprintf(opts, "%s %s", options, arg_info);
  else
    strcpy(opts, arg_info);
  ocal_status status = ocal__program_get_from(ctx, label, source, opts, &p->program, NULL, func);
  free(opts);
  if (status != OCAL_OK) {
    free(p);
    return status;
  }
  p->magic = PROGRAM_MAGIC;
  p->ctx = ctx;
  ocal__context_retain(ctx);
  *out = p;
  return OCAL_OK;
}

ocal_status ocal_program_create(ocal_context ctx, const char *source, const char *options,
                                ocal_program *program) {
  if (!program) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "program must not be NULL");
  *program = NULL;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!source) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "source must not be NULL");
  if (!source[0]) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "source is empty");
  return program_create(__func__, ctx, "the program source", source, options, program);
}

ocal_status ocal_program_create_from_file(ocal_context ctx, const char *path,
                                          const char *options, ocal_program *program) {
  if (!program) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "program must not be NULL");
  *program = NULL;
  ocal_status status = ocal__check_context(ctx, __func__);
  if (status != OCAL_OK) return status;
  if (!path) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "path must not be NULL");
  /* Only a regular file of bounded size: /dev/zero, a FIFO or a huge file would read until
   * memory runs out or block for ever. O_NONBLOCK keeps the open of a FIFO from waiting for
   * a writer; it is refused right after. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return OCAL_FAIL(OCAL_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return OCAL_FAIL(OCAL_IO_ERROR, "cannot stat '%s': %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return OCAL_FAIL(OCAL_IO_ERROR, "'%s' is not a regular file (a %s); give the path of a .cl "
                     "source file", path, S_ISDIR(st.st_mode) ? "directory"
                     : S_ISFIFO(st.st_mode) ? "FIFO" : S_ISCHR(st.st_mode) ? "character device"
                     : "special file");
  }
  if ((uint64_t)st.st_size > OCAL_PROGRAM_FILE_MAX) {
    close(fd);
    return OCAL_FAIL(OCAL_IO_ERROR, "'%s' holds %lld bytes, more than the %d MiB ocal reads as a "
                     "program source (OCAL_PROGRAM_FILE_MAX)", path, (long long)st.st_size,
                     (int)(OCAL_PROGRAM_FILE_MAX >> 20));
  }
  size_t len = 0, cap = (size_t)st.st_size + 1;
  char *text = malloc(cap);
  if (!text) {
    close(fd);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory to read '%s'", path);
  }
  int failed = 0;
  /* Read to the size fstat gave (a file growing meanwhile is cut there). */
  while (len < cap - 1) {
    ssize_t r = read(fd, text + len, cap - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) failed = 1;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  if (failed) {
    free(text);
    return OCAL_FAIL(OCAL_IO_ERROR, "cannot read '%s'", path);
  }
  text[len] = '\0';
  if (len == 0 || strlen(text) != len) {
    free(text);
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "'%s' is %s", path,
                     len == 0 ? "empty" : "not text (it holds a NUL byte)");
  }
  status = program_create(__func__, ctx, path, text, options, program);
  free(text);
  return status;
}

ocal_status ocal_program_release(ocal_program program) {
  if (!program) return OCAL_OK;
  ocal_status status = check_program(program, __func__);
  if (status != OCAL_OK) return status;
  ocal_context ctx = program->ctx;
  program->magic = 0;
  free(program);
  ocal__context_unref(ctx);
  return OCAL_OK;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* "float*" or "const float *" → "float"; "unsigned int" → "uint". */
static void normalise_type(const char *in, char *out, size_t size) {
  char tmp[OCAL__SIG_NAME_MAX * 2];
  size_t n = 0;
  for (const char *p = in; *p && n + 1 < sizeof tmp; p++)
    if (*p != '*') tmp[n++] = *p;
  while (n > 0 && (tmp[n - 1] == ' ' || tmp[n - 1] == '\t')) n--;
  tmp[n] = '\0';
  const char *t = tmp;
  while (*t == ' ') t++;
  if (strncmp(t, "const ", 6) == 0) t += 6;
  if (strcmp(t, "unsigned int") == 0) t = "uint";
  else if (strcmp(t, "unsigned char") == 0) t = "uchar";
  else if (strcmp(t, "unsigned long") == 0) t = "ulong";
  size_t len = strlen(t);
  if (len >= size) len = size - 1;
  memcpy(out, t, len);
  out[len] = '\0';
}

/* One argument as the driver describes it. */
static void describe_arg(karg *a, cl_kernel_arg_address_qualifier aq, const char *type,
                         const char *name) {
  a->kind = aq == CL_KERNEL_ARG_ADDRESS_LOCAL     ? OCAL__ARG_LOCAL
            : aq == CL_KERNEL_ARG_ADDRESS_PRIVATE ? OCAL__ARG_SCALAR
                                                  : OCAL__ARG_GLOBAL;
  /* Images and samplers are private by-value handles: leave them unchecked. */
  if (strstr(type, "image") || strstr(type, "sampler")) a->kind = OCAL__ARG_UNKNOWN;
  a->type_known = 1; /* macros expanded; a typedef or struct is the driver's to size-check */
  normalise_type(type, a->type, sizeof a->type);
  snprintf(a->name, sizeof a->name, "%.63s", name);
}

/* Fills the argument descriptions from what the driver said when the program was compiled
 * (kept with the program and its disk cache entry), 0 on success. */
static int describe_from_facts(ocal_kernel k, const ocal__program *program) {
  for (int i = 0; i < k->nargs; i++) {
    cl_kernel_arg_address_qualifier aq;
    unsigned nargs = 0;
    char type[128], name[128];
    if (ocal__program_arg_fact(program, k->name, (unsigned)i, &nargs, &aq, type, sizeof type,
                               name, sizeof name) != 0 ||
        nargs != (unsigned)k->nargs)
      return -1;
    describe_arg(&k->args[i], aq, type, name);
  }
  return 0;
}

/* The same from the driver, 0 on success. */
static int describe_from_driver(ocal_kernel k) {
  for (int i = 0; i < k->nargs; i++) {
    cl_kernel_arg_address_qualifier aq;
    char type[128] = "", name[128] = "";
    if (clGetKernelArgInfo(k->kernel, (cl_uint)i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq,
                           &aq, NULL) != CL_SUCCESS ||
        clGetKernelArgInfo(k->kernel, (cl_uint)i, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type,
                           NULL) != CL_SUCCESS ||
        clGetKernelArgInfo(k->kernel, (cl_uint)i, CL_KERNEL_ARG_NAME, sizeof name, name, NULL) !=
            CL_SUCCESS)
      return -1;
    describe_arg(&k->args[i], aq, type, name);
  }
  return 0;
}

static int builtin_type(const char *t);

/* The same from the program's source, where the driver gave nothing. The source cannot say
 * what a type name other than a built-in one is (a macro from the build options, a typedef),
 * so such a type is marked unknown. 0 on success. */
static int describe_from_source(ocal_kernel k, const char *source) {
  ocal__sig_arg *sig = NULL;
  int n = ocal__kernel_signature(source, k->name, &sig);
  if (n != k->nargs) {
    free(sig);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    k->args[i].kind = sig[i].kind;
    normalise_type(sig[i].type, k->args[i].type, sizeof k->args[i].type);
    snprintf(k->args[i].name, sizeof k->args[i].name, "%s", sig[i].name);
    k->args[i].type_known = builtin_type(k->args[i].type) ||
                            (sig[i].kind != OCAL__ARG_SCALAR && strcmp(k->args[i].type, "void") == 0);
  }
  free(sig);
  return 0;
}

/* Names the kernels of a program, for the message about a missing one. */
static void append_kernel_names(cl_program program) {
  /* The count first: NVIDIA's driver (580) crashes when asked for the names of a program
   * without kernels, and leaves the count unwritten for one. */
  size_t count = 0, size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof count, &count, NULL) !=
      CL_SUCCESS)
    return;
  if (count == 0) {
    ocal__append_error(" (its kernels: none)");
    return;
  }
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) != CL_SUCCESS || !size)
    return;
  /* Zeroed and one byte longer: PoCL reports a size for a program without kernels and then
   * writes nothing, and a driver need not terminate what it writes. */
  char *names = calloc(size + 1, 1);
  if (names && clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names, NULL) ==
                   CL_SUCCESS)
    ocal__append_error(" (its kernels: %s)", names[0] ? names : "none");
  free(names);
}

ocal_status ocal_kernel_create(ocal_program program, const char *name, ocal_kernel *kernel) {
  if (!kernel) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "kernel must not be NULL");
  *kernel = NULL;
  ocal_status status = check_program(program, __func__);
  if (status != OCAL_OK) return status;
  if (!name || !name[0]) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "name must not be NULL or empty");
  ocal_context ctx = program->ctx;
  cl_program clp = ocal__program_cl(program->program);
  cl_int err;
  cl_kernel clk = clCreateKernel(clp, name, &err);
  if (err == CL_INVALID_KERNEL_NAME) {
    status = OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the program has no kernel named '%s'", name);
    append_kernel_names(clp);
    return status;
  }
  if (err != CL_SUCCESS) return ocal__cl_fail(ocal__context_info(ctx)->name, err, "clCreateKernel", __func__);
  struct ocal_kernel_s *k = calloc(1, sizeof *k);
  if (!k || !(k->name = ocal__strdup(name))) {
    free(k);
    clReleaseKernel(clk);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the kernel");
  }
  k->kernel = clk;
  k->ctx = ctx;
  cl_uint nargs = 0;
  clGetKernelInfo(clk, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  k->nargs = (int)nargs;
  k->args = calloc(nargs ? nargs : 1, sizeof *k->args);
  if (!k->args) {
    clReleaseKernel(clk);
    free(k->name);
    free(k);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for the kernel");
  }
  k->described = describe_from_facts(k, program->program) == 0 || describe_from_driver(k) == 0 ||
                 describe_from_source(k, ocal__program_source(program->program)) == 0;
  if (!k->described)
    for (int i = 0; i < k->nargs; i++) k->args[i].kind = OCAL__ARG_UNKNOWN;
  clGetKernelWorkGroupInfo(clk, ocal__context_device(ctx), CL_KERNEL_WORK_GROUP_SIZE, sizeof k->wg_size,
                           &k->wg_size, NULL);
  clGetKernelWorkGroupInfo(clk, ocal__context_device(ctx), CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                           sizeof k->preferred, &k->preferred, NULL);
  clGetKernelWorkGroupInfo(clk, ocal__context_device(ctx), CL_KERNEL_LOCAL_MEM_SIZE, sizeof k->kernel_local,
                           &k->kernel_local, NULL);
  if (clGetKernelWorkGroupInfo(clk, ocal__context_device(ctx), CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                               sizeof k->reqd, k->reqd, NULL) != CL_SUCCESS)
    memset(k->reqd, 0, sizeof k->reqd);
  /* The device's limits as the context plans with them (limits.c: OCAL_LIMITS included). */
  memcpy(k->max_items, ocal__context_info(ctx)->max_work_item_sizes, sizeof k->max_items);
  k->max_wg = ocal__context_info(ctx)->max_work_group_size;
  k->device_local = ocal__context_info(ctx)->local_mem_bytes;
  k->base_align_bits = ocal__context_info(ctx)->mem_base_align_bytes * 8;
  clGetDeviceInfo(ocal__context_device(ctx), CL_DEVICE_ADDRESS_BITS, sizeof k->address_bits, &k->address_bits,
                  NULL);
  if (!k->wg_size) k->wg_size = 1;
  if (!k->preferred) k->preferred = 1;
  if (!k->max_wg) k->max_wg = k->wg_size;
  for (int d = 0; d < 3; d++)
    if (!k->max_items[d]) k->max_items[d] = 1;
  if (!k->address_bits) k->address_bits = 32;
  k->magic = KERNEL_MAGIC;
  ocal__context_retain(ctx);
  *kernel = k;
  return OCAL_OK;
}

static void clear_arg(karg *a) {
  if (a->sub) clReleaseMemObject(a->sub);
  if (a->buffer) ocal_buffer_release(a->buffer);
  a->sub = NULL;
  a->buffer = NULL;
  a->set = 0;
  a->local_bytes = 0;
}

ocal_status ocal_kernel_release(ocal_kernel kernel) {
  if (!kernel) return OCAL_OK;
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  ocal_context ctx = kernel->ctx;
  /* Launches already queued keep their own references to the memory (OpenCL retains what a
   * command uses), so the buffers can go now. */
  for (int i = 0; i < kernel->nargs; i++) clear_arg(&kernel->args[i]);
  kernel->magic = 0;
  clReleaseKernel(kernel->kernel);
  free(kernel->args);
  free(kernel->name);
  free(kernel);
  ocal__context_unref(ctx);
  return OCAL_OK;
}

ocal_status ocal_kernel_get_num_args(ocal_kernel kernel, int *count) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if (!count) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "count must not be NULL");
  *count = kernel->nargs;
  return OCAL_OK;
}

ocal_status ocal_kernel_get_cl_kernel(ocal_kernel kernel, cl_kernel *out) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL");
  *out = kernel->kernel;
  return OCAL_OK;
}

/* What goes between an argument's type and its name when a message quotes its declaration. */
static const char *decl_gap(const karg *a) {
  return a->kind == OCAL__ARG_GLOBAL || a->kind == OCAL__ARG_LOCAL ? " *" : " ";
}

static const char *kind_words(ocal__arg_kind kind) {
  switch (kind) {
    case OCAL__ARG_GLOBAL: return "a __global pointer: set it with ocal_kernel_set_buffer";
    case OCAL__ARG_LOCAL: return "a __local pointer: set it with ocal_kernel_set_local";
    case OCAL__ARG_SCALAR: return "a scalar: set it with ocal_kernel_set_scalar";
    default: return "of an unknown kind";
  }
}

/* Checks the index and that the argument is of the kind the setter sets. */
static ocal_status check_arg(ocal_kernel k, int index, ocal__arg_kind want, const char *func) {
  if (index < 0 || index >= k->nargs)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "argument index %d is out of range: kernel '%s' takes %d argument%s "
                      "(0 .. %d)",
                      index, k->name, k->nargs, k->nargs == 1 ? "" : "s", k->nargs - 1);
  karg *a = &k->args[index];
  if (a->kind != OCAL__ARG_UNKNOWN && a->kind != want)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func,
                      "argument %d ('%s%s%s') of kernel '%s' is %s", index, a->type, decl_gap(a),
                      a->name, k->name, kind_words(a->kind));
  return OCAL_OK;
}

/* Whether a normalised type name is one of OpenCL C's built-in scalar or vector names (a
 * typedef or a struct is left unchecked). */
static int builtin_type(const char *t) {
  static const char *const base[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                     "ulong", "float", "double", "half", "bool", NULL};
  for (int i = 0; base[i]; i++) {
    size_t n = strlen(base[i]);
    if (strncmp(t, base[i], n) != 0) continue;
    const char *rest = t + n;
    if (!*rest || strcmp(rest, "2") == 0 || strcmp(rest, "3") == 0 || strcmp(rest, "4") == 0 ||
        strcmp(rest, "8") == 0 || strcmp(rest, "16") == 0)
      return 1;
  }
  return 0;
}

/* Refuses to set an argument whose type ocal cannot know: a wrong value would reach the
 * kernel unchecked. */
static ocal_status check_type_known(ocal_kernel k, int index, const char *func) {
  karg *a = &k->args[index];
  if (!k->described)
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "the type of argument %d of kernel '%s' cannot be known: the driver "
                      "reports no argument information for the program and its declaration "
                      "could not be read; set it with clSetKernelArg on "
                      "ocal_kernel_get_cl_kernel's kernel",
                      index, k->name);
  if (!a->type_known)
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "the type of argument %d ('%s%s%s') of kernel '%s' cannot be known: the "
                      "driver reports no argument information for the program, and '%s' is "
                      "not a built-in type of OpenCL C (a macro from the build options or a "
                      "typedef); declare the argument with a built-in type, or set it with "
                      "clSetKernelArg on ocal_kernel_get_cl_kernel's kernel",
                      index, a->type, decl_gap(a), a->name, k->name, a->type);
  return OCAL_OK;
}

static ocal_status set_arg(ocal_kernel k, int index, size_t size, const void *value,
                           const char *func) {
  cl_int err = clSetKernelArg(k->kernel, (cl_uint)index, size, value);
  if (err != CL_SUCCESS) {
    ocal_status status = ocal__cl_fail(ocal__context_info(k->ctx)->name, err, "clSetKernelArg", func);
    ocal__append_error(" (argument %d of kernel '%s', %zu bytes)", index, k->name, size);
    return status;
  }
  return OCAL_OK;
}

ocal_status ocal_kernel_set_buffer(ocal_kernel kernel, int index, ocal_buffer buffer) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if ((status = check_arg(kernel, index, OCAL__ARG_GLOBAL, __func__)) != OCAL_OK) return status;
  if ((status = ocal__check_buffer(buffer, __func__)) != OCAL_OK) return status;
  if (buffer->ctx != kernel->ctx)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the buffer belongs to another context than the kernel");
  if ((status = check_type_known(kernel, index, __func__)) != OCAL_OK) return status;
  karg *a = &kernel->args[index];
  const char *want = ocal__dtype_cl_type(buffer->dtype);
  if (kernel->described && strcmp(a->type, want) != 0 && builtin_type(a->type) &&
      strcmp(a->type, "void") != 0)
    return OCAL_FAIL(OCAL_TYPE_MISMATCH,
                     "argument %d ('%s *%s') of kernel '%s' points to %s, but the buffer holds "
                     "%s (%s)",
                     index, a->type, a->name, kernel->name, a->type, want,
                     ocal_dtype_name(buffer->dtype));
  cl_mem mem = buffer->mem, sub = NULL;
  if (!mem) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "the buffer is empty (no elements)");
  size_t offset_bytes = buffer->offset * ocal_dtype_size(buffer->dtype);
  if (offset_bytes) {
    size_t align = kernel->base_align_bits / 8;
    if (align && offset_bytes % align != 0)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "the buffer is a view starting %zu bytes into its memory, which the "
                       "device cannot pass as a pointer (offsets must be multiples of %zu "
                       "bytes): pass the whole buffer and the offset as a scalar argument",
                       offset_bytes, align);
    cl_buffer_region region = {offset_bytes, buffer->numel * ocal_dtype_size(buffer->dtype)};
    cl_int err;
    sub = clCreateSubBuffer(mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) return ocal__cl_fail(ocal__context_info(kernel->ctx)->name, err, "clCreateSubBuffer", __func__);
    mem = sub;
  }
  status = set_arg(kernel, index, sizeof mem, &mem, __func__);
  if (status != OCAL_OK) {
    if (sub) clReleaseMemObject(sub);
    return status;
  }
  /* Keep the buffer alive while the argument refers to it (ocal_buffer_view retains). */
  ocal_buffer ref = NULL;
  size_t shape[1] = {buffer->numel};
  if (buffer->numel && ocal_buffer_view(buffer, 0, 1, shape, &ref) != OCAL_OK) ref = NULL;
  clear_arg(a);
  a->buffer = ref;
  a->sub = sub;
  a->set = 1;
  return OCAL_OK;
}

ocal_status ocal_kernel_set_scalar(ocal_kernel kernel, int index, ocal_dtype dtype,
                                   const void *value) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if ((status = check_arg(kernel, index, OCAL__ARG_SCALAR, __func__)) != OCAL_OK) return status;
  if ((unsigned)dtype >= OCAL_DTYPE_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown element type %d", (int)dtype);
  if (!value) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "value must not be NULL");
  if ((dtype == OCAL_F64 || dtype == OCAL_C64) && !ocal__context_fp64(kernel->ctx))
    return OCAL_FAIL(OCAL_UNSUPPORTED, "the device has no double precision");
  if ((status = check_type_known(kernel, index, __func__)) != OCAL_OK) return status;
  karg *a = &kernel->args[index];
  const char *want = ocal__dtype_cl_type(dtype);
  if (kernel->described && strcmp(a->type, want) != 0 && builtin_type(a->type))
    return OCAL_FAIL(OCAL_TYPE_MISMATCH,
                     "argument %d ('%s %s') of kernel '%s' is a %s, but the value given is %s "
                     "(%s)",
                     index, a->type, a->name, kernel->name, a->type, ocal_dtype_name(dtype), want);
  status = set_arg(kernel, index, ocal_dtype_size(dtype), value, __func__);
  if (status != OCAL_OK) return status;
  clear_arg(a);
  a->set = 1;
  return OCAL_OK;
}

ocal_status ocal_kernel_set_local(ocal_kernel kernel, int index, size_t bytes) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if ((status = check_arg(kernel, index, OCAL__ARG_LOCAL, __func__)) != OCAL_OK) return status;
  if (bytes == 0) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "bytes must be > 0");
  if (bytes > kernel->device_local)
    return OCAL_FAIL(OCAL_UNSUPPORTED,
                     "%zu bytes of local memory asked for argument %d of kernel '%s', but the "
                     "device '%s' has %llu bytes",
                     bytes, index, kernel->name, ocal__context_info(kernel->ctx)->name,
                     (unsigned long long)kernel->device_local);
  status = set_arg(kernel, index, bytes, NULL, __func__);
  if (status != OCAL_OK) return status;
  clear_arg(&kernel->args[index]);
  kernel->args[index].set = 1;
  kernel->args[index].local_bytes = bytes;
  return OCAL_OK;
}

/* ocal's choice of work-group size: as large as the kernel and device allow up to 256
 * work-items, filled round-robin across the dimensions (first dimension first) without
 * exceeding the next power of two of each global size, so that a 2-D range gets square-ish
 * tiles and a thin range is not padded far beyond its size. In 1-D the size is a multiple of
 * the preferred multiple (a warp) where it can be. */
static void choose_local(const ocal_kernel k, int ndim, const size_t *global, size_t *local) {
  size_t budget = k->wg_size < k->max_wg ? k->wg_size : k->max_wg;
  if (budget > 256) budget = 256;
  for (int d = 0; d < ndim; d++) local[d] = 1;
  size_t product = 1;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int d = 0; d < ndim; d++) {
      size_t cap = 1;
      while (cap < global[d] && cap < ((size_t)1 << 30)) cap *= 2;
      if (local[d] * 2 <= cap && local[d] * 2 <= k->max_items[d] && product * 2 <= budget) {
        local[d] *= 2;
        product *= 2;
        changed = 1;
      }
    }
  }
  if (ndim == 1 && budget >= k->preferred && local[0] < k->preferred && global[0] > local[0]) {
    /* A kernel whose limit is not a power of two: keep whole warps. */
    local[0] = k->preferred;
  }
}

ocal_status ocal_kernel_launch(ocal_kernel kernel, int ndim, const size_t *global,
                               const size_t *local) {
  ocal_status status = check_kernel(kernel, __func__);
  if (status != OCAL_OK) return status;
  if (ndim < 1 || ndim > 3)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "ndim is %d: a launch has 1, 2 or 3 dimensions", ndim);
  if (!global) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "global must not be NULL");
  for (int i = 0; i < kernel->nargs; i++)
    if (!kernel->args[i].set) {
      karg *a = &kernel->args[i];
      if (a->name[0])
        return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                         "argument %d ('%s') of kernel '%s' was not set: it is %s", i, a->name,
                         kernel->name, kind_words(a->kind));
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "argument %d of kernel '%s' was not set (it takes %d arguments)", i,
                       kernel->name, kernel->nargs);
    }
  size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
  for (int d = 0; d < ndim; d++) {
    if (global[d] == 0)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "global[%d] is 0: every size must be > 0", d);
    g[d] = global[d];
  }
  /* A kernel compiled with reqd_work_group_size runs with that work-group only. */
  int reqd = kernel->reqd[0] != 0;
  for (int d = ndim; reqd && d < 3; d++)
    if (kernel->reqd[d] > 1)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "kernel '%s' declares reqd_work_group_size(%zu, %zu, %zu), %d-D, but the "
                       "launch has %d dimension%s: launch it with %d",
                       kernel->name, kernel->reqd[0], kernel->reqd[1], kernel->reqd[2],
                       kernel->reqd[2] > 1 ? 3 : 2, ndim, ndim > 1 ? "s" : "",
                       kernel->reqd[2] > 1 ? 3 : 2);
  if (reqd && local) {
    for (int d = 0; d < ndim; d++)
      if (local[d] != kernel->reqd[d])
        return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                         "local[%d] is %zu, but kernel '%s' declares reqd_work_group_size(%zu, "
                         "%zu, %zu): pass that size as local, or NULL to let ocal use it",
                         d, local[d], kernel->name, kernel->reqd[0], kernel->reqd[1],
                         kernel->reqd[2]);
  }
  if (reqd) {
    for (int d = 0; d < ndim; d++) l[d] = kernel->reqd[d];
  } else if (local) {
    size_t product = 1;
    for (int d = 0; d < ndim; d++) {
      if (local[d] == 0)
        return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "local[%d] is 0: every size must be > 0", d);
      if (local[d] > kernel->max_items[d])
        return OCAL_FAIL(OCAL_UNSUPPORTED,
                         "local[%d] is %zu, but device '%s' allows at most %zu work-items in "
                         "dimension %d of a work-group",
                         d, local[d], ocal__context_info(kernel->ctx)->name, kernel->max_items[d], d);
      l[d] = local[d];
      if (ocal__mul_overflows(product, l[d], &product)) product = (size_t)-1;
    }
    size_t limit = kernel->wg_size < kernel->max_wg ? kernel->wg_size : kernel->max_wg;
    if (product > limit)
      return OCAL_FAIL(OCAL_UNSUPPORTED,
                       "a work-group of %zu work-items is too large: kernel '%s' on device "
                       "'%s' allows at most %zu (pass local = NULL to let ocal choose)",
                       product, kernel->name, ocal__context_info(kernel->ctx)->name, limit);
  } else {
    choose_local(kernel, ndim, g, l);
  }
  /* Round every global size up to a multiple of the work-group size (the kernel guards). */
  size_t max_index = kernel->address_bits >= 64 ? (size_t)-1
                                                : (size_t)((1ull << kernel->address_bits) - 1);
  for (int d = 0; d < ndim; d++) {
    size_t rounded;
    if (ocal__add_overflows(g[d], l[d] - 1, &rounded) || (rounded = rounded / l[d] * l[d]) > max_index)
      return OCAL_FAIL(OCAL_UNSUPPORTED,
                       "global[%d] = %zu is larger than device '%s' can index (%u-bit addresses)",
                       d, g[d], ocal__context_info(kernel->ctx)->name, kernel->address_bits);
    g[d] = rounded;
  }
  /* Each dimension may be addressable while their product is not: a range of 2^32 x 2^32
   * work-items overflows a 64-bit size_t (get_global_linear_id, the driver's own loop
   * counters), and drivers then run nothing or abort later at ocal_context_finish. */
  size_t total = 1;
  for (int d = 0; d < ndim; d++)
    if (ocal__mul_overflows(total, g[d], &total) || total > max_index)
      return OCAL_FAIL(OCAL_UNSUPPORTED,
                       "the launch range %zu x %zu x %zu (rounded to the work-group size) has "
                       "more work-items than device '%s' can address (%u-bit addresses); "
                       "split the work into several launches",
                       g[0], g[1], g[2], ocal__context_info(kernel->ctx)->name, kernel->address_bits);
  /* OpenCL bounds only the global sizes (size_t), not the work-group count, and PoCL numbers
   * the work-groups of a launch with one 32-bit index: 2^32 of them or more abort the process
   * (or wrap and run too few). The same bound on every device keeps a launch that runs on a
   * GPU from aborting on the CPU fallback. The product cannot overflow: it is at most the
   * work-item total checked above. */
  size_t groups = 1;
  for (int d = 0; d < ndim; d++) groups *= g[d] / l[d];
  if (groups > UINT32_MAX)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the launch has %zu work-groups (%zu x %zu x %zu), more than the %lu one "
                     "launch may have: pass larger local sizes or split the work into several "
                     "launches",
                     groups, g[0] / l[0], g[1] / l[1], g[2] / l[2], (unsigned long)UINT32_MAX);
  cl_ulong local_total = kernel->kernel_local;
  for (int i = 0; i < kernel->nargs; i++) local_total += kernel->args[i].local_bytes;
  if (local_total > kernel->device_local)
    return OCAL_FAIL(OCAL_UNSUPPORTED,
                     "kernel '%s' needs %llu bytes of local memory per work-group (its own "
                     "arrays and the __local arguments), but device '%s' has %llu",
                     kernel->name, (unsigned long long)local_total, ocal__context_info(kernel->ctx)->name,
                     (unsigned long long)kernel->device_local);
  return ocal__enqueue_nd(kernel->ctx, kernel->kernel, kernel->name, (cl_uint)ndim, g, l,
                          __func__);
}
