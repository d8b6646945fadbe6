/* raw_kernel — PyCUDA's first example in C: compile an OpenCL kernel from a string at run
 * time, run it on two vectors, check the result on the host.
 *
 * The kernel multiplies two vectors elementwise. ocal builds it through its caches (the
 * second run of this program loads the binary from the disk cache), checks the arguments
 * against the kernel's declaration, and picks the work-group size. The launch covers n
 * rounded up to that size, so the kernel is given n and guards with it.
 *
 *   ./raw_kernel [--device SELECTOR] [N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

static const char *const source =
    "__kernel void multiply_them(__global float *dest, __global const float *a,\n"
    "                            __global const float *b, const ulong n) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  if (i < n) dest[i] = a[i] * b[i];\n"
    "}\n";

static int fail(const char *what, ocal_status s) {
  fprintf(stderr, "raw_kernel: %s failed: %s\n%s\n", what, ocal_status_name(s),
          ocal_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  size_t n = 400;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: raw_kernel [--device SELECTOR] [N]\n"
             "Compiles an OpenCL kernel from a string at run time, multiplies two random\n"
             "vectors of N floats (default 400) elementwise on the device and checks the\n"
             "product on the host. The device is OCAL_DEVICE's, or --device SELECTOR's\n"
             "(gpu, cpu, P:D, or part of a device name).\n");
      return 0;
    } else if (strcmp(argv[i], "--device") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "raw_kernel: --device needs a selector (gpu, cpu, P:D or a name)\n");
        return 2;
      }
      device = argv[++i];
    } else {
      char *end;
      unsigned long long v = strtoull(argv[i], &end, 10);
      if (*end || argv[i][0] == '-' || argv[i][0] == '\0' || v == 0) {
        fprintf(stderr, "raw_kernel: bad argument '%s' (want --device SELECTOR or N >= 1; "
                        "--help for help)\n", argv[i]);
        return 2;
      }
      n = (size_t)v;
    }
  }

  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = device;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&opts, &ctx);
  if (s != OCAL_OK) return fail("ocal_context_create", s);
  ocal_device_info info = {.struct_size = sizeof info};
  ocal_context_get_device_info(ctx, &info);
  printf("device: %s (%s)\n", info.name, info.platform_name);

  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *dest = malloc(n * sizeof *dest);
  if (!a || !b || !dest) return fail("malloc", OCAL_OUT_OF_HOST_MEMORY);
  srand(1);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  }

  ocal_program program = NULL;
  ocal_kernel kernel = NULL;
  ocal_buffer da = NULL, db = NULL, dd = NULL;
  cl_ulong count = n;
  int bad = -1;
  if ((s = ocal_program_create(ctx, source, NULL, &program)) != OCAL_OK) {
    fail("ocal_program_create", s);
  } else if ((s = ocal_kernel_create(program, "multiply_them", &kernel)) != OCAL_OK) {
    fail("ocal_kernel_create", s);
  } else if ((s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, a, &da)) != OCAL_OK ||
             (s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, b, &db)) != OCAL_OK ||
             (s = ocal_buffer_create(ctx, OCAL_F32, 1, &n, &dd)) != OCAL_OK) {
    fail("a buffer", s);
  } else if ((s = ocal_kernel_set_buffer(kernel, 0, dd)) != OCAL_OK ||
             (s = ocal_kernel_set_buffer(kernel, 1, da)) != OCAL_OK ||
             (s = ocal_kernel_set_buffer(kernel, 2, db)) != OCAL_OK ||
             (s = ocal_kernel_set_scalar(kernel, 3, OCAL_U64, &count)) != OCAL_OK) {
    fail("setting the arguments", s);
  } else if ((s = ocal_kernel_launch(kernel, 1, &n, NULL)) != OCAL_OK) {
    fail("ocal_kernel_launch", s);
  } else if ((s = ocal_buffer_read(dd, 0, n, dest, NULL)) != OCAL_OK) {
    fail("ocal_buffer_read", s);
  } else {
    bad = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
      double err = fabs((double)dest[i] - (double)a[i] * (double)b[i]);
      if (err > worst) worst = err;
      if (dest[i] != a[i] * b[i]) bad++;
    }
    printf("dest = a * b for %zu floats, compiled at run time: %s (largest difference from "
           "the host %.3g)\n", n, bad ? "MISMATCH" : "matches the host", worst);
    ocal_cache_stats st = {.struct_size = sizeof st};
    if (ocal_context_get_cache_stats(ctx, &st) == OCAL_OK)
      printf("kernel cache: %llu compiled, %llu loaded from disk\n",
             (unsigned long long)st.compiles, (unsigned long long)st.disk_hits);
  }
  ocal_buffer_release(da);
  ocal_buffer_release(db);
  ocal_buffer_release(dd);
  ocal_kernel_release(kernel);
  ocal_program_release(program);
  ocal_context_release(ctx);
  free(a);
  free(b);
  free(dest);
  return bad == 0 ? 0 : 1;
}
