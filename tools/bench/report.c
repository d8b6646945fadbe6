/* What is made of a run's records: the JSON results file (written and read back), the
 * Markdown table, the comparison against another results file, and gnuplot charts. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

/* ---- writing -------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* Numbers with enough digits to compare, and never NaN or infinity (not JSON). */
static void json_number(FILE *f, double v) {
  if (!isfinite(v)) v = 0;
  fprintf(f, "%.6g", v);
}

void bench_record_json(FILE *f, const bench_record *rec) {
  const char *keys[] = {"suite", "op", "dtype", "size"};
  const char *vals[] = {rec->suite, rec->op, rec->dtype, rec->size};
  fputc('{', f);
  for (int i = 0; i < 4; i++) {
    fprintf(f, "%s\"%s\":", i ? "," : "", keys[i]);
    json_string(f, vals[i]);
  }
  fputs(",\"n\":", f);
  json_number(f, rec->n);
  fputs(",\"metric\":", f);
  json_string(f, rec->metric);
  fputs(",\"value\":", f);
  json_number(f, rec->value);
  fputs(",\"unit\":", f);
  json_string(f, rec->unit);
  if (rec->ratio_to_copy >= 0) {
    fputs(",\"ratio_to_copy\":", f);
    json_number(f, rec->ratio_to_copy);
  }
  if (rec->us >= 0) {
    fputs(",\"us\":", f);
    json_number(f, rec->us);
  }
  if (rec->note[0]) {
    fputs(",\"note\":", f);
    json_string(f, rec->note);
  }
  fputc('}', f);
}

int bench_write_json(const bench_results *res, const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) {
    fprintf(stderr, "ocal bench: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  const char *keys[] = {"impl", "ocal_version", "device", "platform", "driver", "date"};
  const char *vals[] = {res->impl, res->version, res->device, res->platform, res->driver, res->date};
  fputs("{\"format\": \"ocal-bench-1\"", f);
  for (int i = 0; i < 6; i++) {
    fprintf(f, ", \"%s\": ", keys[i]);
    json_string(f, vals[i]);
  }
  fprintf(f, ", \"quick\": %s,\n \"records\": [", res->quick ? "true" : "false");
  for (size_t i = 0; i < res->count; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    bench_record_json(f, &res->recs[i]);
  }
  fputs("]}\n", f);
  int bad = ferror(f);
  if (f != stdout && fclose(f) != 0) bad = 1;
  if (bad) fprintf(stderr, "ocal bench: writing %s failed\n", path);
  return bad;
}

/* ---- reading: a small JSON parser, enough for results files --------------------------- */

typedef struct parser {
  const char *p, *end;
  const char *error;
} parser;

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && isspace((unsigned char)*ps->p)) ps->p++;
}

static int expect(parser *ps, char c) {
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return 1;
  }
  if (!ps->error) ps->error = "unexpected character";
  return 0;
}

/* Reads a string into out (cut to cap, escapes decoded; \u keeps ASCII only). */
static int parse_string(parser *ps, char *out, size_t cap) {
  if (!expect(ps, '"')) return 0;
  size_t k = 0;
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if (c == '\\') {
      if (ps->p >= ps->end) break;
      c = *ps->p++;
      switch (c) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          unsigned v = 0;
          for (int i = 0; i < 4; i++) {
            if (ps->p >= ps->end || !isxdigit((unsigned char)*ps->p)) {
              ps->error = "bad \\u escape";
              return 0;
            }
            char h = *ps->p++;
            v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : tolower(h) - 'a' + 10);
          }
          c = v < 0x80 ? (char)v : '?';
          break;
        }
        default: break; /* \" \\ \/ */
      }
    }
    if (out && k + 1 < cap) out[k++] = c;
  }
  if (out && cap) out[k] = '\0';
  if (ps->p >= ps->end) {
    ps->error = "unterminated string";
    return 0;
  }
  ps->p++;
  return 1;
}

static int parse_number(parser *ps, double *v) {
  skip_ws(ps);
  char *end;
  errno = 0;
  *v = strtod(ps->p, &end);
  if (end == ps->p || end > ps->end) {
    ps->error = "expected a value";
    return 0;
  }
  ps->p = end;
  return 1;
}

static int parse_value(parser *ps, int depth);

/* Reads a list ('[' items ']') or an object ('{' "key": items '}'): item() reads one element
 * (key is NULL in a list) and returns 1, 0 on an error, or -1 to have the value skipped. */
typedef int (*item_fn)(parser *ps, const char *key, void *ctx);

static int parse_seq(parser *ps, char open, char close, item_fn item, void *ctx) {
  if (!expect(ps, open)) return 0;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return 1;
  }
  for (;;) {
    char key[32];
    if (open == '{' && (!parse_string(ps, key, sizeof key) || !expect(ps, ':'))) return 0;
    int got = item(ps, open == '{' ? key : NULL, ctx);
    if (got == 0 || (got < 0 && !parse_value(ps, 2))) return 0;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    return expect(ps, close);
  }
}

static int skip_item(parser *ps, const char *key, void *ctx) {
  (void)key;
  return parse_value(ps, *(int *)ctx + 1);
}

/* Skips any value, checking its syntax. */
static int parse_value(parser *ps, int depth) {
  skip_ws(ps);
  if (ps->p >= ps->end) {
    ps->error = "unexpected end";
    return 0;
  }
  if (depth > 32) {
    ps->error = "nested too deep";
    return 0;
  }
  char c = *ps->p;
  if (c == '{') return parse_seq(ps, '{', '}', skip_item, &depth);
  if (c == '[') return parse_seq(ps, '[', ']', skip_item, &depth);
  if (c == '"') return parse_string(ps, NULL, 0);
  static const char *words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t len = strlen(words[i]);
    if ((size_t)(ps->end - ps->p) >= len && strncmp(ps->p, words[i], len) == 0) {
      ps->p += len;
      return 1;
    }
  }
  double v;
  return parse_number(ps, &v);
}

/* A known key: text into a fixed buffer, or a number. */
typedef struct field {
  const char *name;
  char *text;
  size_t cap;
  double *num;
} field;

static int parse_field(parser *ps, const char *key, const field *fields, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(key, fields[i].name) == 0)
      return fields[i].text ? parse_string(ps, fields[i].text, fields[i].cap)
                            : parse_number(ps, fields[i].num);
  return -1;
}

static int record_member(parser *ps, const char *key, void *ctx) {
  bench_record *rec = ctx;
  const field fields[] = {{"suite", rec->suite, sizeof rec->suite, NULL},
                          {"op", rec->op, sizeof rec->op, NULL},
                          {"dtype", rec->dtype, sizeof rec->dtype, NULL},
                          {"size", rec->size, sizeof rec->size, NULL},
                          {"metric", rec->metric, sizeof rec->metric, NULL},
                          {"unit", rec->unit, sizeof rec->unit, NULL},
                          {"note", rec->note, sizeof rec->note, NULL},
                          {"n", NULL, 0, &rec->n},
                          {"value", NULL, 0, &rec->value},
                          {"ratio_to_copy", NULL, 0, &rec->ratio_to_copy},
                          {"us", NULL, 0, &rec->us}};
  return parse_field(ps, key, fields, sizeof fields / sizeof fields[0]);
}

/* One element of the records list: an object with at least suite, op and metric. */
static int record_item(parser *ps, const char *key, void *ctx) {
  (void)key;
  bench_record rec;
  memset(&rec, 0, sizeof rec);
  rec.ratio_to_copy = rec.us = -1;
  if (!parse_seq(ps, '{', '}', record_member, &rec)) return 0;
  if (!rec.suite[0] || !rec.op[0] || !rec.metric[0]) {
    ps->error = "a record lacks suite, op or metric";
    return 0;
  }
  if (bench_results_push(ctx, &rec)) {
    ps->error = "out of memory";
    return 0;
  }
  return 1;
}

typedef struct results_ctx {
  bench_results *res;
  int have_records;
} results_ctx;

static int results_member(parser *ps, const char *key, void *ctx) {
  results_ctx *c = ctx;
  bench_results *res = c->res;
  const field fields[] = {{"impl", res->impl, sizeof res->impl, NULL},
                          {"ocal_version", res->version, sizeof res->version, NULL},
                          {"device", res->device, sizeof res->device, NULL},
                          {"platform", res->platform, sizeof res->platform, NULL},
                          {"driver", res->driver, sizeof res->driver, NULL},
                          {"date", res->date, sizeof res->date, NULL}};
  if (strcmp(key, "records") == 0) {
    c->have_records = 1;
    return parse_seq(ps, '[', ']', record_item, res);
  }
  if (strcmp(key, "quick") == 0) {
    skip_ws(ps);
    res->quick = ps->p < ps->end && *ps->p == 't';
    return -1; /* the value itself is checked by the skipper */
  }
  return parse_field(ps, key, fields, sizeof fields / sizeof fields[0]);
}

static int parse_results(parser *ps, bench_results *res) {
  results_ctx c = {res, 0};
  if (!parse_seq(ps, '{', '}', results_member, &c)) return 0;
  skip_ws(ps);
  if (ps->p != ps->end) ps->error = "text after the results object";
  if (!c.have_records && !ps->error) ps->error = "no \"records\" list";
  return ps->error == NULL;
}

int bench_load_json(const char *path, bench_results *res) {
  memset(res, 0, sizeof *res);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "ocal bench: cannot read %s: %s\n", path, strerror(errno));
    return 1;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  size_t got;
  while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *grown = realloc(text, cap *= 2);
      if (!grown) {
        free(text);
        text = NULL;
      }
      text = grown;
    }
  }
  fclose(f);
  if (!text) {
    fprintf(stderr, "ocal bench: out of memory reading %s\n", path);
    return 1;
  }
  parser ps = {text, text + len, NULL};
  int ok = parse_results(&ps, res);
  if (!ok) {
    fprintf(stderr, "ocal bench: %s is not an ocal-bench results file: %s at byte %ld\n", path,
            ps.error ? ps.error : "syntax error", (long)(ps.p - text));
    bench_results_free(res);
  }
  free(text);
  return ok ? 0 : 1;
}

/* ---- Markdown and comparisons --------------------------------------------------------- */

static const bench_record *find_match(const bench_results *peer, const bench_record *rec) {
  for (size_t i = 0; peer && i < peer->count; i++) {
    const bench_record *o = &peer->recs[i];
    if (!strcmp(o->suite, rec->suite) && !strcmp(o->op, rec->op) &&
        !strcmp(o->dtype, rec->dtype) && !strcmp(o->size, rec->size) &&
        !strcmp(o->metric, rec->metric))
      return o;
  }
  return NULL;
}

/* > 1 when this run is faster: rates divide this by the other, times the other by this. */
static double speed_ratio(const bench_record *mine, const bench_record *other) {
  int is_time = !strcmp(mine->unit, "us") || !strcmp(mine->unit, "ms") ||
                !strcmp(mine->unit, "s");
  double a = is_time ? other->value : mine->value, b = is_time ? mine->value : other->value;
  return b > 0 ? a / b : 0;
}

static const char *label_of(const bench_results *res) {
  return res->impl[0] ? res->impl : "other";
}

int bench_write_markdown(const bench_results *res, const bench_results *peer, const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) {
    fprintf(stderr, "ocal bench: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  fprintf(f, "Device: **%s** (%s, driver %s); %s %s; %s%s.\n\n", res->device, res->platform,
          res->driver, res->impl, res->version, res->date, res->quick ? "; quick sizes" : "");
  if (peer)
    fprintf(f, "Compared with: **%s** on %s (%s); speed ratio > 1 means %s is faster.\n\n",
            label_of(peer), peer->device, peer->date, label_of(res));
  fprintf(f, "| suite | op | dtype | size | metric | %s | unit | vs copy |%s\n", label_of(res),
          peer ? " peer | speed ratio |" : "");
  fprintf(f, "|---|---|---|---|---|---:|---|---:|%s\n", peer ? "---:|---:|" : "");
  for (size_t i = 0; i < res->count; i++) {
    const bench_record *r = &res->recs[i];
    char ratio[32] = "", other[32] = "", speed[32] = "";
    if (r->ratio_to_copy >= 0) snprintf(ratio, sizeof ratio, "%.2f", r->ratio_to_copy);
    const bench_record *o = find_match(peer, r);
    if (o) {
      snprintf(other, sizeof other, "%.4g", o->value);
      snprintf(speed, sizeof speed, "%.2f", speed_ratio(r, o));
    }
    fprintf(f, "| %s | %s | %s | %s | %s | %.4g | %s | %s |", r->suite, r->op, r->dtype,
            r->size, r->metric, r->value, r->unit, ratio);
    if (peer) fprintf(f, " %s | %s |", o ? other : "—", o ? speed : "—");
    fputc('\n', f);
  }
  int bad = ferror(f);
  if (f != stdout && fclose(f) != 0) bad = 1;
  if (bad) fprintf(stderr, "ocal bench: writing %s failed\n", path);
  return bad;
}

int bench_print_compare(const bench_results *res, const bench_results *peer, const char *path) {
  printf("comparison: this run (%s on %s) against %s (%s on %s)\n", label_of(res), res->device,
         path, label_of(peer), peer->device);
  printf("speed ratio > 1: this run is faster (rates: this/other; times: other/this)\n");
  size_t matched = 0;
  double log_sum = 0;
  for (size_t i = 0; i < res->count; i++) {
    const bench_record *r = &res->recs[i];
    const bench_record *o = find_match(peer, r);
    if (!o) {
      printf("%-11s %-14s %-4s %-16s %-14s %10.4g %-7s  (not in %s)\n", r->suite, r->op,
             r->dtype, r->size, r->metric, r->value, r->unit, path);
      continue;
    }
    double ratio = speed_ratio(r, o);
    printf("%-11s %-14s %-4s %-16s %-14s %10.4g %-7s vs %10.4g  ratio %.3f\n", r->suite, r->op,
           r->dtype, r->size, r->metric, r->value, r->unit, o->value, ratio);
    if (ratio > 0) {
      matched++;
      log_sum += log(ratio);
    }
  }
  printf("%zu of %zu figures matched; geometric mean speed ratio %.3f\n", matched, res->count,
         matched ? exp(log_sum / (double)matched) : 0.0);
  return 0;
}

/* ---- charts --------------------------------------------------------------------------- */

typedef struct chart {
  const char *file, *title, *ylabel, *xlabel;
  const char *suite, *metric; /* records drawn */
  const char *only_op;        /* NULL: every op with two points or more */
  int filter;                 /* 1: GEMM sizes NxNxN only; 2: 1-D FFTs only */
} chart;

static int chart_takes(const chart *c, const bench_record *r) {
  if (strcmp(r->suite, c->suite) || strcmp(r->metric, c->metric) || r->n <= 0) return 0;
  if (c->only_op && strcmp(r->op, c->only_op) != 0) return 0;
  size_t m = 0, n = 0, k = 0;
  if (c->filter == 1 && (sscanf(r->size, "%zux%zux%zu", &m, &n, &k) != 3 || m != n || n != k))
    return 0;
  /* The SGEMM chart is FP32's: the tf32 rows (TF32 precision) would join its series. */
  if (c->filter == 1 && strcmp(r->dtype, "f32") != 0) return 0;
  if (c->filter == 2 && strncmp(r->size, "2d:", 3) == 0) return 0;
  return 1;
}

/* How many sizes op has on the chart in res. */
static int series_points(const bench_results *res, const chart *c, const char *op) {
  int n = 0;
  for (size_t i = 0; i < res->count; i++) {
    if (chart_takes(c, &res->recs[i]) && !strcmp(res->recs[i].op, op)) n++;
  }
  return n;
}

/* Appends one data block per series (op) of res, and returns how many. */
static int emit_series(FILE *gp, const bench_results *res, const chart *c, const char *tag,
                       char names[][40], int max) {
  int count = 0;
  for (size_t i = 0; i < res->count && count < max; i++) {
    const bench_record *r = &res->recs[i];
    if (!chart_takes(c, r)) continue;
    int first = 1;
    for (size_t j = 0; j < i; j++)
      if (chart_takes(c, &res->recs[j]) && !strcmp(res->recs[j].op, r->op)) first = 0;
    if (!first || series_points(res, c, r->op) < 2) continue; /* lines, not lone dots */
    fprintf(gp, "$%s%d << EOD\n", tag, count);
    for (size_t j = i; j < res->count; j++) {
      const bench_record *q = &res->recs[j];
      if (chart_takes(c, q) && !strcmp(q->op, r->op))
        fprintf(gp, "%.9g %.9g\n", q->n, q->value);
    }
    fprintf(gp, "EOD\n");
    snprintf(names[count++], 40, "%s", r->op);
  }
  return count;
}

/* The copy ceiling of a results file as a data block, if it has one. */
static int emit_copy(FILE *gp, const bench_results *res, const char *tag) {
  chart copy = {NULL, NULL, NULL, NULL, "bandwidth", "bandwidth", "copy", 0};
  if (series_points(res, &copy, "copy") < 2) return 0;
  fprintf(gp, "$%s << EOD\n", tag);
  for (size_t j = 0; j < res->count; j++) {
    const bench_record *q = &res->recs[j];
    if (!strcmp(q->suite, "bandwidth") && !strcmp(q->op, "copy") &&
        !strcmp(q->metric, "bandwidth"))
      fprintf(gp, "%.9g %.9g\n", q->n, q->value);
  }
  fprintf(gp, "EOD\n");
  return 1;
}

static void gp_quoted(FILE *gp, const char *s) {
  fputc('"', gp);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', gp);
    fputc(*s, gp);
  }
  fputc('"', gp);
}

int bench_plot(const bench_results *res, const bench_results *peer, const char *dir) {
  if (system("gnuplot --version > /dev/null 2>&1") != 0) {
    fprintf(stderr, "ocal bench: --plot needs gnuplot, which is not installed or not on PATH "
                    "(Debian: apt-get install gnuplot-nox; scripts/install-deps.sh does)\n");
    return 1;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "ocal bench: cannot make %s: %s\n", dir, strerror(errno));
    return 1;
  }
  static const chart charts[] = {
      {"elementwise.png", "Elementwise operations (f32)", "GB/s (bytes read + written)",
       "elements", "elementwise", "bandwidth", NULL, 0},
      {"reduce.png", "Reductions and scans (f32)", "GB/s (bytes read; scans + written)",
       "elements", "reduce", "bandwidth", NULL, 0},
      {"gemm.png", "Square SGEMM (FP32)", "GFLOP/s", "matrix side N (N x N x N)", "gemm",
       "gflops", "gemm_nn", 1},
      {"fft.png", "FFT, single-precision C2C forward", "GFLOP/s (5 N log2 N)",
       "points per transform (1-D, batched)", "fft", "gflops", NULL, 2},
  };
  char script[4096];
  snprintf(script, sizeof script, "%s/charts.gp", dir);
  FILE *gp = fopen(script, "w");
  if (!gp) {
    fprintf(stderr, "ocal bench: cannot write %s: %s\n", script, strerror(errno));
    return 1;
  }
  fprintf(gp, "# Made by ocal bench --plot; run again with: gnuplot charts.gp\n"
              "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "  set terminal pngcairo size 960,600 font ',11'\n"
              "} else {\n"
              "  set terminal png size 960,600\n"
              "}\n"
              "set termoption noenhanced\nset yrange [0:*]\nset grid\nset key outside right top\n"
              "set logscale x 2\nset format x '2^%%L'\n");
  int have_copy = emit_copy(gp, res, "copy"), have_peer_copy = peer && emit_copy(gp, peer, "pcopy");
  int drawn = 0;
  for (size_t c = 0; c < sizeof charts / sizeof charts[0]; c++) {
    char mine[16][40], theirs[16][40], tag[16], ptag[16];
    snprintf(tag, sizeof tag, "s%zu_", c);
    snprintf(ptag, sizeof ptag, "p%zu_", c);
    int nm = emit_series(gp, res, &charts[c], tag, mine, 16);
    int np = peer ? emit_series(gp, peer, &charts[c], ptag, theirs, 16) : 0;
    if (nm == 0 && np == 0) continue;
    int memory = !strcmp(charts[c].metric, "bandwidth");
    fprintf(gp, "set output '%s/%s'\nset title ", dir, charts[c].file);
    char title[640];
    snprintf(title, sizeof title, "%s%s%s%s", charts[c].title,
             peer ? " (solid: ocal; dashed: " : "", peer ? label_of(peer) : "", peer ? ")" : "");
    gp_quoted(gp, title);
    fputs(" . \"\\n\" . ", gp); /* the device on a second line */
    gp_quoted(gp, res->device);
    fprintf(gp, "\nset xlabel '%s'\nset ylabel '%s'\nplot ", charts[c].xlabel,
            charts[c].ylabel);
    int first = 1;
    if (memory && have_copy) {
      fprintf(gp, "$copy with lines lw 3 lc rgb 'black' title 'copy ceiling'");
      first = 0;
    }
    if (memory && have_peer_copy) {
      fprintf(gp, "%s$pcopy with lines lw 3 dt 2 lc rgb 'black' title 'copy ceiling (%s)'",
              first ? "" : ", ", label_of(peer));
      first = 0;
    }
    /* One colour per operation, the same for its peer's dashed line; black is the ceiling's. */
    static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                         "#bcbd22", "#17becf", "#393b79", "#ad494a"};
    const int ncolors = (int)(sizeof colors / sizeof colors[0]);
    for (int i = 0; i < nm; i++, first = 0)
      fprintf(gp, "%s$%s%d with linespoints lw 2 lc rgb '%s' title '%s'", first ? "" : ", ",
              tag, i, colors[i % ncolors], mine[i]);
    for (int i = 0; i < np; i++, first = 0) {
      int color = nm + i;
      for (int k = 0; k < nm; k++)
        if (!strcmp(mine[k], theirs[i])) color = k;
      fprintf(gp, "%s$%s%d with linespoints lw 2 dt 2 lc rgb '%s' title '%s (%s)'",
              first ? "" : ", ", ptag, i, colors[color % ncolors], theirs[i], label_of(peer));
    }
    fprintf(gp, "\n");
    drawn++;
  }
  fclose(gp);
  if (drawn == 0) {
    fprintf(stderr, "ocal bench: --plot: nothing to draw (no GB/s or GFLOP/s figure at two sizes)\n");
    return 1;
  }
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "gnuplot '%s'", script);
  if (system(cmd) != 0) {
    fprintf(stderr, "ocal bench: gnuplot failed on %s\n", script);
    return 1;
  }
  fprintf(stderr, "ocal bench: %d charts in %s\n", drawn, dir);
  return 0;
}
