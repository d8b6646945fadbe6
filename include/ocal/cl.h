/** \file
 * ocal — the OpenCL header, included the one way ocal builds against it.
 *
 * ocal uses the OpenCL 1.2 API, which every current driver offers (NVIDIA, AMD, Intel, PoCL).
 * A program that wants a newer API may define CL_TARGET_OPENCL_VERSION before including ocal.h. */
#ifndef OCAL_CL_H
#define OCAL_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version ocal's headers ask of CL/cl.h (1.2) unless the program set one. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#endif /* OCAL_CL_H */
