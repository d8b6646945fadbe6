/* ocal — the command-line tool: list devices, show one device's facts; the other commands
 * live in a file each (demo.c, ...). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ocal.h>

#include "bench.h"
#include "tool.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ocal COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  devices            list every OpenCL device; '*' marks the one ocal would pick\n"
          "  info [SELECTOR]    all facts of one device (default: the one ocal would pick)\n"
          "  demo [SELECTOR]    run a short check of transfers and kernels on a device\n"
          "  doctor             check the OpenCL setup (ICD loader, .icd files, drivers,\n"
          "                     devices, cache directory, engines): one line per problem,\n"
          "                     with its fix; exits 1 when no device works\n"
          "  tune gemm [--precision 32|64] [--budget SECONDS] [--device SELECTOR] [--size N]\n"
          "                     [--phases xgemm,direct,switch] [--no-store]\n"
          "                     search CLBlast's GEMM parameters for a device (default budget\n"
          "                     60 s) and store the winner in its tuning file, which every\n"
          "                     later program applies (OCAL_TUNING=0 turns that off)\n"
          "  bench [--quick] [--suite LIST] [--json F] [--markdown F] [--compare F] [--plot DIR]\n"
          "                     run the benchmark suites (ocal bench --help for all options)\n"
          "  --version          print the version\n"
          "  --help             print this help\n"
          "\n"
          "SELECTOR is gpu, cpu, accelerator, P:D (platform:device) or a piece of a device or\n"
          "platform name, case-insensitive; the OCAL_DEVICE environment variable sets the\n"
          "default. With nothing set, the first GPU wins, then an accelerator, then a CPU.\n");
}

/* 'ocal COMMAND --help' for the commands parsed here (tune and bench print their own). */
static const struct {
  const char *name, *args, *what;
} commands[] = {
    {"devices", "", "list every OpenCL device; '*' marks the one ocal would pick"},
    {"info", " [SELECTOR]", "all facts of one device (default: the one ocal would pick)"},
    {"demo", " [SELECTOR]", "run a short check of transfers and kernels on a device"},
    {"doctor", "",
     "check the OpenCL setup (ICD loader, .icd files, drivers, devices, cache directory,\n"
     "engines): one line per problem, with its fix; exits 1 when no device works"},
};

static void command_usage(const char *cmd) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(cmd, commands[i].name) != 0) continue;
    printf("usage: ocal %s%s\n\n%s\n", cmd, commands[i].args, commands[i].what);
    if (commands[i].args[0])
      printf("\nSELECTOR is gpu, cpu, accelerator, P:D (platform:device) or a piece of a device or\n"
             "platform name, case-insensitive; the OCAL_DEVICE environment variable sets the\n"
             "default.\n");
  }
}

int tool_fail(const char *what, ocal_status s) {
  fprintf(stderr, "ocal: %s: %s\n%s\n", what, ocal_status_name(s), ocal_last_error());
  return 1;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static int cmd_devices(void) {
  size_t n = 0;
  ocal_status s = ocal_device_list(0, NULL, &n);
  if (s != OCAL_OK) return tool_fail("listing devices", s);
  if (n == 0) {
    printf("no OpenCL devices found (is an OpenCL driver installed? try pocl-opencl-icd)\n");
    return 1;
  }
  ocal_device_info *list = calloc(n, sizeof *list);
  if (!list) return tool_fail("listing devices", OCAL_OUT_OF_HOST_MEMORY);
  list[0].struct_size = sizeof *list;
  s = ocal_device_list(n, list, &n);
  if (s != OCAL_OK) {
    free(list);
    return tool_fail("listing devices", s);
  }
  ocal_device_info picked = {sizeof picked};
  int have_pick = ocal_device_select(NULL, &picked) == OCAL_OK;
  const char *env = getenv("OCAL_DEVICE");
  printf("   %-5s %-12s %-40s %-28s %10s %5s %5s\n", "P:D", "type", "device", "platform",
         "memory", "CUs", "fp64");
  for (size_t i = 0; i < n; i++) {
    const ocal_device_info *d = &list[i];
    int mark = have_pick && picked.platform_index == d->platform_index &&
               picked.device_index == d->device_index;
    char pd[16];
    snprintf(pd, sizeof pd, "%d:%d", d->platform_index, d->device_index);
    printf(" %c %-5s %-12s %-40.40s %-28.28s %7.0f MiB %5u %5s\n", mark ? '*' : ' ', pd,
           ocal_device_type_name(d->type), d->name, d->platform_name, mib(d->global_mem_bytes),
           d->compute_units, d->has_fp64 ? "yes" : "no");
  }
  if (have_pick)
    printf("\n* picked by %s\n", env && env[0] ? "OCAL_DEVICE" : "default (GPU, accelerator, CPU)");
  else
    printf("\nOCAL_DEVICE='%s' matches no device\n", env ? env : "");
  free(list);
  return have_pick ? 0 : 1;
}

/* The memory pool's counters after a small run: four sizes created and released twice, so
 * the second round is served from the pool. */
static void print_pool(const char *selector) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = selector;
  ocal_context ctx;
  if (ocal_context_create(&o, &ctx) != OCAL_OK) return;
  for (int round = 0; round < 2; round++) {
    for (size_t n = 1000; n <= 1000000; n *= 10) {
      ocal_buffer b;
      if (ocal_buffer_create(ctx, OCAL_U8, 1, &n, &b) == OCAL_OK) ocal_buffer_release(b);
    }
  }
  ocal_memory_stats m = {sizeof m};
  if (ocal_memory_get_stats(ctx, &m) == OCAL_OK)
    printf("memory pool       %s, cache limit %.0f MiB (OCAL_POOL, OCAL_POOL_LIMIT); small run: "
           "%" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " device allocations, %" PRIu64
           " bytes cached, peak %" PRIu64 " in use\n",
           m.pool_enabled ? "on" : "off", mib(m.pool_limit), m.hits, m.misses, m.device_allocs,
           m.bytes_cached, m.peak_bytes_in_use);
  ocal_context_release(ctx);
}

static int cmd_info(const char *selector) {
  /* The facts as a context sees them: OCAL_LIMITS may make the device look smaller. */
  ocal_device_info d = {sizeof d};
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = selector;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&o, &ctx);
  if (s != OCAL_OK) return tool_fail("selecting a device", s);
  ocal_context_get_device_info(ctx, &d);
  ocal_context_release(ctx);
  printf("device            %s\n", d.name);
  printf("index (P:D)       %d:%d\n", d.platform_index, d.device_index);
  printf("type              %s\n", ocal_device_type_name(d.type));
  printf("vendor            %s\n", d.vendor);
  printf("platform          %s\n", d.platform_name);
  printf("platform version  %s\n", d.platform_version);
  printf("device version    %s\n", d.device_version);
  printf("driver version    %s\n", d.driver_version);
  printf("OpenCL C version  %s\n", d.opencl_c_version);
  printf("global memory     %" PRIu64 " bytes (%.0f MiB)\n", d.global_mem_bytes,
         mib(d.global_mem_bytes));
  printf("max allocation    %" PRIu64 " bytes (%.0f MiB)\n", d.max_alloc_bytes,
         mib(d.max_alloc_bytes));
  printf("local memory      %" PRIu64 " bytes\n", d.local_mem_bytes);
  printf("compute units     %u\n", d.compute_units);
  printf("max clock         %u MHz\n", d.max_clock_mhz);
  printf("max work-group    %zu (items %zu x %zu x %zu)\n", d.max_work_group_size,
         d.max_work_item_sizes[0], d.max_work_item_sizes[1], d.max_work_item_sizes[2]);
  printf("base alignment    %u bytes\n", d.mem_base_align_bytes);
  printf("fp64              %s\n", d.has_fp64 ? "yes" : "no");
  const char *limits = getenv("OCAL_LIMITS");
  if (limits && limits[0]) printf("emulated limits   OCAL_LIMITS=%s\n", limits);
  printf("ocal version      %s\n", ocal_version_string());
  int vk = 0, cf = 0;
  ocal_fft_engine_available(OCAL_FFT_ENGINE_VKFFT, &vk);
  ocal_fft_engine_available(OCAL_FFT_ENGINE_CLFFT, &cf);
  ocal_fft_engine fft_default;
  const char *fft_default_name = "none";
  if (ocal_fft_get_default_engine(&fft_default) == OCAL_OK)
    fft_default_name = ocal_fft_engine_name(fft_default);
  printf("FFT engines       %s%s%s (default %s; OCAL_FFT=vkfft|clfft)\n", vk ? "vkfft" : "",
         vk && cf ? " " : "", cf ? "clfft" : (vk ? "" : "none"), fft_default_name);
  /* The GEMM engine rule's choice at a few shapes (OCAL_GEMM and friends apply). */
  if (ocal_context_create(&o, &ctx) == OCAL_OK) {
    /* The precision mode and the tensor-core probe's answer (run once per device and
     * driver, then read from the disk cache). */
    ocal_gemm_precision precision;
    int tensor_cores = 0;
    const char *detail = NULL;
    if (ocal_gemm_get_precision(ctx, &precision, &tensor_cores, &detail) == OCAL_OK) {
      printf("GEMM precision    %s (OCAL_GEMM_PRECISION=fp32|tf32)\n",
             precision == OCAL_GEMM_PRECISION_TF32 ? "tf32" : "fp32 (exact IEEE)");
      printf("tensor cores      %s\n", detail ? detail : (tensor_cores ? "yes" : "no"));
    }
    static const size_t sq[] = {256, 1024, 4096};
    for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++) {
      const char *engine = "none", *reason = NULL;
      char shape[32];
      snprintf(shape, sizeof shape, "GEMM f32 %zu^3", sq[i]);
      ocal_gemm_engine_query(ctx, OCAL_F32, OCAL_NO_TRANS, sq[i], sq[i], sq[i], 1, &engine,
                             &reason);
      if (reason) printf("%-17s %s (%s)\n", shape, engine, reason);
    }
    ocal_context_release(ctx);
  }
  print_pool(selector);
  return 0;
}

static void print_progress(const char *line, void *user) {
  (void)user;
  printf("  %s\n", line);
  fflush(stdout);
}

#define TUNE_USAGE                                                                     \
  "usage: ocal tune gemm [--precision 32|64] [--budget SECONDS] [--device SELECTOR] "   \
  "[--size N] [--phases xgemm,direct,switch] [--no-store]\n"

static int cmd_tune(int argc, char **argv) {
  /* 'ocal tune --help' as well as 'ocal tune gemm --help': gemm is the one thing to tune. */
  int at = argc >= 3 && strcmp(argv[2], "gemm") == 0 ? 3 : 2;
  if (argc > at && (strcmp(argv[at], "--help") == 0 || strcmp(argv[at], "-h") == 0)) {
    printf(TUNE_USAGE);
    return 0;
  }
  if (argc < 3 || strcmp(argv[2], "gemm") != 0) {
    fprintf(stderr, "ocal: " TUNE_USAGE);
    return 2;
  }
  ocal_blas_tune_options o;
  ocal_blas_tune_options_init(&o);
  o.progress = print_progress;
  const char *device = NULL;
  for (int i = 3; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(argv[i], "--precision") == 0 && v && (!strcmp(v, "32") || !strcmp(v, "64"))) {
      o.dtype = strcmp(v, "64") == 0 ? OCAL_F64 : OCAL_F32;
      i++;
    } else if (strcmp(argv[i], "--budget") == 0 && v && (o.budget_s = strtod(v, &end)) >= 0 &&
               *end == '\0') {
      i++;
    } else if (strcmp(argv[i], "--device") == 0 && v) {
      device = v;
      i++;
    } else if (strcmp(argv[i], "--size") == 0 && v && (o.size = strtoul(v, &end, 10)) > 0 &&
               *end == '\0') {
      i++;
    } else if (strcmp(argv[i], "--phases") == 0 && v) {
      o.phases = 0;
      o.phases |= strstr(v, "xgemm") ? OCAL_TUNE_XGEMM : 0;
      o.phases |= strstr(v, "direct") ? OCAL_TUNE_DIRECT : 0;
      o.phases |= strstr(v, "switch") ? OCAL_TUNE_SWITCH : 0;
      if (!o.phases) {
        fprintf(stderr, "ocal: tune gemm: --phases takes xgemm,direct,switch\n");
        return 2;
      }
      i++;
    } else if (strcmp(argv[i], "--no-store") == 0) {
      o.store = 0;
    } else if (strcmp(argv[i], "--precision") == 0 || strcmp(argv[i], "--budget") == 0 ||
               strcmp(argv[i], "--size") == 0 || strcmp(argv[i], "--device") == 0) {
      static const char *const wants[] = {"32 or 64", "a number of seconds, 0 or more",
                                          "a whole number of rows, 1 or more", "a selector"};
      int w = argv[i][2] == 'p' ? 0 : argv[i][2] == 'b' ? 1 : argv[i][2] == 's' ? 2 : 3;
      fprintf(stderr, "ocal: tune gemm: %s %s%s%s: it takes %s\n", argv[i], v ? "'" : "(no value)",
              v ? v : "", v ? "'" : "", wants[w]);
      return 2;
    } else {
      fprintf(stderr, "ocal: tune gemm: unknown argument '%s'\n" TUNE_USAGE, argv[i]);
      return 2;
    }
  }
  ocal_context_options co;
  ocal_context_options_init(&co);
  co.device = device;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&co, &ctx);
  if (s != OCAL_OK) return tool_fail("creating a context", s);
  ocal_blas_tuning result = {sizeof result};
  s = ocal_blas_tune(ctx, &o, &result);
  ocal_context_release(ctx);
  if (s != OCAL_OK) return tool_fail("tuning GEMM", s);
  printf("%s\n%s", result.note, result.params);
  if (result.source == OCAL_TUNING_FILE)
    printf("stored in %s\n", result.path);
  else
    printf("not stored (applies to this process only)\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "tune") == 0) return cmd_tune(argc, argv);
  if (strcmp(cmd, "bench") == 0) return bench_command(argc, argv);
  int help = strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0;
  int version = strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0;
  int devices = strcmp(cmd, "devices") == 0, doctor = strcmp(cmd, "doctor") == 0;
  int info = strcmp(cmd, "info") == 0, demo = strcmp(cmd, "demo") == 0;
  if (!help && !version && !devices && !doctor && !info && !demo) {
    fprintf(stderr, "ocal: unknown command '%s' (try 'ocal --help')\n", cmd);
    return 2;
  }
  if (!help && !version && argc == 3 &&
      (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
    command_usage(cmd);
    return 0;
  }
  /* info and demo take one optional argument (a device selector); the others none. */
  if (argc > (info || demo ? 3 : 2)) {
    if (info || demo)
      fprintf(stderr, "ocal: too many arguments for '%s' (try 'ocal --help')\n", cmd);
    else
      fprintf(stderr, "ocal: '%s' takes no argument (try 'ocal --help')\n", cmd);
    return 2;
  }
  const char *arg = argc == 3 ? argv[2] : NULL;
  if (help) {
    usage(stdout);
    return 0;
  }
  if (version) {
    printf("ocal %s\n", ocal_version_string());
    return 0;
  }
  if (devices) return cmd_devices();
  if (doctor) return tool_doctor();
  return info ? cmd_info(arg) : tool_demo(arg);
}
