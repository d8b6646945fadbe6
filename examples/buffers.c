/* buffers — the first ocal program to read: pick a device, move data to it and back.
 *
 * Creates a context on the default device (OCAL_DEVICE or --device picks another), uploads
 * a vector of floats, fills a view of it on the device, reads it back and checks
 * every element on the host.
 *
 *   ./buffers [--device SELECTOR] [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ocal.h>

static int die(const char *what, ocal_status s) {
  fprintf(stderr, "buffers: %s failed: %s\n%s\n", what, ocal_status_name(s), ocal_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  size_t n = 1000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0) {
      printf("usage: buffers [--device SELECTOR] [N]\n"
             "Uploads N floats (default 1000), sets the middle half to 7 on the device,\n"
             "reads them back and checks them.\n");
      return 0;
    } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = argv[++i];
    } else {
      char *end;
      unsigned long long v = strtoull(argv[i], &end, 10);
      if (*end || argv[i][0] == '-' || v < 4) {
        fprintf(stderr, "buffers: bad argument '%s' (want --device SELECTOR or N >= 4)\n",
                argv[i]);
        return 2;
      }
      n = (size_t)v;
    }
  }

  ocal_context_options opts;
  ocal_context_options_init(&opts);
  opts.device = device;
  ocal_context ctx;
  ocal_status s = ocal_context_create(&opts, &ctx);
  if (s != OCAL_OK) return die("ocal_context_create", s);
  ocal_device_info info = {.struct_size = sizeof info};
  ocal_context_get_device_info(ctx, &info);
  printf("device: %s (%s)\n", info.name, info.platform_name);

  float *host = malloc(n * sizeof *host);
  if (!host) return die("malloc", OCAL_OUT_OF_HOST_MEMORY);
  for (size_t i = 0; i < n; i++) host[i] = (float)i * 0.25f;

  ocal_buffer x = NULL, middle = NULL;
  size_t half = n / 2;
  float seven = 7.0f;
  int bad = -1;
  if ((s = ocal_buffer_from_host(ctx, OCAL_F32, 1, &n, host, &x)) == OCAL_OK &&
      (s = ocal_buffer_view(x, n / 4, 1, &half, &middle)) == OCAL_OK &&
      (s = ocal_buffer_fill(middle, &seven)) == OCAL_OK &&
      (s = ocal_buffer_read(x, 0, n, host, NULL)) == OCAL_OK) {
    bad = 0;
    for (size_t i = 0; i < n; i++) {
      float want = (i >= n / 4 && i < n / 4 + half) ? 7.0f : (float)i * 0.25f;
      if (host[i] != want) bad++;
    }
    printf("%zu elements, %zu set to 7 through a view: %s\n", n, half,
           bad ? "MISMATCH" : "all correct");
  }
  if (s != OCAL_OK) die("a buffer operation", s);
  ocal_buffer_release(middle);
  ocal_buffer_release(x);
  ocal_context_release(ctx);
  free(host);
  return bad == 0 ? 0 : 1;
}
