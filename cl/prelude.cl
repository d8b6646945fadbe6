/* ocal — helpers shared by the kernel sources. A source takes them with the line
 * `#include "prelude.cl"`, which build-aux/embed-cl.sh replaces by this file's text when it
 * embeds the sources, so the library needs no include path at run time and a program's cache
 * key covers the prelude (it is part of the source text).
 * Every name starts with ocal_, parameters and locals included, and vector components are
 * read as .s0 to .s3: reduce.cl is compiled after a user's preamble, whose macros (a
 * `#define w 7`) must not change this code.
 *
 * bf16 is the upper half of an f32: read by a shift, written rounding to nearest even by
 * integer arithmetic, a NaN kept a quiet NaN (truncating a signalling NaN's payload could
 * leave the bits of an infinity). Plain (not inline) functions, as OpenCL C 1.x has no
 * static inline and an inline one that a compiler does not inline is left undefined. */
float ocal_bf16_load(const ushort ocal_h) { return as_float((uint)ocal_h << 16); }

float4 ocal_bf16_load4(const ushort4 ocal_h) { return as_float4(convert_uint4(ocal_h) << 16); }

ushort ocal_bf16_round(const float ocal_f) {
  const uint ocal_u = as_uint(ocal_f);
  if ((ocal_u & 0x7fffffffu) > 0x7f800000u) return (ushort)((ocal_u >> 16) | 0x40u);
  return (ushort)((ocal_u + 0x7fffu + ((ocal_u >> 16) & 1u)) >> 16);
}

ushort4 ocal_bf16_round4(const float4 ocal_f) {
  return (ushort4)(ocal_bf16_round(ocal_f.s0), ocal_bf16_round(ocal_f.s1),
                   ocal_bf16_round(ocal_f.s2), ocal_bf16_round(ocal_f.s3));
}
