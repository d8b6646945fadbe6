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
  static const struct {
    ocal_dtype dtype;
    const char *type, *reg;
  } table[] = {{OCAL_F32, "f32", "f"}, {OCAL_F64, "f64", "d"}, {OCAL_I32, "s32", "r"},
               {OCAL_U32, "u32", "r"}, {OCAL_I64, "s64", "l"}, {OCAL_U64, "u64", "l"}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].dtype == dtype) {
      *type = table[i].type;
      *reg = table[i].reg;
      return 1;
    }
  return 0;
}
