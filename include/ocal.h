/** \file
 * ocal — a portable, vendor-neutral OpenCL compute library.
 *
 * The only header a program includes. Link with `pkg-config --cflags --libs ocal`.
 *
 *   ocal_context ctx;
 *   if (ocal_context_create(NULL, &ctx) != OCAL_OK) {
 *     fprintf(stderr, "%s\n", ocal_last_error());
 *     return 1;
 *   }
 *   ...
 *   ocal_context_release(ctx);
 */
#ifndef OCAL_H
#define OCAL_H

#include "ocal/export.h"
#include "ocal/status.h"
#include "ocal/version.h"
#include "ocal/types.h"
#include "ocal/device.h"
#include "ocal/event.h"
#include "ocal/context.h"
#include "ocal/buffer.h"
#include "ocal/memory.h"
#include "ocal/reduce.h"
#include "ocal/blas.h"
#include "ocal/ops.h"
#include "ocal/fft.h"
#include "ocal/kernel.h"
#include "ocal/nn.h"
#include "ocal/sparse.h"

#endif /* OCAL_H */
