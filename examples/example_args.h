/* ocal examples — the few lines every example repeated: the options all of them take
 * (--help, --device SELECTOR), reading a whole number from the command line, and creating the
 * context on the device asked for and saying which one it is. Each example keeps its own
 * options, usage text and checks; this header holds only what would be the same in all of
 * them. Header-only, so that an example copied out of the tree takes it along as it is. */
#ifndef OCAL_EXAMPLE_ARGS_H
#define OCAL_EXAMPLE_ARGS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

/* Handles argv[*i] when it is one of the options every example takes: --help (or -h) prints
 * the usage to standard output (usage(stdout, 0)) and returns 1 ("stop, exit 0");
 * --device SELECTOR stores the selector, steps *i over it and returns 2 ("taken"). Anything
 * else returns 0, for the example's own options; a --device without its value returns -1
 * after saying so. */
static inline int example_common_arg(int argc, char **argv, int *i, const char *prog,
                                     int (*usage)(FILE *f, int status), const char **device) {
  const char *a = argv[*i];
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    usage(stdout, 0);
    return 1;
  }
  if (strcmp(a, "--device") == 0) {
    if (*i + 1 >= argc) {
      fprintf(stderr, "%s: --device needs a selector (gpu, cpu, pocl, P:D or a name)\n", prog);
      return -1;
    }
    *device = argv[++*i];
    return 2;
  }
  return 0;
}

/* Reads a whole number in [min, max] from arg (no sign, no trailing text): 0, or -1 when arg
 * is missing or not such a number. */
static inline int example_parse_u64(const char *arg, uint64_t min, uint64_t max, uint64_t *out) {
  char *end;
  if (!arg || !*arg || arg[0] == '-' || arg[0] == '+') return -1;
  unsigned long long v = strtoull(arg, &end, 10);
  if (*end || v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* Creates a context on the device the selector names (NULL: OCAL_DEVICE, else the first GPU,
 * accelerator, CPU) and prints "device: NAME (PLATFORM)". On failure prints ocal's message
 * after the example's name and returns the status. */
static inline ocal_status example_context(const char *prog, const char *device,
                                          ocal_context *ctx) {
  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = device;
  ocal_status s = ocal_context_create(&opts, ctx);
  ocal_device_info info = {.struct_size = sizeof info};
  if (s == OCAL_OK && (s = ocal_context_get_device_info(*ctx, &info)) != OCAL_OK) {
    ocal_context_release(*ctx);
    *ctx = NULL;
  }
  if (s != OCAL_OK) {
    fprintf(stderr, "%s: no context: %s\n%s\n", prog, ocal_status_name(s), ocal_last_error());
    return s;
  }
  printf("device: %s (%s)\n", info.name, info.platform_name);
  return OCAL_OK;
}

#endif /* OCAL_EXAMPLE_ARGS_H */
