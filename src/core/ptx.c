/* ocal — PTX retargeting: a program built by NVIDIA's OpenCL compiler, rebuilt for another PTX
 * target (sm_90a) with its "//@" lines made live.
 *
 * Why: NVIDIA's OpenCL compiler emits PTX for `.target sm_90` on an H100, where ptxas refuses
 * Hopper's wgmma instructions, and OpenCL C cannot ask for sm_90a (docs/tensor-cores.md,
 * "wgmma from OpenCL"). A kernel writes those instructions as inline-assembly comments
 * starting "//@": the OpenCL build substitutes their operands and ignores them; here the
 * program's binary (the PTX text NVIDIA's driver returns) gets its target changed and the
 * markers removed, and is built again with clCreateProgramWithBinary. The disk cache then
 * stores the retargeted program like any other. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MARKER "-DOCAL_PTX_TARGET="

const char *ocal__ptx_target_option(const char *options, char *target, size_t size) {
  const char *at = options ? strstr(options, MARKER) : NULL;
  if (!at) return NULL;
  at += strlen(MARKER);
  size_t n = strcspn(at, " \t");
  if (n == 0 || n >= size) return NULL;
  memcpy(target, at, n);
  target[n] = '\0';
  return target;
}

/* The program's binary as a NUL-terminated text, or NULL. */
static char *binary_text(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
          CL_SUCCESS ||
      size == 0)
    return NULL;
  char *text = calloc(1, size + 1);
  unsigned char *bins[1] = {(unsigned char *)text};
  if (!text || clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) !=
                   CL_SUCCESS) {
    free(text);
    return NULL;
  }
  return text;
}

char *ocal__ptx_retarget_text(const char *text, const char *target) {
  const char *t = strstr(text, ".target ");
  if (!t || !strstr(text, ".version ")) return NULL;
  const char *name = t + strlen(".target "), *end = name + strcspn(name, ", \t\r\n");
  size_t markers = 0;
  for (const char *p = text; (p = strstr(p, "//@")); p += 3) markers++;
  size_t n = strlen(text) - (size_t)(end - name) + strlen(target) - 3 * markers;
  char *out = malloc(n + 1), *w = out;
  if (!out) return NULL;
  memcpy(w, text, (size_t)(name - text));
  w += name - text;
  strcpy(w, target);
  w += strlen(target);
  for (const char *p = end; *p;) {
    if (p[0] == '/' && p[1] == '/' && p[2] == '@') {
      p += 3;
      continue;
    }
    *w++ = *p++;
  }
  *w = '\0';
  /* The tensor-map instructions (tensormap.replace, tensormap.cp_fenceproxy) need PTX ISA 8.3:
   * in a program that uses them, an older ".version D.D" is raised to it (every later ISA
   * keeps the earlier ones' text). Other programs keep theirs, so that a driver whose ISA
   * stops short of 8.3 still builds them. */
  char *v = strstr(out, "tensormap.") ? strstr(out, ".version ") : NULL;
  if (v) {
    v += strlen(".version ");
    if (v[0] >= '0' && v[0] <= '9' && v[1] == '.' && v[2] >= '0' && v[2] <= '9' &&
        !(v[3] >= '0' && v[3] <= '9') && (v[0] - '0') * 10 + (v[2] - '0') < 83) {
      v[0] = '8';
      v[2] = '3';
    }
  }
  return out;
}

ocal_status ocal__ptx_retarget(ocal_context ctx, const char *source_name, const char *target,
                               cl_program *program, const char *func) {
  const char *device_name = ctx->info.name;
  char *text = binary_text(*program);
  char *ptx = text ? ocal__ptx_retarget_text(text, target) : NULL;
  free(text);
  if (!ptx)
    return ocal__fail(OCAL_BUILD_FAILED, func,
                      "%s asks for PTX target %s, but the binary of '%s' is not PTX text (only "
                      "NVIDIA's OpenCL driver returns PTX)",
                      source_name, target, device_name);
  size_t size = strlen(ptx);
  const unsigned char *bins[1] = {(const unsigned char *)ptx};
  cl_int err, binary_status = CL_SUCCESS;
  cl_program p =
      clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &size, bins, &binary_status, &err);
  free(ptx);
  if (err != CL_SUCCESS)
    return ocal__fail(OCAL_BUILD_FAILED, func,
                      "%s retargeted to %s: clCreateProgramWithBinary returned %s (%d) on '%s'",
                      source_name, target, ocal__cl_error_name(err), (int)err, device_name);
  err = clBuildProgram(p, 1, &ctx->device, NULL, NULL, NULL);
  if (err != CL_SUCCESS) {
    ocal_status s = ocal__fail(OCAL_BUILD_FAILED, func,
                               "%s retargeted to %s failed to build on '%s': clBuildProgram "
                               "returned %s (%d)",
                               source_name, target, device_name, ocal__cl_error_name(err),
                               (int)err);
    ocal__append_build_log(ctx, p);
    clReleaseProgram(p);
    return s;
  }
  clReleaseProgram(*program);
  *program = p;
  return OCAL_OK;
}
