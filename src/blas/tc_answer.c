/* ocal — the tensor-core probe's answer in the disk cache, so that a later context or
 * process on the same device reads it instead of probing again.
 *
 * It is kept beside the kernel binaries and keyed like them (platform, device, driver, ocal
 * version, the kernel sources), so a new driver or kernel probes again. The record is one
 * exact line of text: anything else (edited, truncated, written by another program) is "no
 * answer", never trusted. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_cores.h"

#define ANSWER_FORMAT \
  "ocal tensor-core probe 6\nok=%d f16=%d bf16=%d extra=%d wgmma=%d f64=%d\n"

/* Keyed on both kernels the probe checks (cl/gemm_mma.cl, cl/gemm_dmma.cl): a change to
 * either probes again. */
static char *answer_key(ocal_context ctx) {
  const char *mma = NULL, *dmma = NULL;
  for (size_t i = 0; i < ocal__source_count; i++) {
    if (strcmp(ocal__sources[i].name, "gemm_mma") == 0) mma = ocal__sources[i].text;
    if (strcmp(ocal__sources[i].name, "gemm_dmma") == 0) dmma = ocal__sources[i].text;
  }
  if (!mma || !dmma) return NULL;
  size_t a = strlen(mma), b = strlen(dmma);
  char *both = malloc(a + b + 1);
  if (!both) return NULL;
  memcpy(both, mma, a);
  memcpy(both + a, dmma, b + 1);
  char *key = ocal__disk_cache_key(ctx, both,
                                   ocal__tc_emulated(ctx) ? "tensor-core probe answer, MMA_EMULATE=1"
                                                          : "tensor-core probe answer");
  free(both);
  return key;
}

static int is_bit(int v) { return v == 0 || v == 1; }

int ocal__tc_answer_load(ocal_context ctx, ocal__tc_answer *answer) {
  const char *dir = ocal__context_cache_dir(ctx);
  if (!dir) return 0;
  char *key = answer_key(ctx);
  if (!key) return 0;
  unsigned char *bin = NULL;
  size_t size = 0;
  int rejected = 0, got = ocal__disk_cache_load(dir, key, &bin, &size, &rejected);
  free(key);
  if (!got) return 0;
  char text[96];
  ocal__tc_answer a = {-1, -1, -1, -1, -1, -1};
  int used = 0;
  int good = size < sizeof text;
  if (good) {
    memcpy(text, bin, size);
    text[size] = '\0';
    good = strlen(text) == size &&
           sscanf(text, ANSWER_FORMAT "%n", &a.ok, &a.f16, &a.bf16, &a.extra, &a.wgmma,
                  &a.f64, &used) == 6 &&
           (size_t)used == size && is_bit(a.ok) && is_bit(a.f16) && is_bit(a.bf16) &&
           a.extra >= 0 && a.extra < OCAL__TC_SPELLING_COUNT && a.wgmma >= 0 &&
           a.wgmma <= (OCAL__WG_TF32 | OCAL__WG_F16 | OCAL__WG_BF16 | OCAL__WG_TMA) &&
           is_bit(a.f64);
  }
  if (good) {
    /* The text must be exactly what ocal__tc_answer_store writes for these values. */
    char again[96];
    snprintf(again, sizeof again, ANSWER_FORMAT, a.ok, a.f16, a.bf16, a.extra, a.wgmma,
             a.f64);
    good = strcmp(again, text) == 0;
  }
  free(bin);
  if (good) *answer = a;
  return good;
}

void ocal__tc_answer_store(ocal_context ctx, const ocal__tc_answer *a) {
  const char *dir = ocal__context_cache_dir(ctx);
  if (!dir) return;
  char *key = answer_key(ctx);
  if (!key) return;
  char text[96];
  int n = snprintf(text, sizeof text, ANSWER_FORMAT, a->ok, a->f16, a->bf16, a->extra,
                   a->wgmma, a->f64);
  ocal__disk_cache_store(dir, key, (const unsigned char *)text, (size_t)n);
  free(key);
}
