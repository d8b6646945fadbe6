/** \file
 * ocal — fast Fourier transforms: one plan API over two engines, VkFFT and clFFT.
 *
 * Describe a transform once (ocal_fft_desc), create a plan from the description, then
 * execute the plan many times on ocal buffers:
 *
 *   ocal_fft_desc d;
 *   ocal_fft_desc_init(&d);            // 1-D, one transform, complex-to-complex, f32
 *   d.lengths[0] = 4096;
 *   d.batch = 32768;
 *   ocal_fft_plan plan;
 *   ocal_fft_plan_create(ctx, &d, &plan);
 *   ocal_fft_execute(plan, OCAL_FFT_FORWARD, in, out);   // in, out: c32, 4096 * 32768
 *   ocal_fft_execute(plan, OCAL_FFT_INVERSE, out, in);   // back, scaled by 1/4096
 *   ocal_fft_plan_release(plan);
 *
 * Conventions (those of NumPy's numpy.fft):
 *   - The forward transform is X[k] = sum_j x[j] exp(-2 pi i j k / n); the inverse uses
 *     exp(+2 pi i j k / n).
 *   - Normalisation, as NumPy's norm= argument: "backward" (the default) leaves the forward
 *     transform unscaled and scales the inverse by 1/N; "ortho" scales both by 1/sqrt(N);
 *     "forward" scales the forward transform by 1/N and not the inverse. N is the product of
 *     the transform lengths (the logical, real lengths for R2C and C2R).
 *   - Layout is row-major (C order): lengths[ndim - 1] is the contiguous dimension; a batch
 *     of transforms lies one after another, each of prod(lengths) elements (prod of the
 *     complex lengths on the complex side of R2C and C2R).
 *   - Real transforms follow numpy.fft.rfftn / irfftn: an R2C transform of real lengths
 *     (.., n) gives complex lengths (.., n / 2 + 1); C2R goes back. The transform's real
 *     length n is what the description gives, so odd n round-trips exactly. A C2R input
 *     need not be Hermitian: as numpy.fft.irfftn, every engine reads only the Hermitian
 *     part of its first bin column (and, for an even n, of its last one) over the other
 *     axes, so for 1-D rows the imaginary parts of each row's DC and Nyquist bins are
 *     ignored (on ocal's copy of the input: the caller's is left unchanged).
 *   - Precision comes from the description: OCAL_F32 plans take f32 and c32 buffers, OCAL_F64
 *     plans f64 and c64 (needs a context with fp64).
 *
 * Engines: VkFFT (the default where ocal was built with it: fast, any C2C length through
 * Bluestein's algorithm, compiled kernels kept in ocal's disk cache so a second process
 * creates the same plan quickly) and clFFT (lengths whose prime factors are 2, 3, 5, 7, 11 and
 * 13 only). The description's engine field, else the OCAL_FFT environment variable
 * ("vkfft" or "clfft"), else the default chooses.
 *
 * Lengths of 1, on every engine: an axis of length 1 is dropped before an engine sees it (it
 * transforms nothing and moves no element), and a transform whose every length is 1 runs on
 * ocal's own kernels: C2C a copy, R2C each real widened to a complex number, C2R each real
 * part kept; the normalisation of N = 1 is 1. An R2C/C2R whose last length is 1 (and another
 * is not) is a C2C transform of the other axes: it runs through a C2C plan of the engine, as
 * below. Where the default engine is VkFFT and it cannot build a plan on the device, the
 * next candidate takes it: for a real transform VkFFT through a C2C plan, then clFFT, then
 * (real) clFFT through a C2C plan.
 *
 * clFFT and faults: clFFT 2.12 ends the process from inside its plan bake when an OpenCL call
 * there fails (an assertion after a failed clGetProgramInfo; a crash or a silently corrupt
 * plan after a failed clEnqueueWriteBuffer), which ocal cannot catch. So the default engine
 * reaches clFFT only where ocal was built without VkFFT or VkFFT cannot build the plan on the
 * device; a plan that names clFFT (the desc's engine or OCAL_FFT=clfft) keeps that exposure for
 * every shape with a length above 1, under a driver that runs out of memory or resources
 * while clFFT builds its kernels.
 *
 * R2C and C2R whose last (contiguous) length is odd and too long for one VkFFT work-group,
 * and whose prime factors are not all <= 13 (so clFFT refuses them too), run on the default
 * engine through a C2C plan of the same lengths: the real input widened to complex, or the
 * full spectrum rebuilt from its n/2+1 bins by conjugate symmetry, on a complex scratch
 * buffer the plan keeps (batch x the product of the lengths complex numbers); about twice
 * the time and memory of a real transform. The plan's info then names the engine
 * "vkfft (via c2c)". (VkFFT 1.2.26 does odd R2C only within one work-group's local memory;
 * on CPU devices ocal gives VkFFT the local memory and work-group size of a GPU (32 KiB,
 * 256 work-items), because larger work-groups overflowed the stacks of PoCL's threads: there
 * odd lengths above 4095 in single precision and 1023 in double precision take this path.)
 * A plan that names its engine (VkFFT by name) still refuses them with OCAL_UNSUPPORTED.
 *
 * Plans are cached per context: creating a plan with a description equal to one created
 * before returns the same plan again (at once) with one more reference. Plans may be created,
 * executed and released from several threads; executions are queued on the context's
 * in-order queue like every other ocal command, so they do not block. */
#ifndef OCAL_FFT_H
#define OCAL_FFT_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/buffer.h"
#include "ocal/context.h"
#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to an FFT plan. Created by ocal_fft_plan_create, freed by
 * ocal_fft_plan_release. A plan keeps its context alive until it is released. */
typedef struct ocal_fft_plan_s *ocal_fft_plan;

/** What a plan transforms. */
typedef enum ocal_fft_kind {
  OCAL_FFT_C2C = 0, /**< complex to complex, forward and inverse */
  OCAL_FFT_R2C = 1, /**< real to complex (numpy.fft.rfftn), forward only */
  OCAL_FFT_C2R = 2  /**< complex to real (numpy.fft.irfftn), inverse only */
} ocal_fft_kind;

/** Direction of one execution: the sign of the exponent. */
typedef enum ocal_fft_direction {
  OCAL_FFT_FORWARD = -1, /**< exp(-2 pi i j k / n) */
  OCAL_FFT_INVERSE = 1   /**< exp(+2 pi i j k / n), also called backward */
} ocal_fft_direction;

/** Normalisation, named as NumPy's norm= argument. */
typedef enum ocal_fft_norm {
  OCAL_FFT_NORM_BACKWARD = 0, /**< forward unscaled, inverse scaled by 1/N (NumPy default) */
  OCAL_FFT_NORM_ORTHO = 1,    /**< both scaled by 1/sqrt(N) */
  OCAL_FFT_NORM_FORWARD = 2   /**< forward scaled by 1/N, inverse unscaled */
} ocal_fft_norm;

/** The engine that computes a plan's transforms. */
typedef enum ocal_fft_engine {
  OCAL_FFT_ENGINE_DEFAULT = 0, /**< OCAL_FFT if set, else VkFFT where built, else clFFT */
  OCAL_FFT_ENGINE_VKFFT = 1,   /**< VkFFT's OpenCL backend */
  OCAL_FFT_ENGINE_CLFFT = 2,   /**< clFFT */
  OCAL_FFT_ENGINE_FOURSTEP = 3, /**< ocal's own two-pass four-step kernels: f32 C2C of 1-D
                                     power-of-two lengths 2^12 to 2^24, and 2-D of two
                                     power-of-two lengths 64 to 8192, that fit the device
                                     (other shapes are OCAL_UNSUPPORTED); the default engine
                                     picks it where it is the fastest */
  OCAL_FFT_ENGINE_COUNT = 4   /**< the number of engines (not an engine) */
} ocal_fft_engine;

/** Describes a transform. Start from ocal_fft_desc_init(), which sets struct_size: a
 * program compiled against an older, shorter struct keeps working with a newer library (the
 * fields it lacks take their defaults). */
typedef struct ocal_fft_desc {
  size_t struct_size;      /**< sizeof(ocal_fft_desc), set by ocal_fft_desc_init */
  int ndim;                /**< transform dimensions, 1 to 3 (default 1) */
  size_t lengths[3];       /**< the ndim transform lengths, row-major: lengths[ndim - 1] is
                                contiguous; real lengths for R2C and C2R; entries past ndim
                                are ignored */
  size_t batch;            /**< number of transforms, one after another (default 1) */
  ocal_fft_kind kind;      /**< default OCAL_FFT_C2C */
  ocal_dtype precision;    /**< OCAL_F32 (default) or OCAL_F64; OCAL_C32 and OCAL_C64 are
                                taken to mean the same */
  int in_place;            /**< 1: execute with out == in (C2C only); 0 (default): out of
                                place, in and out must not overlap; other values are
                                refused */
  ocal_fft_norm norm;      /**< default OCAL_FFT_NORM_BACKWARD */
  ocal_fft_engine engine;  /**< default OCAL_FFT_ENGINE_DEFAULT */
} ocal_fft_desc;

/** Facts of a created plan.
 * The library fills it; set struct_size = sizeof(ocal_fft_plan_info) before the call
 * (`ocal_fft_plan_info x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_fft_plan_info {
  size_t struct_size;       /**< sizeof(ocal_fft_plan_info), set by the caller */
  ocal_fft_engine engine;   /**< the engine that runs the plan (never
                                 OCAL_FFT_ENGINE_DEFAULT); OCAL_FFT_ENGINE_FOURSTEP also when
                                 the default engine hands a shape to the four-step kernels
                                 (f32 C2C 1-D 2^24 and 2-D 4096 x 4096 on GPUs with 48 KiB of
                                 local memory where a measurement on the device finds them
                                 faster than VkFFT, or every shape it takes with
                                 OCAL_FFT_FOURSTEP=1) */
  const char *engine_name;  /**< ocal_fft_engine_name(engine) (static string), or
                                 "vkfft (via c2c)" / "clfft (via c2c)" when a real plan runs
                                 through a C2C plan of that engine (above), or
                                 "ocal (length 1)" when every length is 1 (`engine` is then
                                 the engine the plan would have run on) */
  ocal_dtype in_dtype;      /**< element type execute wants for the forward direction's
                                 input (c32 for C2C f32, f32 for R2C f32, c32 for C2R f32) */
  ocal_dtype out_dtype;     /**< element type of the forward direction's output */
  size_t in_numel;          /**< elements of the input buffer (whole batch) */
  size_t out_numel;         /**< elements of the output buffer (whole batch) */
  int from_disk_cache;      /**< 1 when the engine's compiled kernels came from ocal's disk
                                 cache instead of the compiler */
  double create_seconds;    /**< wall time the engine took to create the plan */
} ocal_fft_plan_info;

/** Counters of one context's plan cache.
 * The library fills it; set struct_size = sizeof(ocal_fft_cache_stats) before the call
 * (`ocal_fft_cache_stats x = {.struct_size = sizeof x};`), as for every struct ocal fills:
 * a later version may append fields, and then writes only the ones a program compiled
 * against this struct knows. */
typedef struct ocal_fft_cache_stats {
  size_t struct_size;    /**< sizeof(ocal_fft_cache_stats), set by the caller */
  uint64_t plans_built;  /**< plans an engine created (memory cache misses) */
  uint64_t memory_hits;  /**< plan requests served from the context's cache */
  uint64_t disk_hits;    /**< engine plans whose compiled kernels came from the disk cache */
  uint64_t disk_stores;  /**< engine plans whose compiled kernels were written to it */
} ocal_fft_cache_stats;

/** Fills \p desc with the defaults: 1-D, batch 1, C2C, f32, out of place, backward
 * normalisation, default engine; lengths 0 (to be set); struct_size.
 * \param desc the description to fill.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT when desc is NULL. */
OCAL_API ocal_status ocal_fft_desc_init(ocal_fft_desc *desc);

/** Creates (or finds in the context's cache) a plan for a transform.
 * \param ctx the context whose device runs the transforms.
 * \param desc the transform; read only during the call.
 * \param plan receives the plan (NULL on failure); release it with ocal_fft_plan_release.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a NULL or released context;
 *          OCAL_INVALID_ARGUMENT when desc or plan is NULL, for a bad description
 *          (struct_size, ndim, zero lengths or batch, in-place R2C/C2R, unknown kind, norm,
 *          engine or OCAL_FFT value) or a bad OCAL_FFT_FOURSTEP_TUNE; OCAL_OVERFLOW when the
 *          sizes overflow; OCAL_UNSUPPORTED when the engine asked for was not built in, when
 *          clFFT is asked for a length with a prime factor above 13, for the R2C/C2R odd
 *          lengths described at the top of this header, for a shape the four-step kernels
 *          do not take, or when f64 is asked for on a context without fp64;
 *          OCAL_OUT_OF_DEVICE_MEMORY when the plan's scratch memory (four-step kernels, a
 *          real plan through a C2C plan) does not fit the device or the context's memory
 *          limit; OCAL_BUILD_FAILED or OCAL_OPENCL_ERROR when the engine fails (the message
 *          says what it said). */
OCAL_API ocal_status ocal_fft_plan_create(ocal_context ctx, const ocal_fft_desc *desc,
                                          ocal_fft_plan *plan);

/** Queues one execution of a plan on the context's queue (does not block).
 * \param plan the plan.
 * \param direction OCAL_FFT_FORWARD or OCAL_FFT_INVERSE; R2C plans only go forward, C2R
 *        plans only inverse.
 * \param in the input: the type the plan wants (ocal_fft_plan_info) and exactly
 *        batch * prod(lengths) elements (the complex side of real transforms has the last
 *        length n / 2 + 1). The buffer's shape is not looked at, only its element count.
 *        A C2R execution leaves its input unchanged (ocal copies it first, as the engines
 *        overwrite it).
 * \param out the output, with the same rules; for an in-place plan out must be in (or a
 *        view of exactly the same elements); for an out-of-place plan it must not overlap in.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_TYPE_MISMATCH or OCAL_SHAPE_MISMATCH when a
 *          buffer does not fit the plan; OCAL_INVALID_ARGUMENT for a wrong direction, buffers
 *          of another context, overlapping or (in place) distinct buffers;
 *          OCAL_OUT_OF_DEVICE_MEMORY when the copy the plan stages (every C2R input, views the
 *          engine cannot take where they start) does not fit the device or the context's
 *          memory limit; an OpenCL error from the engine. */
OCAL_API ocal_status ocal_fft_execute(ocal_fft_plan plan, ocal_fft_direction direction,
                                      ocal_buffer in, ocal_buffer out);

/** Releases a reference to a plan. The plan's engine state stays in the context's cache
 * (for the next equal description) until the context goes.
 * \param plan the plan, or NULL (nothing happens).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE for a handle that is not a live plan. */
OCAL_API ocal_status ocal_fft_plan_release(ocal_fft_plan plan);

/** Copies the facts of a plan.
 * \param plan the plan.
 * \param info receives the facts (its strings are static); set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when info is NULL or
 *          info->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_fft_plan_get_info(ocal_fft_plan plan, ocal_fft_plan_info *info);

/** Reads the counters of a context's plan cache (all zero before the first plan).
 * \param ctx the context.
 * \param stats receives the counters; set its struct_size first.
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when stats is NULL or
 *          stats->struct_size is not one this library knows (nothing is written then). */
OCAL_API ocal_status ocal_fft_get_cache_stats(ocal_context ctx, ocal_fft_cache_stats *stats);

/** Says whether an engine was built into this copy of ocal.
 * \param engine an engine; OCAL_FFT_ENGINE_DEFAULT asks whether VkFFT or clFFT was
 *        (OCAL_FFT_ENGINE_FOURSTEP is always built in).
 * \param available receives 1 or 0.
 * \returns OCAL_OK, or OCAL_INVALID_ARGUMENT for an unknown engine or NULL. */
OCAL_API ocal_status ocal_fft_engine_available(ocal_fft_engine engine, int *available);

/** Names an engine: "default", "vkfft", "clfft", "fourstep".
 * \param engine any value.
 * \returns a static string; "invalid" for a value that is not an engine. */
OCAL_API const char *ocal_fft_engine_name(ocal_fft_engine engine);

/** Short name of a transform kind ("c2c", "r2c", "c2r").
 * \param kind any value.
 * \returns a static string; "invalid" for a value that is not an ocal_fft_kind. */
OCAL_API const char *ocal_fft_kind_name(ocal_fft_kind kind);

/** Short name of a direction ("forward", "inverse").
 * \param direction any value.
 * \returns a static string; "invalid" for a value that is not an ocal_fft_direction. */
OCAL_API const char *ocal_fft_direction_name(ocal_fft_direction direction);

/** Short name of a normalisation, as NumPy's norm= argument ("backward", "ortho",
 * "forward").
 * \param norm any value.
 * \returns a static string; "invalid" for a value that is not an ocal_fft_norm. */
OCAL_API const char *ocal_fft_norm_name(ocal_fft_norm norm);

/** The engine a plan with engine OCAL_FFT_ENGINE_DEFAULT gets now (OCAL_FFT, else VkFFT where
 * built, else clFFT; the default engine may still hand single shapes to the four-step
 * kernels, see ocal_fft_plan_info).
 * \param engine receives the engine.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when OCAL_FFT names no engine; OCAL_UNSUPPORTED
 *          when the engine it names (or any) was not built in. */
OCAL_API ocal_status ocal_fft_get_default_engine(ocal_fft_engine *engine);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_FFT_H */
