/* ocal tests — every public enum has a _name function that names each of its values.
 *
 * The test reads include/ocal/ *.h, finds every `typedef enum ... ocal_X;` and fails when
 * the headers declare no `const char *ocal_X_name(ocal_X ...)`, or when the table below has
 * no row for ocal_X, so a new enum cannot be left without a name. Each row calls the name
 * function on every value of the enum (taken from the enum's own X-macro table where it has
 * one, so new members are covered) and wants distinct, non-NULL strings, none of them the
 * answer for an out-of-range value; enums listed member by member in their header must have
 * each member in the row. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

struct value {
  int v;
  const char *name;
};

struct row {
  const char *type;
  const char *(*name_of)(int v);
  const struct value *values;
  size_t count;
};

#define V(e) {(int)(e), #e}
#define NAME_OF(t) \
  static const char *name_##t(int v) { return ocal_##t##_name((ocal_##t)v); }

NAME_OF(status)
NAME_OF(dtype)
NAME_OF(device_type)
NAME_OF(gemm_precision)
NAME_OF(transpose)
NAME_OF(blas_tuning_source)
NAME_OF(fft_kind)
NAME_OF(fft_direction)
NAME_OF(fft_norm)
NAME_OF(fft_engine)
NAME_OF(unary_op)
NAME_OF(binary_op)
NAME_OF(reduce_op)
NAME_OF(scan_op)
NAME_OF(cg_precond)
NAME_OF(lobpcg_stop)

#define STATUS_V(name, value, text) V(OCAL_##name),
#define DTYPE_V(name, lname, cltype, size) V(OCAL_##name),
#define UNARY_V(name, lname, fl) V(OCAL_UNARY_##name),
#define BINARY_V(name, lname, kind) V(OCAL_BINARY_##name),

static const struct value status_v[] = {OCAL_STATUS_MAP(STATUS_V)};
static const struct value dtype_v[] = {OCAL_DTYPE_MAP(DTYPE_V)};
static const struct value unary_op_v[] = {OCAL_UNARY_OP_MAP(UNARY_V)};
static const struct value binary_op_v[] = {OCAL_BINARY_OP_MAP(BINARY_V)};
static const struct value device_type_v[] = {V(OCAL_DEVICE_OTHER), V(OCAL_DEVICE_CPU),
                                             V(OCAL_DEVICE_GPU), V(OCAL_DEVICE_ACCELERATOR)};
static const struct value gemm_precision_v[] = {V(OCAL_GEMM_PRECISION_DEFAULT),
                                                V(OCAL_GEMM_PRECISION_FP32),
                                                V(OCAL_GEMM_PRECISION_TF32)};
static const struct value transpose_v[] = {V(OCAL_NO_TRANS), V(OCAL_TRANS)};
static const struct value blas_tuning_source_v[] = {
    V(OCAL_TUNING_DEFAULT), V(OCAL_TUNING_DISABLED), V(OCAL_TUNING_BUILTIN),
    V(OCAL_TUNING_FILE), V(OCAL_TUNING_USER)};
static const struct value fft_kind_v[] = {V(OCAL_FFT_C2C), V(OCAL_FFT_R2C), V(OCAL_FFT_C2R)};
static const struct value fft_direction_v[] = {V(OCAL_FFT_FORWARD), V(OCAL_FFT_INVERSE)};
static const struct value fft_norm_v[] = {V(OCAL_FFT_NORM_BACKWARD), V(OCAL_FFT_NORM_ORTHO),
                                          V(OCAL_FFT_NORM_FORWARD)};
static const struct value fft_engine_v[] = {V(OCAL_FFT_ENGINE_DEFAULT), V(OCAL_FFT_ENGINE_VKFFT),
                                            V(OCAL_FFT_ENGINE_CLFFT),
                                            V(OCAL_FFT_ENGINE_FOURSTEP)};
static const struct value reduce_op_v[] = {
    V(OCAL_REDUCE_SUM),    V(OCAL_REDUCE_PROD), V(OCAL_REDUCE_MIN),  V(OCAL_REDUCE_MAX),
    V(OCAL_REDUCE_ARGMIN), V(OCAL_REDUCE_ARGMAX), V(OCAL_REDUCE_MEAN), V(OCAL_REDUCE_VAR),
    V(OCAL_REDUCE_STD),    V(OCAL_REDUCE_NORM2), V(OCAL_REDUCE_DOT)};
static const struct value scan_op_v[] = {V(OCAL_SCAN_SUM), V(OCAL_SCAN_MAX)};
static const struct value cg_precond_v[] = {V(OCAL_PRECOND_NONE), V(OCAL_PRECOND_JACOBI)};
static const struct value lobpcg_stop_v[] = {
    V(OCAL_LOBPCG_CONVERGED), V(OCAL_LOBPCG_MAX_ITER), V(OCAL_LOBPCG_BASIS_RANK_LOST),
    V(OCAL_LOBPCG_RAYLEIGH_RITZ_FAILED), V(OCAL_LOBPCG_LOCKED_NOT_CONVERGED)};

#define ROW(t) {"ocal_" #t, name_##t, t##_v, sizeof t##_v / sizeof t##_v[0]}
static const struct row rows[] = {
    ROW(status),    ROW(dtype),         ROW(device_type), ROW(gemm_precision),
    ROW(transpose), ROW(blas_tuning_source), ROW(fft_kind), ROW(fft_direction),
    ROW(fft_norm),  ROW(fft_engine),    ROW(unary_op),    ROW(binary_op),
    ROW(reduce_op), ROW(scan_op),       ROW(cg_precond),  ROW(lobpcg_stop),
};
#define NROWS (sizeof rows / sizeof rows[0])

static const struct row *row_of(const char *type) {
  for (size_t i = 0; i < NROWS; i++)
    if (strcmp(rows[i].type, type) == 0) return &rows[i];
  return NULL;
}

/* Every value gets a distinct name; a value outside the enum gets a string that names none
 * of them (the "invalid" answer), not NULL. */
static void check_row(const struct row *r) {
  int lo = r->values[0].v, hi = r->values[0].v;
  for (size_t i = 0; i < r->count; i++) {
    const char *a = r->name_of(r->values[i].v);
    ck_assert_msg(a != NULL && a[0], "%s_name(%s) gave NULL or \"\"", r->type,
                  r->values[i].name);
    for (size_t j = 0; j < i; j++)
      ck_assert_msg(strcmp(a, r->name_of(r->values[j].v)) != 0,
                    "%s_name gives \"%s\" for both %s and %s", r->type, a, r->values[j].name,
                    r->values[i].name);
    if (r->values[i].v < lo) lo = r->values[i].v;
    if (r->values[i].v > hi) hi = r->values[i].v;
  }
  for (int v = lo - 3; v <= hi + 3; v++) {
    int member = 0;
    for (size_t i = 0; i < r->count; i++) member |= r->values[i].v == v;
    if (member) continue;
    const char *bad = r->name_of(v);
    ck_assert_msg(bad != NULL, "%s_name(%d), out of range, gave NULL", r->type, v);
    for (size_t i = 0; i < r->count; i++)
      ck_assert_msg(strcmp(bad, r->name_of(r->values[i].v)) != 0,
                    "%s_name(%d), out of range, gives \"%s\" as for %s", r->type, v, bad,
                    r->values[i].name);
  }
}

START_TEST(test_every_value_has_a_distinct_name) {
  for (size_t i = 0; i < NROWS; i++) check_row(&rows[i]);
}
END_TEST

/* ---- reading the headers --------------------------------------------------------------- */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
  text[n] = '\0';
  fclose(f);
  /* Comments become blanks, so that a member's documentation is not read as code. */
  for (char *p = text; *p; p++) {
    if (p[0] == '/' && p[1] == '*') {
      char *end = strstr(p + 2, "*/");
      char *stop = end ? end + 2 : p + strlen(p);
      for (; p < stop; p++)
        if (*p != '\n') *p = ' ';
      p--;
    } else if (p[0] == '/' && p[1] == '/') {
      for (; *p && *p != '\n'; p++) *p = ' ';
      p--;
    }
  }
  return text;
}

static int is_ident(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The members the enum's body names one by one ("OCAL_FFT_C2C = 0,"); lines of the
 * preprocessor and X-macro expansions are left to the row, which uses the same macro. */
static void check_members(const char *header, const char *type, const struct row *r,
                          const char *body, size_t len) {
  char *copy = malloc(len + 1);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, body, len);
  copy[len] = '\0';
  for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    while (*line == ' ' || *line == '\t') line++;
    if (*line == '#' || strchr(line, '(')) continue;
    for (char *item = line; *item;) {
      while (*item == ' ' || *item == ',') item++;
      char *end = item;
      while (is_ident(*end)) end++;
      if (end == item) break;
      char member[128];
      snprintf(member, sizeof member, "%.*s", (int)(end - item), item);
      size_t mlen = strlen(member);
      int counter = mlen > 6 && strcmp(member + mlen - 6, "_COUNT") == 0;
      if (!counter) {
        int found = 0;
        for (size_t i = 0; i < r->count; i++) found |= strcmp(r->values[i].name, member) == 0;
        ck_assert_msg(found, "%s: %s has member %s, which tests/check_enum_names.c's row for "
                      "it lacks", header, type, member);
      }
      item = strchr(end, ',');
      if (!item) break;
    }
  }
  free(copy);
}

START_TEST(test_every_enum_has_a_name_function) {
  DIR *dir = opendir(OCAL_PUBLIC_HEADER_DIR);
  ck_assert_msg(dir != NULL, "cannot open %s", OCAL_PUBLIC_HEADER_DIR);
  /* All headers first: a name function may be declared in a header other than its enum's. */
  char *texts[64], names[64][256];
  size_t nheaders = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 3 || strcmp(de->d_name + len - 2, ".h") != 0) continue;
    ck_assert_uint_lt(nheaders, 64);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", OCAL_PUBLIC_HEADER_DIR, de->d_name);
    texts[nheaders] = read_text(path);
    snprintf(names[nheaders++], sizeof names[0], "%s", de->d_name);
  }
  closedir(dir);

  int enums = 0;
  for (size_t h = 0; h < nheaders; h++) {
    for (const char *p = texts[h]; (p = strstr(p, "typedef enum")) != NULL;) {
      const char *open = strchr(p, '{');
      ck_assert_ptr_nonnull(open);
      const char *close = strchr(open, '}');
      ck_assert_ptr_nonnull(close);
      const char *t = close + 1;
      while (*t == ' ' || *t == '\n') t++;
      const char *t_end = t;
      while (is_ident(*t_end)) t_end++;
      char type[128];
      snprintf(type, sizeof type, "%.*s", (int)(t_end - t), t);
      ck_assert_msg(strncmp(type, "ocal_", 5) == 0, "%s: an enum typedef'd as '%s'",
                    names[h], type);
      enums++;

      char decl[300];
      snprintf(decl, sizeof decl, "const char *%s_name(%s ", type, type);
      int declared = 0;
      for (size_t g = 0; g < nheaders; g++) declared |= strstr(texts[g], decl) != NULL;
      ck_assert_msg(declared, "%s declares the enum %s but no header declares "
                    "'OCAL_API const char *%s_name(%s value)': every public enum has one",
                    names[h], type, type, type);

      /* libocal-mpi's names are in that library, which this program does not link. */
      const struct row *r = row_of(type);
      if (strcmp(names[h], "mpi.h") != 0) {
        ck_assert_msg(r != NULL, "%s: the enum %s has no row in tests/check_enum_names.c: "
                      "add one that lists its values", names[h], type);
        check_members(names[h], type, r, open + 1, (size_t)(close - open - 1));
      }
      p = close;
    }
  }
  for (size_t h = 0; h < nheaders; h++) {
    free(texts[h]);
  }
  /* A read of the directory that found fewer went wrong. */
  ck_assert_int_ge(enums, 16);
}
END_TEST

int main(void) {
  Suite *s = suite_create("enum_names");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_every_value_has_a_distinct_name);
  tcase_add_test(tc, test_every_enum_has_a_name_function);
  suite_add_tcase(s, tc);
  return fixture_run(s);
}
