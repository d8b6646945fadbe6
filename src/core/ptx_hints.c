/* ocal — the one host-side gate of the NVIDIA cache-hint loads (cl/ptx_load.cl), which the
 * reductions and the sparse products carry: whether a build may hold inline PTX, which hint
 * a kernel gets, and the PTX type names of its loads. */
#include "internal.h"

int ocal__ptx_hints_allowed(ocal_context ctx) {
  /* Inline PTX must never reach another compiler: PoCL crashes on it, or builds it wrong. */
  return ocal__context_compute_capability(ctx) > 0;
}

int ocal__ptx_hint_choose(ocal_context ctx, int named, int unset, int automatic, int plain,
                          int refused) {
  if (named != unset) return named;
  return ocal__ptx_hints_allowed(ctx) && !refused ? automatic : plain;
}

int ocal__ptx_type(ocal_dtype dtype, const char **type, const char **reg) {
  switch (dtype) {
    case OCAL_F32: *type = "f32", *reg = "f"; return 1;
    case OCAL_F64: *type = "f64", *reg = "d"; return 1;
    case OCAL_I32: *type = "s32", *reg = "r"; return 1;
    case OCAL_U32: *type = "u32", *reg = "r"; return 1;
    case OCAL_I64: *type = "s64", *reg = "l"; return 1;
    case OCAL_U64: *type = "u64", *reg = "l"; return 1;
    default: return 0;
  }
}
