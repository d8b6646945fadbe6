/* ocal — the clFFT engine.
 *
 * clFFT needs clfftSetup once per process before any other call (done here with
 * pthread_once), and its library state (the repository of generated kernels that plans
 * share) is not safe to change from two threads at once: plan baking, enqueuing (which sets
 * the arguments of shared kernels) and destruction all go through one process-wide mutex.
 * clfftTeardown runs at exit (atexit), once every context should be gone.
 *
 * clFFT handles lengths whose prime factors are 2, 3, 5, 7, 11 and 13 only; others are
 * refused here with a message rather than by clFFT's BUGCHECK.
 *
 * clfftBakePlan reports success when its generated kernels fail to compile (clFFT 2.12 prints
 * "FFTGeneratedStockhamAction::compileKernels failed" and the compiler's log on standard
 * error and goes on; the plan then fails at every clfftEnqueueTransform with
 * CL_INVALID_PROGRAM). Intel's CPU runtime rejects them so ("incompatible pointer types", an
 * error in its newer Clang), and PoCL does with POCL_EXTRA_BUILD_FLAGS=
 * -Werror=incompatible-pointer-types. So a plan is proven at creation: standard error is
 * captured while clFFT bakes, and a one-transform copy of the plan runs once on scratch
 * memory; when it fails, creation fails with OCAL_BUILD_FAILED and the compiler's log that
 * clFFT printed. What other threads write to standard error meanwhile is written out after. */
#include "config.h"

#include "ocal/cl.h" /* first: it sets the OpenCL version clFFT.h would guess */
#include <clFFT.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static ocal_status cf_fail(const ocal__fft_problem *p, clfftStatus st, const char *call,
                           const char *func) {
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
    return ocal__fail(s, func,
                      "%s failed for the clFFT plan (%s) on device '%s': %s (clfftStatus %d)", call,
                      p->text, ocal__context_info(p->ctx)->name, own, (int)st);
  }
  ocal_status s = ocal__cl_fail(ocal__context_info(p->ctx)->name, (cl_int)st, call, func);
  ocal__append_error(" (clFFT plan %s)", p->text);
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

/* Standard error, redirected into a temporary file while clFFT bakes (under clfft_lock). */
typedef struct capture {
  FILE *file;
  int saved;
} capture;

static void capture_begin(capture *c) {
  fflush(stderr);
  c->saved = -1;
  c->file = tmpfile();
  if (!c->file) return;
  c->saved = dup(STDERR_FILENO);
  if (c->saved < 0 || dup2(fileno(c->file), STDERR_FILENO) < 0) {
    if (c->saved >= 0) close(c->saved);
    c->saved = -1;
    fclose(c->file);
    c->file = NULL;
  }
}

/* Restores standard error; returns what was written meanwhile (malloc'ed, NUL-terminated,
 * at most 64 KiB), or NULL. */
static char *capture_end(capture *c) {
  if (!c->file) return NULL;
  fflush(stderr);
  dup2(c->saved, STDERR_FILENO);
  close(c->saved);
  char *text = malloc(65536 + 1);
  size_t n = 0;
  if (text) {
    rewind(c->file);
    n = fread(text, 1, 65536, c->file);
    text[n] = '\0';
  }
  fclose(c->file);
  c->file = NULL;
  if (text && n == 0) {
    free(text);
    text = NULL;
  }
  return text;
}

/* Runs one forward transform of a batch-1 copy of the plan (same lengths, layout, precision,
 * placement) on scratch memory, to find kernels clfftBakePlan did not manage to build. Scratch
 * that cannot be had sets *alloc to the allocation's status (its message says why: a device
 * shortage, the context's memory_limit), not one of clFFT's. */
static clfftStatus probe(ocal_context ctx, clfftPlanHandle one, int in_place, size_t elems,
                         size_t es, const char **call, ocal_status *alloc) {
  size_t bytes = elems * 2 * es; /* complex elements: enough for any layout of the plan */
  cl_mem a = NULL, b = NULL;
  *call = "device memory allocation (scratch for the trial transform)";
  if ((*alloc = ocal__device_alloc(ctx, bytes, &a, "ocal_fft_plan_create")) != OCAL_OK)
    return CLFFT_OUT_OF_HOST_MEMORY;
  if (!in_place &&
      (*alloc = ocal__device_alloc(ctx, bytes, &b, "ocal_fft_plan_create")) != OCAL_OK) {
    ocal__device_free(ctx, a);
    return CLFFT_OUT_OF_HOST_MEMORY;
  }
  cl_int zero = 0;
  cl_command_queue queue = ocal__context_queue(ctx);
  cl_int err = clEnqueueFillBuffer(queue, a, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
  cl_mem outs[1] = {b};
  *call = "clfftEnqueueTransform (a trial transform at plan creation)";
  clfftStatus st = err != CL_SUCCESS
                       ? (clfftStatus)err
                       : clfftEnqueueTransform(one, CLFFT_FORWARD, 1, &queue, 0, NULL, NULL, &a,
                                               in_place ? NULL : outs, NULL);
  if (st == CLFFT_SUCCESS) {
    *call = "clFinish (a trial transform at plan creation)";
    st = (clfftStatus)clFinish(queue);
  }
  ocal__device_free(ctx, a);
  if (b) ocal__device_free(ctx, b);
  return st;
}

static ocal_status cf_plan_create(const ocal__fft_problem *p, ocal__fft_built *out) {
  ocal_context ctx = p->ctx;
  for (int i = 0; i < p->ndim; i++) {
    size_t f = bad_factor(p->lengths[i]);
    if (f)
      return ocal__fail(OCAL_UNSUPPORTED, "ocal_fft_plan_create",
                        "clFFT cannot do length %zu (plan %s): it has the prime factor %zu, and "
                        "clFFT handles products of 2, 3, 5, 7, 11 and 13 only; use the vkfft "
                        "engine, which handles any length",
                        p->lengths[i], p->text, f);
  }
  pthread_once(&setup_once, setup);
  if (setup_status != CLFFT_SUCCESS)
    return cf_fail(p, setup_status, "clfftSetup", "ocal_fft_plan_create");

  cf_plan *c = calloc(1, sizeof *c);
  if (!c)
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal_fft_plan_create",
                      "no memory for a clFFT plan");
  c->p = p;
  c->queue = ocal__context_queue(ctx);

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
  clfftStatus st = CLFFT_SUCCESS;
  clfftPlanHandle one = 0;
  int have_one = 0;
  pthread_mutex_lock(&clfft_lock);
  capture cap;
  capture_begin(&cap);
  /* Twice: the plan, then its batch-1 copy for the trial transform. */
  for (int pass = 0; pass < 2 && st == CLFFT_SUCCESS; pass++) {
    clfftPlanHandle *h = pass == 0 ? &c->handle : &one;
    call = "clfftCreateDefaultPlan";
    st = clfftCreateDefaultPlan(h, ocal__context_cl(ctx), (clfftDim)p->ndim, lens);
    if (st != CLFFT_SUCCESS) {
      /* clFFT 2.12 registers the plan, with the context, before it queries the device
       * (FFTPlan::SetEnvelope) and retains the context only after: a plan whose creation
       * failed in between holds the context without a reference, and destroying it released
       * ocal's own (the context then crashed at its release; found by tests/fault). So such
       * a plan gets a reference to give back before it is destroyed; if even that fails,
       * the plan is left to clfftTeardown rather than the context broken. */
      if (*h && clRetainContext(ocal__context_cl(ctx)) == CL_SUCCESS) clfftDestroyPlan(h);
      *h = 0;
      break;
    }
    if (pass == 1) have_one = 1;
    call = "clfftSetPlanPrecision";
    st = clfftSetPlanPrecision(*h, p->dbl ? CLFFT_DOUBLE : CLFFT_SINGLE);
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetLayout";
      st = clfftSetLayout(*h, in_layout, out_layout);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetResultLocation";
      st = clfftSetResultLocation(*h, p->in_place ? CLFFT_INPLACE : CLFFT_OUTOFPLACE);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanInStride";
      st = clfftSetPlanInStride(*h, (clfftDim)p->ndim, in_str);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanOutStride";
      st = clfftSetPlanOutStride(*h, (clfftDim)p->ndim, out_str);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanDistance";
      st = clfftSetPlanDistance(*h, in_dist, out_dist);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanBatchSize";
      st = clfftSetPlanBatchSize(*h, pass == 0 ? p->batch : 1);
    }
    if (st == CLFFT_SUCCESS) {
      call = "clfftSetPlanScale";
      st = clfftSetPlanScale(*h, CLFFT_FORWARD, (cl_float)out->applied[0]);
    }
    if (st == CLFFT_SUCCESS) st = clfftSetPlanScale(*h, CLFFT_BACKWARD, (cl_float)out->applied[1]);
    if (st == CLFFT_SUCCESS) {
      /* clfftBakePlan 2.12 ignores the result of its write of the plan's constant buffer
       * (twiddles): when that write fails it reports success and leaves a plan whose state
       * corrupts the heap later. The write fails only with the queue or the device memory:
       * so the queue is drained first, and a queue in error fails here instead (what
       * cannot be guarded, an allocation failing inside the bake itself, README states). */
      cl_int qerr = clFinish(c->queue);
      if (qerr != CL_SUCCESS) {
        st = (clfftStatus)qerr; /* clFFT's statuses are OpenCL's error codes */
        call = "clFinish (before clfftBakePlan)";
        break;
      }
      call = "clfftBakePlan";
      st = clfftBakePlan(*h, 1, &c->queue, NULL, NULL);
      /* The write was enqueued on the queue: a failure shows at the next clFinish. */
      if (st == CLFFT_SUCCESS && (qerr = clFinish(c->queue)) != CL_SUCCESS) {
        st = (clfftStatus)qerr;
        call = "clFinish (after clfftBakePlan)";
      }
    }
  }
  ocal_status alloc = OCAL_OK;
  if (st == CLFFT_SUCCESS) {
    size_t elems = in_dist > out_dist ? in_dist : out_dist;
    st = probe(ctx, one, p->in_place, elems, p->dbl ? 8 : 4, &call, &alloc);
  }
  char *printed = capture_end(&cap);
  if (have_one) clfftDestroyPlan(&one);
  if (st != CLFFT_SUCCESS && c->handle) clfftDestroyPlan(&c->handle);
  pthread_mutex_unlock(&clfft_lock);
  if (st != CLFFT_SUCCESS) {
    free(c);
    ocal_status s;
    if (alloc != OCAL_OK)
      s = alloc; /* the allocation's own message stands */
    else if ((int)st == CL_INVALID_PROGRAM || (int)st == CL_INVALID_PROGRAM_EXECUTABLE ||
             (int)st == CL_BUILD_PROGRAM_FAILURE ||
             (printed && strstr(printed, "compileKernels failed")))
      s = ocal__fail(OCAL_BUILD_FAILED, "ocal_fft_plan_create",
                     "clFFT's kernels for the plan (%s) do not build on device '%s': %s "
                     "returned %s (%d) after clfftBakePlan reported success; use the vkfft "
                     "engine. What clFFT printed (the compiler's log):\n%s",
                     p->text, ocal__context_info(ctx)->name, call, ocal__cl_error_name((cl_int)st),
                     (int)st, printed ? printed : "(nothing)");
    else
      s = cf_fail(p, st, call, "ocal_fft_plan_create");
    free(printed);
    return s;
  }
  /* Nothing failed: what was printed (by clFFT or by other threads) goes out after all. */
  if (printed) {
    fputs(printed, stderr);
    free(printed);
  }
  out->state = c;
  return OCAL_OK;
}

static ocal_status cf_execute(void *state, int direction, cl_mem in, size_t in_offset, cl_mem out,
                              size_t out_offset, const char *func) {
  cf_plan *c = state;
  (void)in_offset; /* always 0: this engine takes no offsets (plan.c passes sub-buffers) */
  (void)out_offset;
  cl_mem ins[1] = {in}, outs[1] = {out};
  pthread_mutex_lock(&clfft_lock);
  clfftStatus st = clfftEnqueueTransform(
      c->handle, direction == OCAL_FFT_FORWARD ? CLFFT_FORWARD : CLFFT_BACKWARD, 1, &c->queue, 0,
      NULL, NULL, ins, c->p->in_place ? NULL : outs, NULL);
  pthread_mutex_unlock(&clfft_lock);
  if (st != CLFFT_SUCCESS) return cf_fail(c->p, st, "clfftEnqueueTransform", func);
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
