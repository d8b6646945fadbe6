/* kernel_cache — what the disk cache saves: the time to get a ready kernel when the compiler
 * runs, when a second process loads it from ocal's disk cache, and from the memory cache.
 *
 *   kernel_cache [--device SELECTOR] [--repeat N]
 *
 * Each round uses a fresh cache directory. The compile is timed in this process; the disk
 * hit in a second process (this program run again, as a user's next run would be); the
 * memory hit as a second request in the same context. Set the driver's own cache off for a fair
 * compile figure (CUDA_CACHE_DISABLE=1 on NVIDIA, POCL_KERNEL_CACHE=0 on PoCL).
 * Prints one JSON object per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ocal.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Times one fill of a fresh 1000-element buffer in a fresh context on cache dir `dir`:
 * context creation excluded, kernel retrieval + launch + finish included. */
static int time_fill(const char *device, const char *dir, int requests, double *ms,
                     ocal_cache_stats *stats) {
  ocal_context_options o;
  ocal_context_options_init(&o);
  o.device = device;
  o.cache_dir = dir;
  o.disk_cache = 1;
  ocal_context ctx;
  if (ocal_context_create(&ctx, &o) != OCAL_OK) return -1;
  size_t n = 1000;
  ocal_buffer b;
  float v = 1.0f;
  int rc = ocal_buffer_create(ctx, OCAL_F32, 1, &n, &b) == OCAL_OK ? 0 : -1;
  for (int i = 0; rc == 0 && i < requests; i++) {
    double t0 = now_ms();
    if (ocal_buffer_fill(b, &v) != OCAL_OK || ocal_finish(ctx) != OCAL_OK) rc = -1;
    ms[i] = now_ms() - t0;
  }
  if (rc == 0) ocal_context_cache_stats(ctx, stats);
  if (rc != 0) fprintf(stderr, "kernel_cache: %s\n", ocal_last_error());
  ocal_buffer_release(b);
  ocal_context_release(ctx);
  return rc;
}

int main(int argc, char **argv) {
  const char *device = NULL, *second_dir = NULL, *self = argv[0];
  int repeat = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--second-process") == 0 && i + 1 < argc) {
      second_dir = argv[++i];
      continue;
    }
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = atoi(argv[++i]);
      if (repeat < 1 || repeat > 100) {
        fprintf(stderr, "kernel_cache: --repeat wants 1..100\n");
        return 2;
      }
    } else {
      fprintf(stderr, "usage: kernel_cache [--device SELECTOR] [--repeat N]\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (second_dir) {
    double ms[1];
    ocal_cache_stats st;
    if (time_fill(device, second_dir, 1, ms, &st) != 0) return 1;
    printf("%.6f %llu\n", ms[0], (unsigned long long)st.compiles);
    return 0;
  }
  ocal_device_info info;
  if (ocal_device_select(device, &info) != OCAL_OK) {
    fprintf(stderr, "kernel_cache: %s\n", ocal_last_error());
    return 1;
  }
  for (int r = 0; r < repeat; r++) {
    char dir[] = "/tmp/ocal-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) {
      perror("kernel_cache: mkdtemp");
      return 1;
    }
    double first[2];
    ocal_cache_stats s1;
    if (time_fill(device, dir, 2, first, &s1) != 0) return 1;
    /* The second process is this program again (exec'ed: an OpenCL driver's threads do not
     * survive a bare fork); it prints its time and compile count on its standard output. */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --second-process '%s' %s%s%s", self, dir,
             device ? "--device '" : "", device ? device : "", device ? "'" : "");
    FILE *child = popen(cmd, "r");
    double msg[2] = {-1, -1};
    int got = child ? fscanf(child, "%lf %lf", &msg[0], &msg[1]) : 0;
    int status = child ? pclose(child) : -1;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "kernel_cache: could not remove %s\n", dir);
    if (got != 2 || msg[0] < 0 || status != 0) {
      fprintf(stderr, "kernel_cache: the second process failed\n");
      return 1;
    }
    printf("{\"bench\":\"kernel_cache\",\"device\":\"%s\",\"driver\":\"%s\",\"round\":%d,"
           "\"compile_ms\":%.3f,\"compiles_first\":%llu,\"disk_hit_ms\":%.3f,"
           "\"compiles_second_process\":%.0f,\"memory_hit_ms\":%.3f,\"speedup_disk\":%.1f}\n",
           info.name, info.driver_version, r, first[0], (unsigned long long)s1.compiles, msg[0],
           msg[1], first[1], first[0] / msg[0]);
    fflush(stdout);
  }
  return 0;
}
