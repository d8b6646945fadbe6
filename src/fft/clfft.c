/* ocal — the clFFT engine.
 *
 * clFFT needs clfftSetup once per process before any other call (done here with
 * pthread_once), and its library state (the repository of generated kernels that plans
 * share) is not safe to change from two threads at once: plan baking, enqueuing (which sets
 * the arguments of shared kernels) and destruction all go through one process-wide mutex.
 * clfftTeardown runs at exit (atexit), once every context should be gone.
 *
 * clFFT handles lengths whose prime factors are 2, 3, 5, 7, 11 and 13 only; others are
 * refused here with a message rather than by clFFT's BUGCHECK. */
#include "config.h"

#include "ocal/cl.h" /* first: it sets the OpenCL version clFFT.h would guess */
#include <clFFT.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static clfftStatus setup_status;
static pthread_mutex_t clfft_lock = PTHREAD_MUTEX_INITIALIZER;

static void teardown(void) { clfftTeardown(); }

static void setup(void) {
  clfftSetupData data;
  memset(&data, 0, sizeof data);
  cl_uint major, minor, patch;
  clfftGetVersion(&major, &minor, &patch);
  data.major = major;
  data.minor = minor;
  data.patch = patch;
  setup_status = clfftSetup(&data);
  /* clFFT frees its kernel repository here; without it, it warns on stderr at exit. */
  if (setup_status == CLFFT_SUCCESS) atexit(teardown);
}

typedef struct cf_plan {
  const ocal__fft_problem *p;
  clfftPlanHandle handle;
  cl_command_queue queue;
} cf_plan;

/* Fails with a message for a clFFT status: OpenCL codes by name, clFFT's own by meaning. */
static ocal_status cf_fail(const ocal__fft_problem *p, clfftStatus st, const char *call) {
  const char *own = NULL;
  switch ((int)st) {
    case CLFFT_BUGCHECK: own = "internal check failed (BUGCHECK)"; break;
    case CLFFT_NOTIMPLEMENTED: own = "not implemented for this transform"; break;
    case CLFFT_TRANSPOSED_NOTIMPLEMENTED: own = "transposed output not implemented"; break;
    case CLFFT_FILE_NOT_FOUND: own = "file not found"; break;
    case CLFFT_FILE_CREATE_FAILURE: own = "file creation failed"; break;
    case CLFFT_VERSION_MISMATCH: own = "version mismatch"; break;
    case CLFFT_INVALID_PLAN: own = "invalid plan"; break;
    case CLFFT_DEVICE_NO_DOUBLE: own = "the device has no double precision"; break;
    case CLFFT_DEVICE_MISMATCH: own = "plan baked for another device"; break;
    default: break;
  }
  if (own) {
    ocal_status s = (int)st == CLFFT_NOTIMPLEMENTED || (int)st == CLFFT_DEVICE_NO_DOUBLE
                        ? OCAL_UNSUPPORTED
                        : OCAL_INTERNAL;
    return ocal__fail(s, "clfft", "%s failed for the plan (%s) on device '%s': %s (clfftStatus %d)",
                      call, p->text, p->ctx->info.name, own, (int)st);
  }
  ocal_status s = ocal__cl_fail(p->ctx->info.name, (cl_int)st, call, "clfft");
  ocal__append_error(" (plan %s)", p->text);
  return s;
}

/* The smallest prime factor of n above 13, or 0 when n has none. */
static size_t bad_factor(size_t n) {
  static const size_t ok[] = {2, 3, 5, 7, 11, 13};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    while (n % ok[i] == 0) n /= ok[i];
  if (n == 1) return 0;
  for (size_t f = 17; f * f <= n; f += 2)
    if (n % f == 0) return f;
  return n;
}

static ocal_status cf_plan_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  ocal_context ctx = p->ctx;
  for (int i = 0; i < p->ndim; i++) {
    size_t f = bad_factor(p->lengths[i]);
    if (f)
      return OCAL_FAIL(OCAL_UNSUPPORTED,
                       "clFFT cannot do length %zu (plan %s): it has the prime factor %zu, and "
                       "clFFT handles products of 2, 3, 5, 7, 11 and 13 only; use the vkfft "
                       "engine, which handles any length",
                       p->lengths[i], p->text, f);
  }
  pthread_once(&setup_once, setup);
  if (setup_status != CLFFT_SUCCESS) return cf_fail(p, setup_status, "clfftSetup");

  cf_plan *c = calloc(1, sizeof *c);
  if (!c) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for a clFFT plan");
  c->p = p;
  c->queue = ctx->queue;

  /* clFFT counts dimensions from the contiguous one; ocal's lengths are row-major. */
  size_t lens[3], in_str[3], out_str[3];
  for (int i = 0; i < p->ndim; i++) lens[i] = p->lengths[p->ndim - 1 - i];
  size_t real0 = lens[0], cplx0 = p->kind == OCAL_FFT_C2C ? lens[0] : lens[0] / 2 + 1;
  size_t in0 = p->kind == OCAL_FFT_C2R ? cplx0 : real0;
  size_t out0 = p->kind == OCAL_FFT_R2C ? cplx0 : real0;
  if (p->kind == OCAL_FFT_C2C) in0 = out0 = lens[0];
  in_str[0] = out_str[0] = 1;
  size_t in_dist = in0, out_dist = out0;
  for (int i = 1; i < p->ndim; i++) {
    in_str[i] = in_dist;
    out_str[i] = out_dist;
    in_dist *= lens[i];
    out_dist *= lens[i];
  }
  clfftLayout in_layout = CLFFT_COMPLEX_INTERLEAVED, out_layout = CLFFT_COMPLEX_INTERLEAVED;
  if (p->kind == OCAL_FFT_R2C) {
    in_layout = CLFFT_REAL;
    out_layout = CLFFT_HERMITIAN_INTERLEAVED;
  } else if (p->kind == OCAL_FFT_C2R) {
    in_layout = CLFFT_HERMITIAN_INTERLEAVED;
    out_layout = CLFFT_REAL;
  }
  /* clFFT's scale is a float: exact for f32, but for f64 only when it is a power of two;
   * otherwise plan.c scales in double precision. */
  for (int d = 0; d < 2; d++) {
    float f = (float)p->scale[d];
    out->applied[d] = !p->dbl || (double)f == p->scale[d] ? p->scale[d] : 1.0;
  }

  const char *call = "clfftCreateDefaultPlan";
  pthread_mutex_lock(&clfft_lock);
  clfftStatus st = clfftCreateDefaultPlan(&c->handle, ctx->cl_ctx, (clfftDim)p->ndim, lens);
  if (st == CLFFT_SUCCESS) {
    call = "clfftSetPlanPrecision";
    st = clfftSetPlanPrecision(c->handle, p->dbl ? CLFFT_DOUBLE : CLFFT_SINGLE);
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetLayout";
      st = clfftSetLayout(c->handle, in_layout, out_layout);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetResultLocation";
      st = clfftSetResultLocation(c->handle, p->in_place ? CLFFT_INPLACE : CLFFT_OUTOFPLACE);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanInStride";
      st = clfftSetPlanInStride(c->handle, (clfftDim)p->ndim, in_str);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanOutStride";
      st = clfftSetPlanOutStride(c->handle, (clfftDim)p->ndim, out_str);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanDistance";
      st = clfftSetPlanDistance(c->handle, in_dist, out_dist);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanBatchSize";
      st = clfftSetPlanBatchSize(c->handle, p->batch);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanScale";
      st = clfftSetPlanScale(c->handle, CLFFT_FORWARD, (cl_float)out->applied[0]);
    }
    if (st == CLFFT_SUCCESS) st = clfftSetPlanScale(c->handle, CLFFT_BACKWARD,
                                                    (cl_float)out->applied[1]);
    if (st == CLFFT_SUCCESS) {
      /* clfftBakePlan 2.12 ignores the result of its write of the plan's constant buffer
       * (twiddles): when that write fails it reports success and leaves a plan whose state
       * corrupts the heap later. The write fails only with the queue or the device memory:
       * so the queue is drained first, and a queue in error fails here instead (what
       * cannot be guarded, an allocation failing inside the bake itself, README states). */
      cl_int qerr = clFinish(c->queue);
      if (qerr != CL_SUCCESS) {
        clfftDestroyPlan(&c->handle);
        pthread_mutex_unlock(&clfft_lock);
        free(c);
        return ocal__cl_fail(ctx->info.name, qerr, "clFinish", "ocal_fft_plan_create");
      }
      call = "clfftBakePlan";
      st = clfftBakePlan(c->handle, 1, &c->queue, NULL, NULL);
      /* The write was enqueued on the queue: a failure shows at the next clFinish. */
      if (st == CLFFT_SUCCESS && (qerr = clFinish(c->queue)) != CL_SUCCESS) {
        clfftDestroyPlan(&c->handle);
        pthread_mutex_unlock(&clfft_lock);
        free(c);
        return ocal__cl_fail(ctx->info.name, qerr, "clFinish (after clfftBakePlan)",
                             "ocal_fft_plan_create");
      }
    }
    if (st != CLFFT_SUCCESS) clfftDestroyPlan(&c->handle);
  }
  pthread_mutex_unlock(&clfft_lock);
  if (st != CLFFT_SUCCESS) {
    free(c);
    return cf_fail(p, st, call);
  }
  out->state = c;
  return OCAL_OK;
}

static ocal_status cf_execute(void *state, int direction, cl_mem in, size_t in_offset, cl_mem out,
                              size_t out_offset) {
  cf_plan *c = state;
  (void)in_offset; /* always 0: this engine takes no offsets (plan.c passes sub-buffers) */
  (void)out_offset;
  cl_mem ins[1] = {in}, outs[1] = {out};
  pthread_mutex_lock(&clfft_lock);
  clfftStatus st = clfftEnqueueTransform(
      c->handle, direction == OCAL_FFT_FORWARD ? CLFFT_FORWARD : CLFFT_BACKWARD, 1, &c->queue, 0,
      NULL, NULL, ins, c->p->in_place ? NULL : outs, NULL);
  pthread_mutex_unlock(&clfft_lock);
  if (st != CLFFT_SUCCESS) return cf_fail(c->p, st, "clfftEnqueueTransform");
  return OCAL_OK;
}

static void cf_plan_destroy(void *state) {
  cf_plan *c = state;
  pthread_mutex_lock(&clfft_lock);
  clfftDestroyPlan(&c->handle);
  pthread_mutex_unlock(&clfft_lock);
  free(c);
}

const ocal__fft_engine ocal__fft_clfft = {
    .name = "clfft",
    .takes_offsets = 0,
    .plan_create = cf_plan_create,
    .execute = cf_execute,
    .plan_destroy = cf_plan_destroy,
};
