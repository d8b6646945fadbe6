/* ocal — the table of functions behind which each FFT engine lives (never installed).
 *
 * plan.c owns the public API: it validates descriptions and buffers, caches plans per
 * context, copies C2R inputs, applies the scaling an engine does not, and calls an engine
 * only through this table. An engine file (vkfft.c, clfft.c) keeps its functions static and
 * exports one const table; a third engine plugs in by adding a file and a line in plan.c. */
#ifndef OCAL_FFT_ENGINE_H
#define OCAL_FFT_ENGINE_H

#include "internal.h"
#include "ocal/fft.h"

/* A validated, resolved description, as an engine sees it. */
typedef struct ocal__fft_problem {
  ocal_context ctx;
  int ndim;
  size_t lengths[3];   /* row-major: lengths[ndim - 1] is contiguous; real lengths for R2C/C2R */
  size_t batch;
  ocal_fft_kind kind;
  int dbl;             /* 1: double precision */
  int in_place;
  double scale[2];     /* wanted scale of the forward [0] and inverse [1] transform */
  const char *text;    /* canonical one-line description, for disk cache keys and messages */
} ocal__fft_problem;

/* What an engine's plan_create hands back. */
typedef struct ocal__fft_built {
  void *state;         /* the engine's plan, passed to execute and plan_destroy */
  double applied[2];   /* the scale the engine applies itself to forward [0] / inverse [1]
                          (1.0 when it does not scale); plan.c makes up the difference */
  int from_disk_cache; /* compiled kernels were loaded from ocal's disk cache */
  int stored_to_disk;  /* compiled kernels were written to ocal's disk cache */
} ocal__fft_built;

typedef struct ocal__fft_engine {
  const char *name;
  /* 1: execute takes byte offsets into the cl_mems; 0: offsets must be 0 (plan.c then passes
   * sub-buffers for views, or staged copies where none can start there); 2: as 1, but the
   * real side of an R2C or C2R plan only at an even number of reals (VkFFT's real plans of
   * several kernels address it as complex pairs), other real offsets as 0. */
  int takes_offsets;
  /* Creates the engine's plan for problem p (which stays valid while the plan lives). The
   * message of a failure names ocal_fft_plan_create, then the engine and what went wrong.
   * Called without locks held; an engine that is not thread-safe while planning serialises
   * itself. */
  ocal_status (*plan_create)(const ocal__fft_problem *p, ocal__fft_built *out);
  /* Queues one transform on the context's queue. For C2C in place, in == out. Callers hold
   * the plan's lock, so one engine plan never runs two executes at once. A failure names
   * `func`, the public call being served: ocal_fft_execute, or ocal_fft_plan_create for the
   * trial runs of plan creation. */
  ocal_status (*execute)(void *state, int direction, cl_mem in, size_t in_offset_bytes,
                         cl_mem out, size_t out_offset_bytes, const char *func);
  void (*plan_destroy)(void *state);
} ocal__fft_engine;

#ifdef OCAL_HAVE_VKFFT
extern const ocal__fft_engine ocal__fft_vkfft;
/* Writes the tuning fields of the VkFFT configuration p's plan gets (ocal's rule, then
 * OCAL_VKFFT_TUNE), as the kernels' cache key names them, into out: part of the key of a
 * measured choice (choose.c). */
void ocal__vkfft_tune_key(const ocal__fft_problem *p, char *out, size_t size);
#endif
#ifdef OCAL_HAVE_CLFFT
extern const ocal__fft_engine ocal__fft_clfft;
#endif

/* ocal's own two-pass four-step FFT (fourstep.c): long 1-D f32 C2C power-of-two lengths,
 * used in place of the default engine where ocal__fft_fourstep_wanted says so. */
extern const ocal__fft_engine ocal__fft_fourstep;
/* For a plan of canonical description d which asked for the default engine, sets *use to 1
 * when it should run on ocal__fft_fourstep, 2 when a measurement should decide between that
 * and VkFFT (ocal__fft_choose), else 0: OCAL_FFT_FOURSTEP=0|1|measure, else (auto) the device
 * rule, then a measurement. Fails only on a bad OCAL_FFT_FOURSTEP_TUNE. */
ocal_status ocal__fft_fourstep_wanted(ocal_context ctx, const ocal_fft_desc *d, int *use);

/* Builds the plan of problem p on whichever of the four-step kernels and VkFFT runs it faster
 * on the device (choose.c): the answer from the disk cache, else both built and timed on
 * scratch buffers of the plan's size, the faster kept. *engine and *id name the engine kept,
 * *built holds its plan. Where the four-step kernels fail to build, their status comes back
 * (with *engine the four-step engine), so that plan.c hands the plan on. */
ocal_status ocal__fft_choose(const ocal__fft_problem *p, const ocal__fft_engine **engine,
                             ocal_fft_engine *id, ocal__fft_built *built);
/* The disk cache's answer for problem p: 1 the four-step kernels, 0 VkFFT, -1 none (or a
 * record that is not exactly what ocal__fft_choice_store writes). */
int ocal__fft_choice_load(const ocal__fft_problem *p);
void ocal__fft_choice_store(const ocal__fft_problem *p, int fourstep);

/* Transforms whose every length is 1 (unit.c): ocal's own copy, widening or real parts. */
extern const ocal__fft_engine ocal__fft_unit;

/* The engine that runs an R2C or C2R problem through a C2C plan of engine `inner` on a
 * complex scratch buffer (viac2c.c), or NULL when `inner` was not built in. For the default
 * engine, where no engine takes the real plan itself. */
const ocal__fft_engine *ocal__fft_via_c2c(ocal_fft_engine inner);

/* Product of a problem's transform lengths (N of the normalisation). */
size_t ocal__fft_problem_n(const ocal__fft_problem *p);

#endif /* OCAL_FFT_ENGINE_H */
