/* ocal — FFT plans: the public API over the engines of engine.h.
 *
 * This file validates descriptions and buffers, keeps each context's plans in a cache (an
 * attachment of the context, with its own lock), and does what is common to all engines:
 * it copies C2R inputs (the engines overwrite them) and makes the copies' DC and Nyquist
 * columns Hermitian (NumPy reads only that part), passes sub-buffers to engines that take
 * no offsets, and applies the part of the normalisation an engine does not. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

#define PLAN_MAGIC 0x6f666674u /* "offt" */

struct ocal_fft_plan_s {
  uint32_t magic;
  struct ocal_fft_plan_s *next; /* the context's cache list */
  atomic_int users;             /* references the user holds */
  int ready;                    /* 0 while an engine builds it (others wait), then 1 */
  ocal_fft_desc desc;           /* canonical: engine resolved, unused lengths 0 */
  ocal__fft_problem problem;
  char text[256];               /* problem.text points here */
  const ocal__fft_engine *engine; /* the engine that built it */
  const ocal__fft_engine *asked;  /* the engine the cache lookup wanted (see fallback below) */
  int named;                      /* the description or OCAL_FFT named the engine: no fallback */
  ocal_fft_engine engine_id;      /* the public name of `engine` */
  ocal__fft_built built;
  double create_seconds;
  ocal_dtype in_dtype, out_dtype;
  size_t in_numel, out_numel;
  pthread_mutex_t lock;         /* serialises executions and guards scratch */
  cl_mem scratch[2];            /* staging copies of the input [0] and output [1] */
  size_t scratch_bytes[2];
};

typedef struct fft_cache {
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a plan finished building (or failed) */
  struct ocal_fft_plan_s *plans;
  ocal_fft_cache_stats stats;
} fft_cache;

static const int cache_key; /* its address names the context attachment */

/* ---- engines -------------------------------------------------------------------------- */

static const char *const engine_names[OCAL_FFT_ENGINE_COUNT] = {"default", "vkfft", "clfft",
                                                                 "fourstep"};

static const ocal__fft_engine *engine_table(ocal_fft_engine e) {
  switch (e) {
#ifdef OCAL_HAVE_VKFFT
    case OCAL_FFT_ENGINE_VKFFT:
      return &ocal__fft_vkfft;
#endif
#ifdef OCAL_HAVE_CLFFT
    case OCAL_FFT_ENGINE_CLFFT:
      return &ocal__fft_clfft;
#endif
    case OCAL_FFT_ENGINE_FOURSTEP:
      return &ocal__fft_fourstep;
    default:
      return NULL;
  }
}

const char *ocal_fft_engine_name(ocal_fft_engine engine) {
  return (unsigned)engine < OCAL_FFT_ENGINE_COUNT ? engine_names[engine] : "invalid";
}

ocal_status ocal_fft_engine_available(ocal_fft_engine engine, int *available) {
  if (!available) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "available must not be NULL");
  if ((unsigned)engine >= OCAL_FFT_ENGINE_COUNT)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "unknown FFT engine %d", (int)engine);
  if (engine == OCAL_FFT_ENGINE_DEFAULT)
    *available = engine_table(OCAL_FFT_ENGINE_VKFFT) || engine_table(OCAL_FFT_ENGINE_CLFFT);
  else
    *available = engine_table(engine) != NULL;
  return OCAL_OK;
}

/* env: OCAL_FFT as the settings module read it (OCAL__FFT_ENV_*). */
static ocal_status resolve_engine(const char *func, int env, ocal_fft_engine asked,
                                  ocal_fft_engine *out) {
  const char *why = "asked for by the plan description";
  if (asked == OCAL_FFT_ENGINE_DEFAULT) {
    if (env != OCAL__FFT_ENV_DEFAULT) {
      why = "named by OCAL_FFT";
      asked = env == OCAL__FFT_ENV_VKFFT ? OCAL_FFT_ENGINE_VKFFT : OCAL_FFT_ENGINE_CLFFT;
    } else if (engine_table(OCAL_FFT_ENGINE_VKFFT)) {
      asked = OCAL_FFT_ENGINE_VKFFT;
    } else if (engine_table(OCAL_FFT_ENGINE_CLFFT)) {
      asked = OCAL_FFT_ENGINE_CLFFT;
    } else {
      return ocal__fail(OCAL_UNSUPPORTED, func,
                        "this ocal was built without an FFT engine (neither VkFFT nor clFFT "
                        "was found by configure)");
    }
  }
  if ((unsigned)asked >= OCAL_FFT_ENGINE_COUNT)
    return ocal__fail(OCAL_INVALID_ARGUMENT, func, "unknown FFT engine %d", (int)asked);
  if (!engine_table(asked))
    return ocal__fail(OCAL_UNSUPPORTED, func,
                      "the FFT engine '%s' (%s) was not built into this ocal: configure did "
                      "not find it",
                      engine_names[asked], why);
  *out = asked;
  return OCAL_OK;
}

ocal_status ocal_fft_get_default_engine(ocal_fft_engine *engine) {
  if (!engine) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "engine must not be NULL");
  ocal__settings settings;
  ocal_status s = ocal__settings_read_one("OCAL_FFT", &settings, __func__);
  if (s != OCAL_OK) return s;
  return resolve_engine(__func__, settings.fft, OCAL_FFT_ENGINE_DEFAULT, engine);
}

/* ---- descriptions --------------------------------------------------------------------- */

ocal_status ocal_fft_desc_init(ocal_fft_desc *desc) {
  if (!desc) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "desc must not be NULL");
  memset(desc, 0, sizeof *desc);
  desc->struct_size = sizeof *desc;
  desc->ndim = 1;
  desc->batch = 1;
  desc->kind = OCAL_FFT_C2C;
  desc->precision = OCAL_F32;
  desc->in_place = 0;
  desc->norm = OCAL_FFT_NORM_BACKWARD;
  desc->engine = OCAL_FFT_ENGINE_DEFAULT;
  return OCAL_OK;
}

size_t ocal__fft_problem_n(const ocal__fft_problem *p) {
  size_t n = 1;
  for (int i = 0; i < p->ndim; i++) n *= p->lengths[i]; /* checked at plan creation */
  return n;
}

/* Checks a description and brings it to the canonical form that the cache compares. */
static ocal_status canonical(ocal_context ctx, const ocal_fft_desc *in, ocal_fft_desc *d,
                             size_t *in_numel, size_t *out_numel) {
  const char *f = "ocal_fft_plan_create";
  *d = *in;
  if (d->ndim < 1 || d->ndim > 3)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f, "ndim is %d; FFTs have 1 to 3 dimensions",
                      d->ndim);
  for (int i = 0; i < 3; i++) {
    if (i >= d->ndim) {
      d->lengths[i] = 0;
    } else if (d->lengths[i] == 0) {
      return ocal__fail(OCAL_INVALID_ARGUMENT, f, "lengths[%d] is 0; every length must be >= 1",
                        i);
    }
  }
  if (d->batch == 0) return ocal__fail(OCAL_INVALID_ARGUMENT, f, "batch is 0; it must be >= 1");
  if (d->kind != OCAL_FFT_C2C && d->kind != OCAL_FFT_R2C && d->kind != OCAL_FFT_C2R)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f, "unknown FFT kind %d", (int)d->kind);
  if (d->precision == OCAL_C32) d->precision = OCAL_F32;
  if (d->precision == OCAL_C64) d->precision = OCAL_F64;
  if (d->precision != OCAL_F32 && d->precision != OCAL_F64)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f,
                      "precision is %s; FFTs are computed in f32 or f64",
                      ocal_dtype_name(d->precision));
  if (d->precision == OCAL_F64 && !ocal__context_fp64(ctx))
    return ocal__fail(
        OCAL_UNSUPPORTED, f, "a double-precision FFT needs fp64, which device '%s' %s",
        ocal__context_info(ctx)->name,
        ocal__context_info(ctx)->has_fp64 ? "has but the context turned off" : "does not have");
  if (d->in_place != 0 && d->in_place != 1)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f,
                      "in_place is %d; use 1 (out == in) or 0 (out of place)", d->in_place);
  if (d->in_place && d->kind != OCAL_FFT_C2C)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f,
                      "in-place transforms are C2C only: an %s transform changes the element "
                      "type, so it needs distinct input and output buffers",
                      d->kind == OCAL_FFT_R2C ? "R2C" : "C2R");
  if (d->norm != OCAL_FFT_NORM_BACKWARD && d->norm != OCAL_FFT_NORM_ORTHO &&
      d->norm != OCAL_FFT_NORM_FORWARD)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f, "unknown normalisation %d", (int)d->norm);
  ocal_status s = resolve_engine(f, ctx->settings.fft, d->engine, &d->engine);
  if (s != OCAL_OK) return s;

  /* Element counts of the real and complex sides, overflow-checked, and their byte sizes. */
  size_t real = d->batch, cplx = d->batch;
  for (int i = 0; i < d->ndim; i++) {
    size_t c = d->lengths[i];
    if (i == d->ndim - 1 && d->kind != OCAL_FFT_C2C) c = c / 2 + 1;
    if (ocal__mul_overflows(real, d->lengths[i], &real) || ocal__mul_overflows(cplx, c, &cplx))
      return ocal__fail(OCAL_OVERFLOW, f, "the transform's element count overflows size_t");
  }
  size_t bytes;
  if (ocal__mul_overflows(real, 16, &bytes))
    return ocal__fail(OCAL_OVERFLOW, f, "the transform's byte size overflows size_t");
  switch (d->kind) {
    case OCAL_FFT_C2C:
      *in_numel = *out_numel = real;
      break;
    case OCAL_FFT_R2C:
      *in_numel = real;
      *out_numel = cplx;
      break;
    case OCAL_FFT_C2R:
      *in_numel = cplx;
      *out_numel = real;
      break;
  }
  /* An axis of length 1 transforms nothing and moves no element: it is dropped, so that the
   * engines never see one (VkFFT has no radix for 1). The last axis of a real transform is
   * kept: it is the one that is halved. */
  int kept = 0;
  for (int i = 0; i < d->ndim; i++)
    if (d->lengths[i] != 1 || (i == d->ndim - 1 && d->kind != OCAL_FFT_C2C))
      d->lengths[kept++] = d->lengths[i];
  if (kept == 0) d->lengths[kept++] = 1;
  for (int i = kept; i < 3; i++) d->lengths[i] = 0;
  d->ndim = kept;
  return OCAL_OK;
}

static int desc_equal(const ocal_fft_desc *a, const ocal_fft_desc *b) {
  return a->ndim == b->ndim && a->lengths[0] == b->lengths[0] && a->lengths[1] == b->lengths[1] &&
         a->lengths[2] == b->lengths[2] && a->batch == b->batch && a->kind == b->kind &&
         a->precision == b->precision && a->in_place == b->in_place && a->norm == b->norm &&
         a->engine == b->engine;
}

/* ---- the per-context cache ------------------------------------------------------------ */

static void plan_free(struct ocal_fft_plan_s *p) {
  if (p->built.state) p->engine->plan_destroy(p->built.state);
  for (int i = 0; i < 2; i++)
    if (p->scratch[i]) ocal__device_free(p->problem.ctx, p->scratch[i]);
  pthread_mutex_destroy(&p->lock);
  p->magic = 0;
  free(p);
}

static ocal_status cache_create(ocal_context ctx, void **data) {
  (void)ctx;
  fft_cache *c = calloc(1, sizeof *c);
  if (!c) return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal", "no memory for the FFT plan cache");
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return ocal__fail(OCAL_INTERNAL, "ocal", "pthread_mutex_init failed");
  }
  if (pthread_cond_init(&c->changed, NULL) != 0) {
    pthread_mutex_destroy(&c->lock);
    free(c);
    return ocal__fail(OCAL_INTERNAL, "ocal", "pthread_cond_init failed");
  }
  *data = c;
  return OCAL_OK;
}

/* Runs at context release, after the queue has finished: no plan handle is left then, since
 * each one holds a reference to the context. */
static void cache_destroy(void *data) {
  fft_cache *c = data;
  while (c->plans) {
    struct ocal_fft_plan_s *p = c->plans;
    c->plans = p->next;
    plan_free(p);
  }
  pthread_cond_destroy(&c->changed);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Fills in a new plan's problem from its canonical description. */
static void plan_setup(struct ocal_fft_plan_s *p, ocal_context ctx) {
  const ocal_fft_desc *d = &p->desc;
  ocal__fft_problem *q = &p->problem;
  q->ctx = ctx;
  q->ndim = d->ndim;
  memcpy(q->lengths, d->lengths, sizeof q->lengths);
  q->batch = d->batch;
  q->kind = d->kind;
  q->dbl = d->precision == OCAL_F64;
  q->in_place = d->in_place;
  double n = (double)ocal__fft_problem_n(q);
  q->scale[0] = d->norm == OCAL_FFT_NORM_FORWARD ? 1.0 / n
                : d->norm == OCAL_FFT_NORM_ORTHO ? 1.0 / sqrt(n)
                                                 : 1.0;
  q->scale[1] = d->norm == OCAL_FFT_NORM_BACKWARD ? 1.0 / n
                : d->norm == OCAL_FFT_NORM_ORTHO  ? 1.0 / sqrt(n)
                                                  : 1.0;
  snprintf(p->text, sizeof p->text, "%s %s %zu", ocal_fft_kind_name(d->kind),
           ocal_dtype_name(d->precision), d->lengths[0]);
  for (int i = 1; i < d->ndim; i++)
    snprintf(p->text + strlen(p->text), sizeof p->text - strlen(p->text), "x%zu", d->lengths[i]);
  snprintf(p->text + strlen(p->text), sizeof p->text - strlen(p->text),
           " batch %zu %s norm=%s", d->batch, d->in_place ? "in-place" : "out-of-place",
           ocal_fft_norm_name(d->norm));
  q->text = p->text;
  ocal_dtype r = d->precision, c = r == OCAL_F64 ? OCAL_C64 : OCAL_C32;
  p->in_dtype = d->kind == OCAL_FFT_R2C ? r : c;
  p->out_dtype = d->kind == OCAL_FFT_C2R ? r : c;
}

/* The last error of an engine's attempt, for quoting inside ocal_fft_plan_create's own
 * message: without its leading call name, which that message gives once, at its start. */
static const char *quoted_error(void) {
  static const char call[] = "ocal_fft_plan_create: ";
  const char *e = ocal_last_error();
  return strncmp(e, call, sizeof call - 1) == 0 ? e + sizeof call - 1 : e;
}

ocal_status ocal_fft_plan_create(ocal_context ctx, const ocal_fft_desc *desc,
                                 ocal_fft_plan *plan) {
  if (!plan) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "plan (the out-parameter) must not be NULL");
  *plan = NULL;
  ocal_status s = ocal__check_context(ctx, __func__);
  if (s != OCAL_OK) return s;
  if (!desc) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "desc must not be NULL");
  /* Only the caller's struct_size bytes are read (0.2's struct ends with `engine`); the
   * fields a shorter struct lacks keep their defaults. */
  ocal_fft_desc given;
  ocal_fft_desc_init(&given);
  if ((s = ocal__options_copy(__func__, "ocal_fft_desc_init", &given, sizeof given, desc,
                              offsetof(ocal_fft_desc, engine) + sizeof given.engine)) != OCAL_OK)
    return s;
  desc = &given;
  ocal_fft_desc d;
  size_t in_numel = 0, out_numel = 0;
  if ((s = canonical(ctx, desc, &d, &in_numel, &out_numel)) != OCAL_OK) return s;
  fft_cache *c;
  if ((s = ocal__context_attachment(ctx, &cache_key, cache_create, cache_destroy, (void **)&c,
                                    __func__)) != OCAL_OK)
    return s;

  /* The default engine hands the shapes where ocal's own four-step kernels are faster to
   * them (not when the description or OCAL_FFT names an engine). */
  const ocal__fft_engine *eng = engine_table(d.engine);
  int measure = 0; /* a measurement decides between the four-step kernels and VkFFT */
  if (desc->engine == OCAL_FFT_ENGINE_DEFAULT && ctx->settings.fft == OCAL__FFT_ENV_DEFAULT) {
    int use;
    if ((s = ocal__fft_fourstep_wanted(ctx, &d, &use)) != OCAL_OK) return s;
    if (use) eng = &ocal__fft_fourstep;
    measure = use == 2;
  }
  /* Length 1 everywhere: ocal's copy. A real transform whose halved axis has length 1 halves
   * nothing: it is a C2C transform of the other axes, which the engine's plans through a C2C
   * plan do (viac2c.c). */
  size_t n = 1;
  for (int i = 0; i < d.ndim; i++) n *= d.lengths[i];
  if (n == 1) {
    eng = &ocal__fft_unit;
  } else if (d.kind != OCAL_FFT_C2C && d.lengths[d.ndim - 1] == 1 && ocal__fft_via_c2c(d.engine)) {
    eng = ocal__fft_via_c2c(d.engine);
  }
  measure = measure && eng == &ocal__fft_fourstep;
  /* The plan's info names the engine that runs it, the four-step kernels included. */
  ocal_fft_engine eng_id = eng == &ocal__fft_fourstep ? OCAL_FFT_ENGINE_FOURSTEP : d.engine;

  /* A plan that names its engine refuses what a default plan hands on: never the same plan. */
  int named = desc->engine != OCAL_FFT_ENGINE_DEFAULT || ctx->settings.fft != OCAL__FFT_ENV_DEFAULT;
  pthread_mutex_lock(&c->lock);
  struct ocal_fft_plan_s *p;
  for (;;) {
    for (p = c->plans;
         p && !(desc_equal(&p->desc, &d) && p->asked == eng && p->named == named);
         p = p->next) {
    }
    if (!p || p->ready) break;
    /* Another thread is building this very plan: wait for it rather than build it twice. */
    pthread_cond_wait(&c->changed, &c->lock);
  }
  if (p) {
    c->stats.memory_hits++;
    atomic_fetch_add(&p->users, 1);
    ocal__context_retain(ctx);
    pthread_mutex_unlock(&c->lock);
    *plan = p;
    return OCAL_OK;
  }
  p = calloc(1, sizeof *p);
  if (!p || pthread_mutex_init(&p->lock, NULL) != 0) {
    pthread_mutex_unlock(&c->lock);
    free(p);
    return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for an FFT plan");
  }
  p->magic = PLAN_MAGIC;
  p->desc = d;
  p->in_numel = in_numel;
  p->out_numel = out_numel;
  p->engine = p->asked = eng;
  p->named = named;
  p->engine_id = eng_id;
  plan_setup(p, ctx);
  p->next = c->plans;
  c->plans = p;
  pthread_mutex_unlock(&c->lock);

  /* Build without the cache lock: an engine may take seconds to compile its kernels, and
   * other plans of the context stay usable meanwhile. */
  double t0 = ocal__seconds_now();
  if (measure) {
    const ocal__fft_engine *chosen;
    ocal_fft_engine chosen_id;
    s = ocal__fft_choose(&p->problem, &chosen, &chosen_id, &p->built);
    pthread_mutex_lock(&c->lock);
    p->engine = chosen;
    p->engine_id = chosen_id;
    pthread_mutex_unlock(&c->lock);
  } else {
    s = p->engine->plan_create(&p->problem, &p->built);
  }
  /* The default engine: where the one picked cannot build the plan on this device (its
   * kernels do not compile there, or it refuses the shape), the next one takes it, and the
   * plan's info names the one that runs. VkFFT's plans through a C2C plan (viac2c.c: VkFFT
   * on CPU devices refuses the real transforms of long odd lengths, not their C2C ones) come
   * before clFFT, which is left last: its bake can end the process when the driver fails
   * under it. A plan that names its engine fails instead. */
  if (s != OCAL_OK && (s == OCAL_BUILD_FAILED || s == OCAL_UNSUPPORTED) &&
      desc->engine == OCAL_FFT_ENGINE_DEFAULT && ctx->settings.fft == OCAL__FFT_ENV_DEFAULT) {
    char first[1024];
    snprintf(first, sizeof first, "%s", quoted_error());
    ocal_status first_status = s;
    const ocal__fft_engine *tried = p->engine;
    static const ocal_fft_engine order[] = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_ENGINE_CLFFT};
    for (size_t i = 0; i < 2 * (sizeof order / sizeof order[0]) && s != OCAL_OK; i++) {
      /* Each engine, then (a real transform only) its plan through a C2C plan, whose info
       * names it "vkfft (via c2c)". */
      int via = i % 2;
      const ocal__fft_engine *next =
          via ? ocal__fft_via_c2c(order[i / 2]) : engine_table(order[i / 2]);
      if (!next || next == tried || (via && p->desc.kind == OCAL_FFT_C2C)) continue;
      /* p->asked and p->desc stay what the caller asked for: the cache finds this plan
       * again by them. */
      pthread_mutex_lock(&c->lock);
      p->engine = next;
      p->engine_id = order[i / 2];
      pthread_mutex_unlock(&c->lock);
      memset(&p->built, 0, sizeof p->built);
      s = next->plan_create(&p->problem, &p->built);
    }
    if (s != OCAL_OK) {
      char last[1024];
      snprintf(last, sizeof last, "%s", quoted_error());
      s = OCAL_FAIL(first_status, "%s (no other FFT engine could take the plan either; the "
                    "last said: %s)", first, last);
    }
  }
  p->create_seconds = ocal__seconds_now() - t0;

  pthread_mutex_lock(&c->lock);
  if (s == OCAL_OK) {
    p->ready = 1;
    atomic_store(&p->users, 1);
    ocal__context_retain(ctx);
    c->stats.plans_built++;
    c->stats.disk_hits += p->built.from_disk_cache != 0;
    c->stats.disk_stores += p->built.stored_to_disk != 0;
    *plan = p;
  } else {
    struct ocal_fft_plan_s **link = &c->plans;
    while (*link != p) link = &(*link)->next;
    *link = p->next;
    p->built.state = NULL;
    plan_free(p);
  }
  pthread_cond_broadcast(&c->changed);
  pthread_mutex_unlock(&c->lock);
  return s;
}

static ocal_status check_plan(ocal_fft_plan plan, const char *func) {
  if (!plan) return ocal__fail(OCAL_INVALID_HANDLE, func, "the plan is NULL");
  if (plan->magic != PLAN_MAGIC || !plan->ready)
    return ocal__fail(OCAL_INVALID_HANDLE, func, "the plan handle is not a live ocal FFT plan");
  if (atomic_load(&plan->users) < 1)
    return ocal__fail(OCAL_INVALID_HANDLE, func, "the plan has been released already");
  return OCAL_OK;
}

ocal_status ocal_fft_plan_release(ocal_fft_plan plan) {
  if (!plan) return OCAL_OK;
  ocal_status s = check_plan(plan, __func__);
  if (s != OCAL_OK) return s;
  ocal_context ctx = plan->problem.ctx;
  /* The engine plan stays cached; the context, which owns the cache, may go now. */
  if (atomic_fetch_sub(&plan->users, 1) < 1) {
    atomic_fetch_add(&plan->users, 1);
    return OCAL_FAIL(OCAL_INVALID_HANDLE, "the plan has been released already");
  }
  ocal__context_unref(ctx);
  return OCAL_OK;
}

ocal_status ocal_fft_plan_get_info(ocal_fft_plan plan, ocal_fft_plan_info *info) {
  ocal_status s = check_plan(plan, __func__);
  if (s != OCAL_OK) return s;
  if (!info) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "info must not be NULL");
  /* The first ocal_fft_plan_info with struct_size ends with create_seconds. */
  s = ocal__filled_check(__func__, "info", "ocal_fft_plan_info", info,
                         OCAL__SIZE_THROUGH(ocal_fft_plan_info, create_seconds), sizeof *info);
  if (s != OCAL_OK) return s;
  ocal_fft_plan_info all = {sizeof all};
  all.engine = plan->engine_id;
  all.engine_name = plan->engine->name;
  all.in_dtype = plan->in_dtype;
  all.out_dtype = plan->out_dtype;
  all.in_numel = plan->in_numel;
  all.out_numel = plan->out_numel;
  all.from_disk_cache = plan->built.from_disk_cache;
  all.create_seconds = plan->create_seconds;
  ocal__filled_write(info, &all);
  return OCAL_OK;
}

ocal_status ocal_fft_get_cache_stats(ocal_context ctx, ocal_fft_cache_stats *stats) {
  ocal_status s = ocal__check_context(ctx, __func__);
  if (s != OCAL_OK) return s;
  if (!stats) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "stats must not be NULL");
  /* The first ocal_fft_cache_stats with struct_size ends with disk_stores. */
  s = ocal__filled_check(__func__, "stats", "ocal_fft_cache_stats", stats,
                         OCAL__SIZE_THROUGH(ocal_fft_cache_stats, disk_stores), sizeof *stats);
  if (s != OCAL_OK) return s;
  fft_cache *c;
  if ((s = ocal__context_attachment(ctx, &cache_key, cache_create, cache_destroy, (void **)&c,
                                    __func__)) != OCAL_OK)
    return s;
  pthread_mutex_lock(&c->lock);
  ocal__filled_write(stats, &c->stats);
  pthread_mutex_unlock(&c->lock);
  return OCAL_OK;
}

/* ---- execution ------------------------------------------------------------------------ */

/* Scales the output by `factor` (NumPy's norm= where the engine does not do it) with
 * cl/fft_scale.cl. */
static ocal_status scale(ocal_fft_plan p, ocal_buffer out, double factor) {
  ocal_context ctx = p->problem.ctx;
  ocal_dtype real = p->desc.precision;
  char options[128];
  ocal__dtype_options(real, options, sizeof options);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(ctx, "fft_scale", options, "ocal_fft_scale", &k, NULL,
                                            "ocal_fft_execute");
  if (s != OCAL_OK) return s;
  int cplx = out->dtype == OCAL_C32 || out->dtype == OCAL_C64;
  cl_ulong offset = (cl_ulong)out->offset * (cplx ? 2 : 1);
  cl_ulong n = (cl_ulong)out->numel * (cplx ? 2 : 1);
  float f32 = (float)factor;
  ocal__arg args[4] = {OCAL__ARG(out->mem), OCAL__ARG(offset), OCAL__ARG(n),
                       real == OCAL_F64 ? OCAL__ARG(factor) : OCAL__ARG(f32)};
  return ocal__kernel_run(ctx, k, (size_t)n, 4, args, "ocal_fft_execute");
}

/* C2R: the staged input's DC and Nyquist bin columns made Hermitian over the other axes
 * (cl/fft_scale.cl), so that every engine reads what NumPy's irfftn reads. */
static ocal_status c2r_hermitian(ocal_fft_plan p, cl_mem staged) {
  ocal_context ctx = p->problem.ctx;
  char options[128];
  ocal__dtype_options(p->desc.precision, options, sizeof options);
  ocal__kernel *k;
  ocal_status s = ocal__library_kernel_from(ctx, "fft_scale", options, "ocal_fft_c2r_hermitian",
                                            &k, NULL, "ocal_fft_execute");
  if (s != OCAL_OK) return s;
  const int nd = p->desc.ndim;
  const size_t n = p->desc.lengths[nd - 1];
  cl_ulong n0 = nd == 3 ? p->desc.lengths[0] : 1, n1 = nd >= 2 ? p->desc.lengths[nd - 2] : 1;
  cl_ulong h = n / 2 + 1, ncol = n % 2 == 0 && n >= 2 ? 2 : 1;
  cl_ulong count = (cl_ulong)p->desc.batch * n0 * n1 * ncol;
  ocal__arg args[6] = {OCAL__ARG(staged), OCAL__ARG(n0),   OCAL__ARG(n1),
                       OCAL__ARG(h),      OCAL__ARG(ncol), OCAL__ARG(count)};
  return ocal__kernel_run(ctx, k, (size_t)count, 6, args, "ocal_fft_execute");
}

/* A staging buffer of the plan (created on first use, kept). Caller holds p->lock. */
static ocal_status scratch(ocal_fft_plan p, int which, size_t bytes, cl_mem *mem) {
  if (p->scratch[which] && p->scratch_bytes[which] < bytes) {
    ocal__device_free(p->problem.ctx, p->scratch[which]);
    p->scratch[which] = NULL;
  }
  if (!p->scratch[which]) {
    ocal_status s = ocal__device_alloc(p->problem.ctx, bytes, &p->scratch[which],
                                       "ocal_fft_execute");
    if (s != OCAL_OK) return s;
    p->scratch_bytes[which] = bytes;
  }
  *mem = p->scratch[which];
  return OCAL_OK;
}

/* A sub-buffer for a view, for engines that take no offsets. NULL *sub when none is needed.
 * Returns OCAL_UNSUPPORTED (without a message) when the offset is not aligned enough. */
static ocal_status sub_buffer(ocal_context ctx, cl_mem mem, size_t offset, size_t bytes,
                              cl_mem *sub) {
  *sub = NULL;
  if (offset == 0) return OCAL_OK;
  size_t align = ocal__context_info(ctx)->mem_base_align_bytes;
  if (align == 0) align = 128;
  if (offset % align != 0) return OCAL_UNSUPPORTED;
  cl_buffer_region region = {offset, bytes};
  cl_int err;
  *sub = clCreateSubBuffer(mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (err != CL_SUCCESS) {
    *sub = NULL;
    return ocal__cl_fail(ocal__context_info(ctx)->name, err, "clCreateSubBuffer",
                         "ocal_fft_execute");
  }
  return OCAL_OK;
}

/* Whether the plan's engine takes a view at byte offset `off` as it is (engine.h's
 * takes_offsets); `real` says the view is the real side of an R2C or C2R plan. */
static int offset_taken(ocal_fft_plan p, size_t off, size_t elem, int real) {
  int t = p->engine->takes_offsets;
  return off == 0 || t == 1 || (t == 2 && (!real || off % (2 * elem) == 0));
}

static ocal_status check_operand(ocal_fft_plan p, ocal_buffer b, const char *what,
                                 ocal_dtype want, size_t numel) {
  const char *f = "ocal_fft_execute";
  ocal_status s = ocal__check_buffer(b, f);
  if (s != OCAL_OK) return s;
  if (b->ctx != p->problem.ctx)
    return ocal__fail(OCAL_INVALID_ARGUMENT, f,
                      "the %s buffer belongs to another context than the plan", what);
  if (b->dtype != want)
    return ocal__fail(OCAL_TYPE_MISMATCH, f, "the %s buffer is %s; the plan (%s) wants %s", what,
                      ocal_dtype_name(b->dtype), p->text, ocal_dtype_name(want));
  if (b->numel != numel)
    return ocal__fail(OCAL_SHAPE_MISMATCH, f,
                      "the %s buffer has %zu elements; the plan (%s) wants %zu", what, b->numel,
                      p->text, numel);
  return OCAL_OK;
}

ocal_status ocal_fft_execute(ocal_fft_plan p, ocal_fft_direction direction, ocal_buffer in,
                             ocal_buffer out) {
  ocal_status s = check_plan(p, __func__);
  if (s != OCAL_OK) return s;
  if (direction != OCAL_FFT_FORWARD && direction != OCAL_FFT_INVERSE)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "direction is %d; use OCAL_FFT_FORWARD (-1) or "
                     "OCAL_FFT_INVERSE (1)", (int)direction);
  if (p->desc.kind == OCAL_FFT_R2C && direction != OCAL_FFT_FORWARD)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "an R2C plan only goes forward; create a C2R plan "
                     "for the inverse");
  if (p->desc.kind == OCAL_FFT_C2R && direction != OCAL_FFT_INVERSE)
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "a C2R plan only goes inverse; create an R2C plan "
                     "for the forward transform");
  if ((s = check_operand(p, in, "input", p->in_dtype, p->in_numel)) != OCAL_OK) return s;
  if ((s = check_operand(p, out, "output", p->out_dtype, p->out_numel)) != OCAL_OK) return s;

  ocal_context ctx = p->problem.ctx;
  size_t in_size = ocal_dtype_size(in->dtype), out_size = ocal_dtype_size(out->dtype);
  size_t in_off = in->offset * in_size, in_bytes = in->numel * in_size;
  size_t out_off = out->offset * out_size, out_bytes = out->numel * out_size;
  int same_mem = in->mem == out->mem;
  if (p->desc.in_place) {
    if (!same_mem || in_off != out_off)
      return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                       "the plan (%s) is in place: out must be in (or a view of the same "
                       "elements)", p->text);
  } else if (same_mem && in_off < out_off + out_bytes && out_off < in_off + in_bytes) {
    return OCAL_FAIL(OCAL_INVALID_ARGUMENT,
                     "the plan (%s) is out of place, but the input and output buffers overlap "
                     "(bytes %zu..%zu and %zu..%zu of one allocation); use distinct buffers or "
                     "an in-place plan", p->text, in_off, in_off + in_bytes, out_off,
                     out_off + out_bytes);
  }

  pthread_mutex_lock(&p->lock);
  cl_mem in_mem = in->mem, out_mem = out->mem, subs[2] = {NULL, NULL};
  int copy_back = 0; /* the result lands in scratch[1] (or [0] in place) and is copied out */
  /* C2R engines overwrite their input: work on a copy, so the caller's stays as it was. A view
   * the engine cannot take at its offset, where no sub-buffer can start, is staged the same
   * way. */
  int stage_in = p->desc.kind == OCAL_FFT_C2R;
  if (!offset_taken(p, in_off, in_size, p->desc.kind == OCAL_FFT_R2C)) {
    s = sub_buffer(ctx, in->mem, in_off, in_bytes, &subs[0]);
    if (s == OCAL_UNSUPPORTED) {
      stage_in = 1;
      s = OCAL_OK;
    }
    if (s != OCAL_OK) goto done;
  }
  if (stage_in) {
    cl_mem tmp;
    if ((s = scratch(p, 0, in_bytes, &tmp)) != OCAL_OK) goto done;
    cl_int err = clEnqueueCopyBuffer(ocal__context_queue(ctx), in->mem, tmp, in_off, 0, in_bytes, 0,
                                     NULL, NULL);
    if (err != CL_SUCCESS) {
      s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueCopyBuffer", __func__);
      goto done;
    }
    in_mem = tmp;
    in_off = 0;
    if (p->desc.kind == OCAL_FFT_C2R && (s = c2r_hermitian(p, tmp)) != OCAL_OK) goto done;
  } else if (subs[0]) {
    in_mem = subs[0];
    in_off = 0;
  }
  if (p->desc.in_place) {
    out_mem = in_mem;
    copy_back = stage_in;
    out_off = in_off;
  } else if (!offset_taken(p, out_off, out_size, p->desc.kind == OCAL_FFT_C2R)) {
    s = sub_buffer(ctx, out->mem, out_off, out_bytes, &subs[1]);
    if (s == OCAL_UNSUPPORTED) {
      if ((s = scratch(p, 1, out_bytes, &out_mem)) != OCAL_OK) goto done;
      copy_back = 1;
    } else if (s != OCAL_OK) {
      goto done;
    } else {
      out_mem = subs[1];
    }
    out_off = 0;
  }

  s = p->engine->execute(p->built.state, direction, in_mem, in_off, out_mem, out_off, __func__);
  if (s == OCAL_OK && copy_back) {
    cl_int err = clEnqueueCopyBuffer(ocal__context_queue(ctx), out_mem, out->mem, 0,
                                     out->offset * out_size, out_bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      s = ocal__cl_fail(ocal__context_info(ctx)->name, err, "clEnqueueCopyBuffer", __func__);
  }
  if (s == OCAL_OK) {
    int d = direction == OCAL_FFT_FORWARD ? 0 : 1;
    double rest = p->problem.scale[d] / p->built.applied[d];
    if (fabs(rest - 1.0) > 1e-15) s = scale(p, out, rest);
  }
done:
  /* OpenCL keeps a released sub-buffer until the commands queued on it have finished. */
  for (int i = 0; i < 2; i++)
    if (subs[i]) clReleaseMemObject(subs[i]);
  pthread_mutex_unlock(&p->lock);
  return s;
}
