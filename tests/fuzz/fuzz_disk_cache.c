/* Fuzz target: the kernel disk cache's reader (ocal__disk_cache_load), which must refuse
 * every file that is not a whole, checksummed entry for the key asked for, and its writer
 * (ocal__disk_cache_store), whose entries must read back exactly. The GEMM tuning files
 * (src/blas/tuning.c) are entries of the same format.
 * Input: a mode byte, then
 *   mode 0: the file's bytes as they are;
 *   mode 1: the file less its magic and checksum, which the harness adds, so that the
 *           fuzzer reaches the length and key checks behind the checksum;
 *   mode 2: a binary that is stored, then loaded: it must come back unchanged. */
#include <unistd.h>

#include "fuzz.h"
#include "internal.h"

static const char key[] = "fuzz: platform|device|driver|ocal|source-hash|options";
static char dir[64];
static char path[128];

static void cleanup(void) {
  unlink(path);
  rmdir(dir);
}

/* In /dev/shm where there is one: the writer syncs every file it stores, which costs a disk
 * write per input elsewhere. */
static void setup(void) {
  if (dir[0]) return;
  snprintf(dir, sizeof dir, "%s/ocal-fuzz-cache.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(dir)) abort();
  snprintf(path, sizeof path, "%s/%016llx.bin", dir,
           (unsigned long long)ocal__fnv1a64(key, strlen(key), OCAL__FNV_SEED));
  atexit(cleanup);
}

static void write_file(const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
                       const uint8_t *c, size_t nc) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if ((na && fwrite(a, na, 1, f) != 1) || (nb && fwrite(b, nb, 1, f) != 1) ||
      (nc && fwrite(c, nc, 1, f) != 1))
    abort();
  fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  if (size < 1) return 0;
  int mode = data[0] % 3;
  data++;
  size--;
  unlink(path);
  if (mode == 0) {
    write_file(data, size, NULL, 0, NULL, 0);
  } else if (mode == 1) {
    static const uint8_t magic[8] = {'O', 'C', 'A', 'L', 'B', 'I', 'N', '1'};
    uint64_t h = ocal__fnv1a64(magic, 8, OCAL__FNV_SEED);
    h = ocal__fnv1a64(data, size, h);
    write_file(magic, 8, data, size, (const uint8_t *)&h, 8);
  } else if (size > 0) {
    ocal__disk_cache_store(dir, key, data, size);
  }

  unsigned char *bin = NULL;
  size_t n = 0;
  int rejected = -1;
  int ok = ocal__disk_cache_load(dir, key, &bin, &n, &rejected);
  FUZZ_ASSERT(rejected == 0 || rejected == 1);
  if (ok) {
    FUZZ_ASSERT(bin != NULL && n > 0 && !rejected);
  } else {
    FUZZ_ASSERT(bin == NULL && n == 0);
  }
  if (mode == 2 && size > 0) {
    FUZZ_ASSERT(ok);
    FUZZ_ASSERT(n == size && memcmp(bin, data, n) == 0);
  }
  free(bin);
  return 0;
}
