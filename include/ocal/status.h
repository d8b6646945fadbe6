/** \file
 * ocal — status codes and error messages.
 *
 * Every public ocal function returns an ocal_status; OCAL_OK (0) means success. On failure
 * ocal_last_error() returns a message for the calling thread that says which call failed,
 * why (the OpenCL error by name, the device, the compiler's log for build failures) and,
 * where there is one, how to fix it. */
#ifndef OCAL_STATUS_H
#define OCAL_STATUS_H

#include "ocal/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The status codes, X(NAME, value, description): one table makes the enum and the names,
 * so they cannot drift apart. */
#define OCAL_STATUS_MAP(X)                                                              \
  X(OK, 0, "success")                                                                   \
  X(INVALID_ARGUMENT, 1, "invalid argument")                                            \
  X(INVALID_HANDLE, 2, "NULL or invalid handle")                                        \
  X(SHAPE_MISMATCH, 3, "shapes or sizes do not match")                                  \
  X(TYPE_MISMATCH, 4, "element types do not match")                                     \
  X(OVERFLOW, 5, "size computation overflows")                                          \
  X(NO_DEVICE, 6, "no OpenCL device found")                                             \
  X(DEVICE_NOT_FOUND, 7, "no device matches the selector")                              \
  X(UNSUPPORTED, 8, "not supported by this device or build")                            \
  X(OUT_OF_HOST_MEMORY, 9, "out of host memory")                                        \
  X(OUT_OF_DEVICE_MEMORY, 10, "out of device memory")                                   \
  X(BUILD_FAILED, 11, "OpenCL program failed to build")                                 \
  X(OPENCL_ERROR, 12, "OpenCL call failed")                                             \
  X(IO_ERROR, 13, "file input/output failed")                                           \
  X(INTERNAL, 14, "internal error (please report it)")                                 \
  X(NOT_CONVERGED, 15, "iterative method did not converge")

/** What a call did: OCAL_OK, or why it failed (OCAL_INVALID_ARGUMENT, ...; see
 * OCAL_STATUS_MAP for every code and ocal_status_description for its words). */
typedef enum ocal_status {
#define OCAL__STATUS_ENUM(name, value, text) OCAL_##name = value,
  OCAL_STATUS_MAP(OCAL__STATUS_ENUM)
#undef OCAL__STATUS_ENUM
} ocal_status;

/** Names a status code.
 * \param status any value, also one that is not an ocal_status.
 * \returns a static string such as "OCAL_OUT_OF_DEVICE_MEMORY", or "OCAL_UNKNOWN_STATUS". */
OCAL_API const char *ocal_status_name(ocal_status status);

/** Describes a status code in a few words ("out of device memory").
 * \param status any value.
 * \returns a static string. */
OCAL_API const char *ocal_status_description(ocal_status status);

/** The detailed message of the last failure in the calling thread.
 * \returns a thread-local string, valid until the next failing ocal call in this thread;
 *          "" when no ocal call in this thread has failed yet. Success does not clear it. */
OCAL_API const char *ocal_last_error(void);

/** Records a failure as the calling thread's last error, as ocal's own calls do: for
 * libraries built on ocal (libocal-mpi), so that their errors read the same way.
 * \param status the status to return; any value.
 * \param func the public call that failed, put before the message ("my_call: ..."); NULL
 *        leaves it out.
 * \param fmt a printf format for the message (what was wrong and how to fix it); NULL
 *        records func alone.
 * \returns status. */
OCAL_API ocal_status ocal_error_set(ocal_status status, const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Names an OpenCL error code, for messages of code that calls OpenCL itself.
 * \param err a cl_int returned by an OpenCL call.
 * \returns a static string such as "CL_OUT_OF_RESOURCES", or "CL_UNKNOWN_ERROR". */
OCAL_API const char *ocal_cl_error_name(int err);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_STATUS_H */
