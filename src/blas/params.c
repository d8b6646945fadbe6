/* ocal — the GEMM tuning parameters: their names and ranges, CLBlast's constraints on them,
 * and the NAME=VALUE text they are stored and shipped as.
 *
 * Every set is checked here before CLBlast sees it, whether it comes from a tuning file,
 * from ocal_blas_tuning_apply or from the tuner's search: parameters that break a kernel's
 * constraints would make CLBlast build a wrong kernel or none. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas_internal.h"

const ocal__gemm_param_def ocal__gemm_param_defs[OCAL__GEMM_NPARAMS] = {
#define OCAL__GEMM_PARAM_DEF(id, kernel, name, min, max) {kernel, name, min, max},
    OCAL__GEMM_PARAM_MAP(OCAL__GEMM_PARAM_DEF)
#undef OCAL__GEMM_PARAM_DEF
};

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }
static int multiple(long a, long b) { return b > 0 && a % b == 0; }

#define FAIL_WHY(...)                                  \
  do {                                                 \
    if (why && why_size) snprintf(why, why_size, __VA_ARGS__); \
    return 0;                                          \
  } while (0)

int ocal__gemm_params_valid(const ocal__gemm_params *p, const ocal_device_info *device,
                            int precision, char *why, size_t why_size) {
  const long *v = p->v;
  for (int i = 0; i < OCAL__GEMM_NPARAMS; i++)
    if (v[i] < ocal__gemm_param_defs[i].min || v[i] > ocal__gemm_param_defs[i].max)
      FAIL_WHY("%s=%ld is out of range [%ld, %ld]", ocal__gemm_param_defs[i].name, v[i],
               ocal__gemm_param_defs[i].min, ocal__gemm_param_defs[i].max);
#define P(id) v[OCAL__P_##id]
  if (!is_pow2(P(VWM)) || !is_pow2(P(VWN)) || !is_pow2(P(VWMD)) || !is_pow2(P(VWND)))
    FAIL_WHY("vector widths VWM, VWN, VWMD, VWND must be powers of two");
  /* Xgemm (CLBlast's tuner constraints for its kernels 0 and 1). */
  if (!multiple(P(MWG), P(MDIMC) * P(VWM)) || !multiple(P(NWG), P(NDIMC) * P(VWN)))
    FAIL_WHY("MWG must be a multiple of MDIMC*VWM and NWG of NDIMC*VWN");
  if (!multiple(P(MWG), P(MDIMA) * P(VWM)) || !multiple(P(NWG), P(NDIMB) * P(VWN)))
    FAIL_WHY("MWG must be a multiple of MDIMA*VWM and NWG of NDIMB*VWN");
  if (!multiple(P(KWG), P(KWI))) FAIL_WHY("KWG must be a multiple of KWI");
  if (P(GEMMK) == 0) {
    if (P(KREG) != 1) FAIL_WHY("KREG must be 1 with GEMMK=0");
    long threads = P(MDIMC) * P(NDIMC);
    if (!multiple(threads, P(MDIMA)) || !multiple(P(KWG), threads / P(MDIMA)) ||
        !multiple(threads, P(NDIMB)) || !multiple(P(KWG), threads / P(NDIMB)))
      FAIL_WHY("KWG must be a multiple of MDIMC*NDIMC/MDIMA and of MDIMC*NDIMC/NDIMB");
  } else {
    if (P(KWG) != 1 || P(KWI) != 1 || P(SA) || P(SB) || P(STRM) || P(STRN))
      FAIL_WHY("GEMMK=1 needs KWG=1, KWI=1, SA=SB=STRM=STRN=0");
    if (P(MDIMA) != P(MDIMC) || P(NDIMB) != P(NDIMC))
      FAIL_WHY("GEMMK=1 needs MDIMA=MDIMC and NDIMB=NDIMC");
    if (!multiple(P(KREG), P(VWN))) FAIL_WHY("KREG must be a multiple of VWN");
  }
  /* XgemmDirect. */
  if (!multiple(P(WGD), P(KWID))) FAIL_WHY("WGD must be a multiple of KWID");
  if (!multiple(P(WGD), P(MDIMCD) * P(VWMD)) || !multiple(P(WGD), P(NDIMCD) * P(VWND)) ||
      !multiple(P(WGD), P(MDIMAD) * P(VWMD)) || !multiple(P(WGD), P(NDIMBD) * P(VWND)))
    FAIL_WHY("WGD must be a multiple of MDIMCD*VWMD, NDIMCD*VWND, MDIMAD*VWMD, NDIMBD*VWND");
  long threads_d = P(MDIMCD) * P(NDIMCD);
  if (!multiple(threads_d, P(MDIMAD)) || !multiple(P(WGD), threads_d / P(MDIMAD)) ||
      !multiple(threads_d, P(NDIMBD)) || !multiple(P(WGD), threads_d / P(NDIMBD)))
    FAIL_WHY("WGD must be a multiple of MDIMCD*NDIMCD/MDIMAD and of MDIMCD*NDIMCD/NDIMBD");
  if (device) {
    unsigned long long bytes = precision == 64 ? 8 : 4;
    unsigned long long local =
        bytes * (unsigned long long)(P(SA) * P(KWG) * P(MWG) + P(SB) * P(KWG) * P(NWG));
    unsigned long long local_d =
        bytes * (unsigned long long)(P(WGD) * (P(WGD) + P(PADA)) + P(WGD) * (P(WGD) + P(PADB)));
    if (local > device->local_mem_bytes || local_d > device->local_mem_bytes)
      FAIL_WHY("needs %llu bytes of local memory, the device has %llu",
               local > local_d ? local : local_d, (unsigned long long)device->local_mem_bytes);
    size_t wg = device->max_work_group_size;
    if ((size_t)(P(MDIMC) * P(NDIMC)) > wg || (size_t)threads_d > wg ||
        (size_t)P(MDIMC) > device->max_work_item_sizes[0] ||
        (size_t)P(NDIMC) > device->max_work_item_sizes[1] ||
        (size_t)P(MDIMCD) > device->max_work_item_sizes[0] ||
        (size_t)P(NDIMCD) > device->max_work_item_sizes[1])
      FAIL_WHY("work-groups of %ldx%ld (Xgemm) or %ldx%ld (XgemmDirect) exceed the device's "
               "limit of %zu",
               P(MDIMC), P(NDIMC), P(MDIMCD), P(NDIMCD), wg);
  }
#undef P
  return 1;
}

int ocal__gemm_params_parse(const char *text, const ocal_device_info *device, int precision,
                            ocal__gemm_params *out, char *why, size_t why_size) {
  int seen[OCAL__GEMM_NPARAMS] = {0};
  const char *line = text;
  int line_no = 0;
  while (line && *line) {
    line_no++;
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *first = line;
    while (first < line + len && (*first == ' ' || *first == '\t')) first++;
    if (first < line + len && *first == '#') { /* a comment, of any length */
      line = end ? end + 1 : NULL;
      continue;
    }
    char buf[128];
    /* Lines longer than any valid one are not ours. */
    if (len >= sizeof buf) FAIL_WHY("line %d is too long", line_no);
    memcpy(buf, line, len);
    buf[len] = '\0';
    line = end ? end + 1 : NULL;
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    if (*s == '\0' || *s == '#') continue;
    char *eq = strchr(s, '=');
    if (!eq) FAIL_WHY("line %d (\"%s\") is not NAME=VALUE", line_no, s);
    *eq = '\0';
    const char *name = s, *value = eq + 1;
    int idx = -1;
    for (int i = 0; i < OCAL__GEMM_NPARAMS; i++)
      if (strcmp(name, ocal__gemm_param_defs[i].name) == 0) idx = i;
    if (idx < 0) FAIL_WHY("line %d: unknown parameter \"%s\"", line_no, name);
    if (seen[idx]) FAIL_WHY("line %d: %s is given twice", line_no, name);
    char *num_end;
    errno = 0;
    long v = strtol(value, &num_end, 10);
    if (errno || num_end == value || *num_end != '\0')
      FAIL_WHY("line %d: %s=\"%s\" is not an integer", line_no, name, value);
    out->v[idx] = v;
    seen[idx] = 1;
  }
  for (int i = 0; i < OCAL__GEMM_NPARAMS; i++)
    if (!seen[i]) FAIL_WHY("parameter %s is missing", ocal__gemm_param_defs[i].name);
  return ocal__gemm_params_valid(out, device, precision, why, why_size);
}

void ocal__gemm_params_format(const ocal__gemm_params *p, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < OCAL__GEMM_NPARAMS && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s=%ld\n", ocal__gemm_param_defs[i].name,
                             p->v[i]);
}
