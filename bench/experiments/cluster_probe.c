/* bench/experiments/cluster_probe — does NVIDIA's OpenCL launch thread-block clusters when a
 * program's PTX declares them? A kernel built from OpenCL C reads its cluster registers
 * (%cluster_ctarank, %cluster_nctarank, %clusterid.x) and, where its cluster has two
 * work-groups, writes into the other group's local memory (mapa + st.shared::cluster) and
 * reads back what the other wrote, after barrier.cluster. Built twice: as OpenCL builds it,
 * and rebuilt from its PTX with `.reqnctapercluster 2, 1, 1` added to the entry (the way
 * src/core/ptx.c rebuilds programs for sm_90a). Plain OpenCL, the first GPU:
 *
 *   cluster_probe
 *
 * Prints, per build, each group's rank, cluster size and cluster id, and whether every
 * exchanged word arrived; exit status 0 when the rebuilt program ran in clusters of two and
 * every word arrived. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_probe.h"

#define GROUPS 8
#define LOCAL 64

static const char *source =
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void probe(__global uint *out) {\n"
    "  __local uint buf[64];\n"
    "  const uint lid = get_local_id(0), grp = get_group_id(0);\n"
    "  uint rank, n, cid;\n"
    "  __asm__ volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(rank));\n"
    "  __asm__ volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(n));\n"
    "  __asm__ volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(cid));\n"
    "  buf[lid] = 0xffffffffu;\n"
    "  uint got = 0;\n"
    "  if (n == 2) {\n"
    "    __asm__ volatile(\"barrier.cluster.arrive.release.aligned;\\n\"\n"
    "                 \"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
    "    uint local_addr, remote;\n"
    "    __asm__ volatile(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\"\n"
    "                 : \"=r\"(local_addr) : \"l\"((ulong)(buf + lid)));\n"
    "    __asm__ volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\"\n"
    "                 : \"=r\"(remote) : \"r\"(local_addr), \"r\"(rank ^ 1u));\n"
    "    __asm__ volatile(\"st.shared::cluster.u32 [%0], %1;\" :: \"r\"(remote),\n"
    "                 \"r\"(grp * 1000u + lid) : \"memory\");\n"
    "    __asm__ volatile(\"barrier.cluster.arrive.release.aligned;\\n\"\n"
    "                 \"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
    "    got = buf[lid];\n"
    "  }\n"
    "  out[(grp * 64 + lid) * 4 + 0] = rank;\n"
    "  out[(grp * 64 + lid) * 4 + 1] = n;\n"
    "  out[(grp * 64 + lid) * 4 + 2] = cid;\n"
    "  out[(grp * 64 + lid) * 4 + 3] = got;\n"
    "}\n";

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;

static char *ptx_of(cl_program p) {
  size_t size = 0;
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  char *text = calloc(1, size + 64);
  unsigned char *bins[1] = {(unsigned char *)text};
  OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
  return text;
}

/* text with `directive` inserted before the body of its first .entry. */
static char *with_directive(const char *text, const char *directive) {
  const char *e = strstr(text, ".entry ");
  const char *brace = e ? strchr(e, '{') : NULL;
  if (!brace) DIE("no .entry body in the PTX");
  size_t head = (size_t)(brace - text), n = strlen(text) + strlen(directive) + 2;
  char *out = malloc(n);
  memcpy(out, text, head);
  sprintf(out + head, "%s\n%s", directive, brace);
  return out;
}

static cl_program from_ptx(const char *text) {
  size_t n = strlen(text);
  const unsigned char *b[1] = {(const unsigned char *)text};
  cl_int err, st;
  cl_program r = clCreateProgramWithBinary(ctx, 1, &dev, &n, b, &st, &err);
  if (err != CL_SUCCESS) DIE("clCreateProgramWithBinary: %d", (int)err);
  cl_int b_err = clBuildProgram(r, 1, &dev, NULL, NULL, NULL);
  if (b_err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(r, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    DIE("build from PTX: %d\n%s", (int)b_err, log);
  }
  return r;
}

/* Runs the probe; 1 when it ran in clusters of two with every word exchanged. */
static int run(cl_program p, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, "probe", &err);
  OK(err);
  size_t words = GROUPS * LOCAL * 4;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, words * 4, NULL, &err);
  OK(err);
  OK(clSetKernelArg(k, 0, sizeof out, &out));
  size_t global = GROUPS * LOCAL, local = LOCAL;
  err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
  cl_int fin = err == CL_SUCCESS ? clFinish(q) : err;
  if (err != CL_SUCCESS || fin != CL_SUCCESS) {
    printf("%s: launch %d, finish %d\n", name, (int)err, (int)fin);
    return 0;
  }
  unsigned *h = malloc(words * 4);
  OK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, words * 4, h, 0, NULL, NULL));
  int clusters_of_two = 1, exchanged = 1;
  for (unsigned g = 0; g < GROUPS; g++) {
    const unsigned *w = h + g * LOCAL * 4;
    printf("%s: group %u rank %u of %u, cluster %u, word 0 from the other %u\n", name, g, w[0],
           w[1], w[2], w[3]);
    if (w[1] != 2) clusters_of_two = 0;
    for (unsigned l = 0; l < LOCAL && w[1] == 2; l++) {
      unsigned other = w[4 * l + 2] * 2 + (w[4 * l] ^ 1u); /* the partner's group, x-major */
      if (h[(g * LOCAL + l) * 4 + 3] != other * 1000u + l) exchanged = 0;
    }
  }
  printf("%s: clusters of two %s, exchange %s\n", name, clusters_of_two ? "yes" : "no",
         clusters_of_two ? (exchanged ? "ok" : "WRONG") : "not run");
  free(h);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  return clusters_of_two && exchanged;
}

int main(void) {
  open_gpu(0, &dev, &ctx, &q);
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  OK(err);
  if (clBuildProgram(p, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    DIE("build: %s", log);
  }
  run(p, "as built");
  char *ptx = ptx_of(p);
  const char *e = strstr(ptx, ".entry ");
  const char *brace = e ? strchr(e, '{') : NULL;
  printf("PTX entry head:\n%.*s\n", brace ? (int)(brace - e) : 200, e ? e : ptx);
  static const char *const directives[] = {".reqnctapercluster 2, 1, 1",
                                           ".explicitcluster\n.reqnctapercluster 2, 1, 1",
                                           ".maxclusterrank 2\n.reqnctapercluster 2, 1, 1"};
  int ok = 0;
  for (int i = 0; i < 3; i++) {
    char *two = with_directive(ptx, directives[i]);
    cl_program c = from_ptx(two);
    ok |= run(c, directives[i]);
    clReleaseProgram(c);
    free(two);
  }
  clReleaseProgram(p);
  free(ptx);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return ok ? 0 : 1;
}
