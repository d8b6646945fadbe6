/* Fuzz target: the generators' expression rewriting — the 4-wide form of an elementwise
 * body (vectorize_body, which reads `p[i]` subscripts, calls and literals and writes a new
 * body into a buffer sized from the old one) and the plain-sum test of a reduction's
 * expression (ocal__gen_is_plain_sum), both in src/gen/rewrite.c.
 * Input: an argument list, a newline, then the body. */
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_string(data, size);
  char *body = strchr(text, '\n');
  if (body) *body++ = '\0';
  else body = text + strlen(text);
  (void)ocal__gen_is_plain_sum(body);
  (void)ocal__gen_is_plain_sum(text);

  ocal__gen_param *params = NULL;
  int count = 0;
  if (ocal__gen_parse_params("fuzz", text, &params, &count) == OCAL_OK && count > 0) {
    struct ocal_gen_s g;
    memset(&g, 0, sizeof g);
    g.kind = GEN_ELEMENTWISE;
    g.params = params;
    g.nparams = count;
    ocal__vec_use *use = calloc((size_t)count, sizeof *use);
    if (!use) abort();
    char *v = ocal__gen_vectorize_body(&g, body, use);
    if (v) {
      /* The 4-wide body still names every argument it read or wrote. */
      for (int k = 0; k < count; k++)
        if (use[k].read || use[k].written) FUZZ_ASSERT(strstr(v, params[k].name) != NULL);
      free(v);
    }
    free(use);
  }
  free(params);
  free(text);
  return 0;
}
