/* ocal fuzz targets — runs a target's LLVMFuzzerTestOneInput over files, without libFuzzer,
 * so that the checked-in corpus and the inputs of fixed crashes are replayed by every
 * `make check` (under AddressSanitizer in CI's sanitizer build).
 * Usage: replay_TARGET FILE|DIR...; exit 0 when every input ran (a crash ends it). */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, n = 0, got;
  uint8_t *data = malloc(cap);
  while (data && (got = fread(data + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(data, cap *= 2);
      if (!bigger) free(data);
      data = bigger;
    }
  }
  fclose(f);
  if (!data) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return 1;
  }
  LLVMFuzzerTestOneInput(data, n);
  free(data);
  return 0;
}

int main(int argc, char **argv) {
  int failed = 0, runs = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      failed = 1;
    } else if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
        failed |= run_file(path);
        runs++;
      }
      if (d) closedir(d);
    } else {
      failed |= run_file(argv[i]);
      runs++;
    }
  }
  printf("replay: %d inputs\n", runs);
  return failed;
}
