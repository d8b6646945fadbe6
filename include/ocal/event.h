/** \file
 * ocal — events: handles on queued commands, for waiting on non-blocking transfers and for
 * ordering the context's queues (ocal_context_enqueue_wait, ocal_context_enqueue_marker).
 *
 * An event is created by the call that queues its command (ocal_buffer_write with an event,
 * ocal_transfer_write, ocal_context_enqueue_marker, ...) or wraps an OpenCL event
 * (ocal_event_from_cl). The caller owns it and frees it with ocal_event_release, whether or
 * not its command has completed. */
#ifndef OCAL_EVENT_H
#define OCAL_EVENT_H

#include "ocal/cl.h"
#include "ocal/export.h"
#include "ocal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to a queued command. Freed by ocal_event_release. */
typedef struct ocal_event_s *ocal_event;

/** Blocks until the command behind \p event has finished.
 * \param event the event.
 * \returns OCAL_OK once the command has completed; OCAL_INVALID_HANDLE for NULL;
 *          OCAL_OPENCL_ERROR when the command ended with an error status, its own or that of
 *          an event it waited for (a user event set to an error status): the message names
 *          the status, and the data the command was to move or compute is not there; an
 *          OpenCL error when the wait itself failed, OCAL_OPENCL_ERROR included where the
 *          command is still queued or running (wait again before touching its memory). */
OCAL_API ocal_status ocal_event_wait(ocal_event event);

/** Frees an event (its command need not have completed).
 * \param event the event, or NULL (nothing happens).
 * \returns OCAL_OK. */
OCAL_API ocal_status ocal_event_release(ocal_event event);

/** Escape hatch: the cl_event behind an ocal event.
 * \param event the event.
 * \param out receives the cl_event, owned by the ocal event (retain it to keep it longer).
 * \returns OCAL_OK; OCAL_INVALID_HANDLE; OCAL_INVALID_ARGUMENT when out is NULL. */
OCAL_API ocal_status ocal_event_get_cl_event(ocal_event event, cl_event *out);

/** Wraps an OpenCL event of a context (for example a user event) as an ocal event, to pass
 * it to ocal_transfer_write, ocal_context_enqueue_wait and the like. The ocal event retains
 * the cl_event; release both.
 * \param cl the cl_event.
 * \param event receives the ocal event.
 * \returns OCAL_OK; OCAL_INVALID_ARGUMENT when cl or event is NULL; an OpenCL error when
 *          clRetainEvent fails. */
OCAL_API ocal_status ocal_event_from_cl(cl_event cl, ocal_event *event);

#ifdef __cplusplus
}
#endif

#endif /* OCAL_EVENT_H */
