/* ocal — the settings module: every OCAL_* environment variable the library reads, read and
 * validated in one place (settings.c), never installed.
 *
 * When: ocal_context_create reads every variable once, before it picks the device, into the
 * context's settings (ctx->settings); the areas read those fields, never getenv, so a context
 * keeps the values it was created with and a change of the environment takes effect at the
 * next ocal_context_create. ocal_device_select reads OCAL_DEVICE the same way when it is
 * given no selector.
 *
 * Precedence: a field of ocal_context_options set by the caller (or a field of a plan or
 * matrix description that names an engine) wins over the environment variable, which wins
 * over the built-in default.
 *
 * Errors: a value the library does not accept fails the call that reads it (usually
 * ocal_context_create) with OCAL_INVALID_ARGUMENT and a message naming the variable, the value
 * and the values accepted; nothing is taken silently for the default. */
#ifndef OCAL_SETTINGS_H
#define OCAL_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "ocal/status.h"

/* Word values of the engine settings. */
enum {
  OCAL__ENGINE_AUTO = 0,
  OCAL__ENGINE_OWN = 1,
  OCAL__ENGINE_CLBLAST = 2,
  OCAL__ENGINE_TC = 3,
  OCAL__ENGINE_WGMMA = 4
};
enum { OCAL__FFT_ENV_DEFAULT = 0, OCAL__FFT_ENV_VKFFT = 1, OCAL__FFT_ENV_CLFFT = 2 };
/* Word values of OCAL_SCAN. */
/* WALK: the single pass built so that look-backs walk far (tests: docs/scan.md#testing). */
enum { OCAL__SCAN_AUTO = 0, OCAL__SCAN_SINGLE = 1, OCAL__SCAN_THREE = 2, OCAL__SCAN_WALK = 3 };
/* Word values of OCAL_COPY: device-to-device copies by ocal's kernel on GPUs (auto), always,
 * or never (the driver's clEnqueueCopyBuffer). */
enum { OCAL__COPY_AUTO = 0, OCAL__COPY_KERNEL = 1, OCAL__COPY_DRIVER = 2 };
/* OCAL_FFT_FOURSTEP: the four-step kernels offered by the device rule, then measured against
 * VkFFT (auto); never; for every shape they take; for every shape they take, measured. */
enum {
  OCAL__FOURSTEP_AUTO = -1,
  OCAL__FOURSTEP_OFF = 0,
  OCAL__FOURSTEP_ON = 1,
  OCAL__FOURSTEP_MEASURE = 2
};
/* OCAL_SPMV_LOADS: auto (src/sparse/spmv.c's load_hints), plain loads, or NVIDIA PTX cache
 * hints on the stream and merge kernels' loads: cs = the matrix's indices and values
 * streamed (evict first), nc = x through the non-coherent (texture) path, cg = x cached in
 * L2 only. */
enum {
  OCAL__SPMV_LOADS_AUTO = 0,
  OCAL__SPMV_LOADS_PLAIN = 1,
  OCAL__SPMV_LOADS_CS = 2,
  OCAL__SPMV_LOADS_NC = 3,
  OCAL__SPMV_LOADS_CG = 4,
  OCAL__SPMV_LOADS_CS_NC = 5,
  OCAL__SPMV_LOADS_CS_CG = 6
};

typedef struct ocal__settings {
  /* Flags: -1 unset (or "auto": the default), 0 off, 1 on. Byte sizes and integers: -1 or 0
   * unset as noted. Strings: "" unset. */
  char device[256];         /* OCAL_DEVICE: device selector */
  char cache_dir[4096];     /* OCAL_CACHE_DIR: disk cache directory */
  int cache;                /* OCAL_CACHE: disk cache of compiled programs on/off */
  char limits[256];         /* OCAL_LIMITS: "key=value,..." or a profile name */
  int fp64;                 /* OCAL_FP64 */
  int pool;                 /* OCAL_POOL */
  int64_t pool_limit;       /* OCAL_POOL_LIMIT, bytes, -1 unset */
  int64_t memory_limit;     /* OCAL_MEMORY_LIMIT, bytes, -1 unset */
  int staging;              /* OCAL_STAGING */
  int64_t staging_min;      /* OCAL_STAGING_MIN, bytes, -1 unset */
  int64_t staging_chunk;    /* OCAL_STAGING_CHUNK, bytes, -1 unset */
  long staging_threads;     /* OCAL_STAGING_THREADS, 0 unset */
  int tuning;               /* OCAL_TUNING: apply stored GEMM tuning */
  int gemm;                 /* OCAL_GEMM: OCAL__ENGINE_* */
  int gemm_precision;       /* OCAL_GEMM_PRECISION (or the option): OCAL_GEMM_PRECISION_FP32/TF32 */
  int gemm_tc_emulate;      /* OCAL_GEMM_TC_EMULATE (tests only): -1 unset, 0, 1 */
  int gemm_pretranspose;    /* OCAL_GEMM_PRETRANSPOSE: -1 the rule, 0, 1 */
  long gemm_splitk;         /* OCAL_GEMM_SPLITK: -1 the rule, 0 never, N >= 2 always N */
  unsigned gemm_own_tile[5];/* OCAL_GEMM_OWN_TILE: BM, BN, BK, TM, TN; all 0 unset */
  long gemm_own_splitk;     /* OCAL_GEMM_OWN_SPLITK: 0 the rule, N >= 1 */
  int gemv;                 /* OCAL_GEMV: OCAL__ENGINE_* */
  int fft;                  /* OCAL_FFT: OCAL__FFT_ENV_* */
  int fft_fourstep;         /* OCAL_FFT_FOURSTEP: OCAL__FOURSTEP_* */
  char fft_fourstep_tune[128]; /* OCAL_FFT_FOURSTEP_TUNE: "key=value,..." */
  char vkfft_tune[384];     /* OCAL_VKFFT_TUNE: "field=value,..." */
  char spmv[16];            /* OCAL_SPMV: a kernel name, "" for the rule */
  int spmv_loads;           /* OCAL_SPMV_LOADS: OCAL__SPMV_LOADS_*, cache hints of the SpMV loads */
  int scan;                 /* OCAL_SCAN: OCAL__SCAN_*, the plan of long contiguous scans */
  int copy;                 /* OCAL_COPY: OCAL__COPY_*, how ocal_buffer_copy moves memory */
  char reduce_tune[128];    /* OCAL_REDUCE_TUNE: "key=value,..." */
  /* libocal-mpi's settings: validated with the others, read by libocal-mpi through the
   * public ocal_setting_get (it is a library of its own, over the public API). */
  int64_t mpi_chunk;        /* OCAL_MPI_CHUNK, bytes, -1 unset */
  long mpi_slots;           /* OCAL_MPI_SLOTS, 0 unset */
  int mpi_async;            /* OCAL_MPI_ASYNC */
  int mpi_quiet;            /* OCAL_MPI_QUIET */
  int mpi_shared;           /* OCAL_MPI_SHARED: the node-local shared-memory path */
  int64_t mpi_small;        /* OCAL_MPI_SMALL, bytes, -1 unset */
  long mpi_node_size;       /* OCAL_MPI_NODE_SIZE (tests only), 0 unset */
  int mpi_shared_fault;     /* OCAL_MPI_SHARED_FAULT (tests only): 0 none, 1 window, 2 speed */
} ocal__settings;

/* Reads and validates every variable into *s; on a bad value returns OCAL_INVALID_ARGUMENT
 * with the message described above, naming `func`. */
ocal_status ocal__settings_read(ocal__settings *s, const char *func);

/* Reads and validates one variable into its field of *s (the other fields are left as they
 * are), for the few public calls that take no context: ocal_device_select (OCAL_DEVICE) and
 * ocal_fft_get_default_engine (OCAL_FFT). */
ocal_status ocal__settings_read_one(const char *name, ocal__settings *s, const char *func);

/* The parsers, one per kind of value; each returns 0 on success, -1 when the text is not of
 * that kind. Shared with the tools (through the white-box tests) and the fuzz target. */
int ocal__parse_flag(const char *text, int *out);           /* 1/0, on/off, yes/no, true/false, auto (-1) */
int ocal__parse_bytes(const char *text, uint64_t *out);     /* digits with K, M, G or T (KiB, MB, ...) */
int ocal__parse_long(const char *text, long lo, long hi, long *out); /* decimal in [lo, hi] */
/* A word of a '|'-separated list (case-insensitive): its index, or -1. */
int ocal__parse_word(const char *text, const char *words);
/* "key=integer,..." with every key one of the '|'-separated `keys`: 0, or -1 with the
 * offending item copied into bad. Area code reads the pairs with ocal__kv_next. */
int ocal__parse_kv(const char *text, const char *keys, char *bad, size_t bad_size);
/* Steps through "key=integer,..." text checked by ocal__parse_kv: copies the next key into
 * key, its value into *value and returns 1; 0 at the end. */
int ocal__kv_next(const char **cursor, char *key, size_t key_size, long long *value);

/* The variables the module knows (for tests/check_settings.c and the README's table): the
 * name of variable i (NULL past the last), its kind ("flag", "word", "bytes", "integer",
 * "key=value list", "text") and the values it accepts, as error messages list them. */
extern const size_t ocal__setting_count;
const char *ocal__setting_describe(size_t i, const char **kind, const char **accepted);

#endif /* OCAL_SETTINGS_H */
