/* ocal — the disk cache of compiled program binaries.
 *
 * One file per program, named by a hash of its key. The key names everything the binary
 * depends on (platform, device, driver, ocal version, source, build options) and is stored
 * whole in the file, so a hash collision or a file copied from another machine is detected.
 *
 * File layout (native byte order; a file from another byte order fails the checks):
 *   8 bytes   magic "OCALBIN1"
 *   4 bytes   key length K          8 bytes   binary length B
 *   K bytes   key                   B bytes   binary
 *   8 bytes   FNV-1a 64 checksum of everything before it
 * Anything else (truncated, corrupt, foreign) is ignored and overwritten by a fresh build.
 * Files are written to a temporary name and renamed into place, so readers never see half
 * a file, and concurrent writers of the same program leave one whole file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const char magic[8] = {'O', 'C', 'A', 'L', 'B', 'I', 'N', '1'};
/* Larger files are not ours: no compiled OpenCL program is near this size (the largest ocal
 * makes, VkFFT's on PoCL, are a few MiB). */
#define OCAL__MAX_CACHE_FILE ((uint64_t)256 << 20)

uint64_t ocal__fnv1a64(const void *data, size_t size, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = seed;
  for (size_t i = 0; i < size; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", a, b);
  return s;
}

char *ocal__disk_cache_dir(const char *dir_option, const char *env_dir) {
  if (dir_option && dir_option[0]) return ocal__strdup(dir_option);
  if (env_dir && env_dir[0]) return ocal__strdup(env_dir);
  /* The XDG and HOME conventions are the system's, not ocal's settings. */
  const char *env = getenv("XDG_CACHE_HOME");
  if (env && env[0]) return join(env, "ocal");
  env = getenv("HOME");
  if (env && env[0]) return join(env, ".cache/ocal");
  return NULL;
}

char *ocal__disk_cache_key(ocal_context ctx, const char *source, const char *options) {
  const ocal_device_info *d = &ctx->info;
  size_t len = strlen(source);
#define OCAL__KEY_FORMAT                                                               \
  "platform=%s\nplatform_version=%s\ndevice=%s\ndevice_version=%s\ndriver=%s\nocal=%s\n" \
  "options=%s\nsource_len=%zu\nsource_fnv=%016llx\n"
  unsigned long long h = ocal__fnv1a64(source, len, OCAL__FNV_SEED);
  int n = snprintf(NULL, 0, OCAL__KEY_FORMAT, d->platform_name, d->platform_version, d->name,
                   d->device_version, d->driver_version, ocal_version_string(), options, len, h);
  if (n < 0) return NULL;
  char *key = malloc((size_t)n + 1);
  if (key)
    snprintf(key, (size_t)n + 1, OCAL__KEY_FORMAT, d->platform_name, d->platform_version, d->name,
             d->device_version, d->driver_version, ocal_version_string(), options, len, h);
  return key;
}

static char *file_path(const char *dir, const char *key) {
  char name[32];
  snprintf(name, sizeof name, "%016llx.bin",
           (unsigned long long)ocal__fnv1a64(key, strlen(key), OCAL__FNV_SEED));
  return join(dir, name);
}

/* Reads a whole regular file of at most OCAL__MAX_CACHE_FILE bytes; 0 when there is none.
 *
 * The cache directory is shared with whatever else the user's account runs, so the file may
 * be anything: a FIFO would block fopen for ever (until a writer comes), a link to /dev/zero
 * or a device would read without end. So the file is opened without following a final
 * symbolic link and without blocking (O_NONBLOCK only matters for FIFOs and devices, which
 * are then refused), and only a regular file of sane size is read, with read() looping over
 * short reads and stopping at the size fstat gave: a file that shrinks meanwhile is
 * refused, one that grows is read only to that size and then fails the checksum. */
static int read_file(const char *path, unsigned char **data, size_t *size) {
  *data = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return 0;
  struct stat st;
  int ok = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uint64_t)st.st_size <= OCAL__MAX_CACHE_FILE) {
    size_t want = (size_t)st.st_size, got = 0;
    unsigned char *buf = malloc(want);
    while (buf && got < want) {
      ssize_t r = read(fd, buf + got, want - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break; /* an error, or the file shrank */
      got += (size_t)r;
    }
    if (buf && got == want) {
      *data = buf;
      *size = want;
      ok = 1;
    } else {
      free(buf);
    }
  }
  close(fd);
  return ok;
}

int ocal__disk_cache_load(const char *dir, const char *key, unsigned char **binary, size_t *size,
                          int *rejected) {
  *binary = NULL;
  *size = 0;
  *rejected = 0;
  char *path = file_path(dir, key);
  if (!path) return 0;
  unsigned char *data = NULL;
  size_t n = 0;
  struct stat st;
  int exists = lstat(path, &st) == 0; /* a dangling link counts as a file in the way */
  int ok = read_file(path, &data, &n);
  free(path);
  if (!ok) {
    *rejected = exists; /* a file that is there but cannot be read whole */
    return 0;
  }
  size_t key_len = strlen(key), header = sizeof magic + 4 + 8;
  uint32_t stored_key_len;
  uint64_t bin_len, checksum;
  ok = n >= header + 8 && memcmp(data, magic, sizeof magic) == 0;
  if (ok) {
    memcpy(&stored_key_len, data + 8, 4);
    memcpy(&bin_len, data + 12, 8);
    /* Each length is bounded by the file's size before they are added, so no overflow. */
    ok = stored_key_len == key_len && bin_len > 0 && bin_len <= n &&
         n == header + (size_t)stored_key_len + (size_t)bin_len + 8;
  }
  if (ok) {
    memcpy(&checksum, data + n - 8, 8);
    ok = checksum == ocal__fnv1a64(data, n - 8, OCAL__FNV_SEED) &&
         memcmp(data + header, key, key_len) == 0;
  }
  if (ok) {
    *binary = malloc((size_t)bin_len);
    ok = *binary != NULL;
    if (ok) {
      memcpy(*binary, data + header + key_len, (size_t)bin_len);
      *size = (size_t)bin_len;
    }
  } else {
    *rejected = 1;
  }
  free(data);
  return ok;
}

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *dir) {
  char *path = ocal__strdup(dir);
  if (!path) return -1;
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
      free(path);
      return -1;
    }
    *p = '/';
  }
  int rc = mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
  free(path);
  return rc;
}

void ocal__disk_cache_store(const char *dir, const char *key, const unsigned char *binary,
                            size_t size) {
  if (make_dirs(dir) != 0) return;
  char *path = file_path(dir, key);
  if (!path) return;
  size_t tmp_len = strlen(path) + 64;
  char *tmp = malloc(tmp_len);
  if (!tmp) {
    free(path);
    return;
  }
  static atomic_uint counter;
  snprintf(tmp, tmp_len, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));

  uint32_t key_len = (uint32_t)strlen(key);
  uint64_t bin_len = size;
  uint64_t h = ocal__fnv1a64(magic, sizeof magic, OCAL__FNV_SEED);
  h = ocal__fnv1a64(&key_len, 4, h);
  h = ocal__fnv1a64(&bin_len, 8, h);
  h = ocal__fnv1a64(key, key_len, h);
  h = ocal__fnv1a64(binary, size, h);

  /* No fsync: a file that a crash leaves short or empty fails the length and checksum
   * checks and is rebuilt, so durability buys nothing here, and each fsync cost a cold
   * process about 7.5 ms per program stored (ext4 on the build VM; 11 programs in a cold
   * `ocal demo` on PoCL: docs/measurements.md#first-calls). */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  int ok = f && fwrite(magic, sizeof magic, 1, f) == 1 && fwrite(&key_len, 4, 1, f) == 1 &&
           fwrite(&bin_len, 8, 1, f) == 1 && fwrite(key, key_len, 1, f) == 1 &&
           fwrite(binary, size, 1, f) == 1 && fwrite(&h, 8, 1, f) == 1 && fflush(f) == 0;
  if (f) {
    if (fclose(f) != 0) ok = 0;
  } else if (fd >= 0) {
    close(fd);
  }
  /* A failed write only costs a rebuild next time: never an error for the caller. */
  if (!ok || rename(tmp, path) != 0) unlink(tmp);
  free(tmp);
  free(path);
}
