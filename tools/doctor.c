/* ocal — `ocal doctor`: checks an OpenCL setup step by step and says how to fix what is
 * wrong, one line per problem. The most common trouble of OpenCL users is a setup in which
 * no platform is found: the ICD loader reads .icd files (in /etc/OpenCL/vendors, or the
 * directory or file OCL_ICD_VENDORS names), each naming a driver library it loads; when one
 * is missing or does not load, the loader says nothing. So the doctor loads each library
 * itself (dlopen, with dlerror's reason), then lists platforms and devices, compiles and runs
 * a tiny kernel on each device, checks the kernel cache directory by writing a file in it,
 * and tries the optional engines (VkFFT, clFFT, CLBlast) on the first working device.
 * Exit status: 0 when at least one device works, 1 otherwise. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ocal.h>

#include "tool.h"

static int problems;

/* clFFT 2.12 deletes its plan actions through a base-class pointer of another size (a bug of
 * clFFT's, harmless with the system allocator; tests/check_fft.c says the same): the doctor
 * makes a clFFT plan, so AddressSanitizer must not abort on it. Other builds never call it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "new_delete_type_mismatch=0"; }

static void ok(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("  ok       %-14s ", what);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

/* One line: what is wrong, then how to fix it. */
static void problem(const char *what, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(const char *what, const char *fix, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("  PROBLEM  %-14s ", what);
  vprintf(fmt, ap);
  printf(" -- fix: %s\n", fix);
  va_end(ap);
  problems++;
}

/* The first line of a message (ocal's messages may carry a build log after it). */
static const char *first_line(const char *msg, char *buf, size_t size) {
  snprintf(buf, size, "%s", msg);
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  return buf;
}

static void check_loader(void) {
  Dl_info info;
  if (dladdr((void *)clGetPlatformIDs, &info) && info.dli_fname)
    ok("ICD loader", "%s", info.dli_fname);
  else
    ok("ICD loader", "linked (its path is unknown)");
}

/* One .icd file: the library it names must exist and load, and be an ICD driver. */
static int check_icd(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    problem("vendors", "make the file readable, or remove it", "%s cannot be read: %s", path,
            strerror(errno));
    return 0;
  }
  char lib[4096] = "";
  if (!fgets(lib, sizeof lib, f)) lib[0] = '\0';
  fclose(f);
  lib[strcspn(lib, "\r\n")] = '\0';
  if (!lib[0]) {
    problem("vendors", "write the driver library's path or name into it, or remove it",
            "%s is empty", path);
    return 0;
  }
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    problem("vendors",
            "install the driver package that provides it, or correct the path in the .icd "
            "file (ldconfig -p | grep the name finds installed copies)",
            "%s names %s, which does not load: %s", path, lib, why ? why : "unknown reason");
    return 0;
  }
  /* Drivers stay loaded: unloading some of them (with threads of their own) is unsafe. */
  /* The loader finds a driver's entry through its clGetExtensionFunctionAddress. */
  typedef void *(*gefa_fn)(const char *);
  gefa_fn gefa = (gefa_fn)dlsym(h, "clGetExtensionFunctionAddress");
  if (!dlsym(h, "clIcdGetPlatformIDsKHR") && !(gefa && gefa("clIcdGetPlatformIDsKHR"))) {
    problem("vendors", "point the .icd file at the vendor's ICD driver library",
            "%s names %s, which loads but is no ICD driver (no clIcdGetPlatformIDsKHR)", path,
            lib);
    return 0;
  }
  ok("vendors", "%s -> %s", path, lib);
  return 1;
}

static void check_vendors(void) {
  const char *env = getenv("OCL_ICD_VENDORS");
  const char *where = env && env[0] ? env : "/etc/OpenCL/vendors";
  if (env && env[0]) printf("  note     %-14s OCL_ICD_VENDORS=%s (the loader reads only this)\n",
                            "vendors", env);
  struct stat st;
  if (stat(where, &st) != 0) {
    problem("vendors",
            env && env[0] ? "unset OCL_ICD_VENDORS or point it at a directory of .icd files"
                          : "install an OpenCL driver (Debian/Ubuntu: pocl-opencl-icd for the "
                            "CPU, or your GPU vendor's ICD package)",
            "%s does not exist", where);
    return;
  }
  if (S_ISREG(st.st_mode)) {
    check_icd(where);
    return;
  }
  DIR *d = opendir(where);
  if (!d) {
    problem("vendors", "make the directory readable", "%s cannot be read: %s", where,
            strerror(errno));
    return;
  }
  int found = 0;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".icd") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", where, e->d_name);
    found++;
    check_icd(path);
  }
  closedir(d);
  if (!found)
    problem("vendors",
            "install an OpenCL driver (Debian/Ubuntu: pocl-opencl-icd for the CPU, or your GPU "
            "vendor's ICD package), or point OCL_ICD_VENDORS at a directory with .icd files",
            "no .icd file in %s: the ICD loader will find no platform", where);
}

/* A tiny kernel (ocal's fill) compiled and run on one device, its result read back. */
static int check_device(const ocal_device_info *d) {
  char sel[32], line[512];
  snprintf(sel, sizeof sel, "%d:%d", d->platform_index, d->device_index);
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = sel;
  o.disk_cache = 0; /* the compiler must run */
  ocal_context ctx;
  ocal_status s = ocal_context_create(&o, &ctx);
  /* The options above are valid, so an invalid argument is an OCAL_* variable's value, which
   * every device would refuse alike: said once, with its own fix. */
  static int setting_said;
  if (s == OCAL_INVALID_ARGUMENT) {
    if (!setting_said++)
      problem("settings", "correct or unset the variable it names (README.md, Settings, lists "
              "the values each takes)", "%s", first_line(ocal_last_error(), line, sizeof line));
    return 0;
  }
  if (s != OCAL_OK) {
    problem("device", "update or reinstall the device's driver",
            "%s %s (%s): no context: %s", sel, d->name, d->platform_name,
            first_line(ocal_last_error(), line, sizeof line));
    return 0;
  }
  size_t n = 1000;
  float v = 1.5f, back[1000];
  ocal_buffer b = NULL;
  s = ocal_buffer_create(ctx, OCAL_F32, 1, &n, &b);
  if (s == OCAL_OK) s = ocal_buffer_fill(b, &v);
  if (s == OCAL_OK) s = ocal_buffer_read(b, 0, n, back, NULL);
  int right = s == OCAL_OK;
  for (size_t i = 0; right && i < n; i++) right = back[i] == 1.5f;
  if (s != OCAL_OK)
    problem("device", "update or reinstall the device's driver (its compiler failed)",
            "%s %s: a tiny kernel failed: %s", sel, d->name,
            first_line(ocal_last_error(), line, sizeof line));
  else if (!right)
    problem("device", "update the device's driver: it computes wrong results",
            "%s %s: a tiny kernel ran but wrote wrong values", sel, d->name);
  else
    ok("device", "%s %s (%s, %s): a kernel compiled and ran", sel, d->name,
       ocal_device_type_name(d->type), d->platform_name);
  ocal_buffer_release(b);
  ocal_context_release(ctx);
  return right;
}

/* The kernel cache directory: a file must be creatable in it. */
static void check_cache(void) {
  ocal_context ctx;
  if (ocal_context_create(NULL, &ctx) != OCAL_OK) return;
  const char *dir = NULL;
  ocal_context_get_cache_dir(ctx, &dir);
  if (!dir) {
    const char *c = getenv("OCAL_CACHE");
    if (c && c[0] == '0')
      ok("cache", "off (OCAL_CACHE=0): kernels are compiled in every process");
    else
      problem("cache", "set OCAL_CACHE_DIR (or HOME or XDG_CACHE_HOME) to a writable directory",
              "no kernel cache directory could be named: kernels are compiled in every process");
    ocal_context_release(ctx);
    return;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s", dir);
  /* Create it as ocal would (parents included), then a file in it. */
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/.ocal-doctor-%ld", dir, (long)getpid());
  FILE *f = fopen(path, "w");
  if (!f) {
    problem("cache",
            "make it writable, or set OCAL_CACHE_DIR to a writable directory (OCAL_CACHE=0 turns "
            "the cache off)",
            "the kernel cache directory %s is not writable (%s): every process compiles its "
            "kernels again", dir, strerror(errno));
  } else {
    fclose(f);
    remove(path);
    ok("cache", "%s is writable", dir);
  }
  ocal_context_release(ctx);
}

/* The optional engines, tried on the device ocal picks: a tiny FFT per engine, a GEMM. */
static void check_engines(void) {
  ocal_context ctx;
  char line[512];
  if (ocal_context_create(NULL, &ctx) != OCAL_OK) return;
  static const ocal_fft_engine engines[] = {OCAL_FFT_ENGINE_VKFFT, OCAL_FFT_ENGINE_CLFFT};
  for (size_t i = 0; i < 2; i++) {
    const char *name = ocal_fft_engine_name(engines[i]);
    int have = 0;
    ocal_fft_engine_available(engines[i], &have);
    if (!have) {
      printf("  note     %-14s %s not built in (configure did not find it)\n", "engines", name);
      continue;
    }
    ocal_fft_desc d;
    ocal_fft_desc_init(&d);
    d.engine = engines[i];
    d.lengths[0] = 8;
    ocal_fft_plan plan;
    if (ocal_fft_plan_create(ctx, &d, &plan) == OCAL_OK) {
      ok("engines", "FFT engine %s builds its kernels here", name);
      ocal_fft_plan_release(plan);
    } else {
      problem("engines", "use the other FFT engine (the default plans fall back on their own)",
              "FFT engine %s does not work on this device: %s", name,
              first_line(ocal_last_error(), line, sizeof line));
    }
  }
  size_t s2[2] = {4, 4};
  float ones[16];
  for (int i = 0; i < 16; i++) ones[i] = 1.0f;
  ocal_buffer a = NULL, b = NULL, c = NULL;
  ocal_status s = ocal_buffer_from_host(ctx, OCAL_F32, 2, s2, ones, &a);
  if (s == OCAL_OK) s = ocal_buffer_from_host(ctx, OCAL_F32, 2, s2, ones, &b);
  if (s == OCAL_OK) s = ocal_buffer_zeros(ctx, OCAL_F32, 2, s2, &c);
  if (s == OCAL_OK) s = ocal_gemm(OCAL_NO_TRANS, OCAL_NO_TRANS, 1.0, a, b, 0.0, c);
  float r[16] = {0};
  if (s == OCAL_OK) s = ocal_buffer_read(c, 0, 16, r, NULL);
  if (s == OCAL_OK && r[0] == 4.0f && r[15] == 4.0f)
    ok("engines", "GEMM works");
  else
    problem("engines", "reinstall CLBlast (libclblast-dev), or set OCAL_GEMM=ocal",
            "GEMM does not work on this device: %s",
            s == OCAL_OK ? "wrong result" : first_line(ocal_last_error(), line, sizeof line));
  ocal_buffer_release(a), ocal_buffer_release(b), ocal_buffer_release(c);
  ocal_context_release(ctx);
}

int tool_doctor(void) {
  printf("ocal doctor (ocal %s)\n", ocal_version_string());
  check_loader();
  check_vendors();
  size_t count = 0;
  ocal_status s = ocal_device_list(0, NULL, &count);
  char line[512];
  if (s != OCAL_OK) {
    problem("platforms", "see the vendors lines above; reinstall the ICD loader (ocl-icd-libopencl1)",
            "listing the platforms failed: %s", first_line(ocal_last_error(), line, sizeof line));
  } else if (count == 0) {
    problem("platforms",
            "make one of the .icd files above load (see its line), or install a driver: "
            "Debian/Ubuntu pocl-opencl-icd gives a CPU device",
            "no OpenCL platform or device is visible");
  }
  int working = 0;
  if (s == OCAL_OK && count > 0) {
    ocal_device_info *list = calloc(count, sizeof *list);
    if (list) list[0].struct_size = sizeof *list;
    if (list && ocal_device_list(count, list, &count) == OCAL_OK)
      for (size_t i = 0; i < count; i++) working += check_device(&list[i]);
    free(list);
  }
  if (working) {
    check_cache();
    check_engines();
  }
  printf("%d problem%s; %d working device%s\n", problems, problems == 1 ? "" : "s", working,
         working == 1 ? "" : "s");
  return working ? 0 : 1;
}
