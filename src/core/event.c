/* ocal — events of non-blocking commands. */
#include <stdlib.h>

#include "internal.h"

struct ocal_event_s {
  cl_event event;
};

ocal_status ocal__event_wrap(cl_event cl, ocal_event *out, const char *func) {
  ocal_event ev = malloc(sizeof *ev);
  if (!ev) {
    clWaitForEvents(1, &cl); /* the host memory of the transfer must not be left in use */
    clReleaseEvent(cl);
    *out = NULL;
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, func, "no memory for an event");
  }
  ev->event = cl;
  *out = ev;
  return OCAL_OK;
}

ocal_status ocal_event_wait(ocal_event event) {
  if (!event) return OCAL_FAIL(OCAL_INVALID_HANDLE, "the event is NULL");
  cl_int err = clWaitForEvents(1, &event->event);
  if (err != CL_SUCCESS && err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    return ocal__cl_fail(NULL, err, "clWaitForEvents", __func__);
  /* The command's own status says whether it ended with an error: NVIDIA's driver returns
   * CL_SUCCESS from the wait on a user event set to an error status, and
   * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST alone says neither which status nor what
   * to do, so the message names the status and where it can come from. */
  cl_int st = CL_COMPLETE;
  if (clGetEventInfo(event->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
      CL_SUCCESS) {
    /* no status to name: the wait's own error, if any */
    return err == CL_SUCCESS ? OCAL_OK : ocal__cl_fail(NULL, err, "clWaitForEvents", __func__);
  }
  if (st == CL_COMPLETE || (st > 0 && err == CL_SUCCESS)) return OCAL_OK;
  /* A wait that failed and left the command queued or running has not waited: the data is
   * not there yet, and saying OCAL_OK would let the caller read it. */
  if (st > 0)
    return OCAL_FAIL(OCAL_OPENCL_ERROR,
                     "clWaitForEvents returned %s, yet the event's command has not finished "
                     "(execution status %d): it may still be moving or computing its data; "
                     "wait again, or finish the context before using what it touches",
                     ocal__cl_error_name(err), (int)st);
  /* An error status is any negative number the implementation or a user event chose: named
   * as the OpenCL error code of that value only as a hint (PoCL passes -1 on to the commands
   * that waited for a failed event). */
  return OCAL_FAIL(OCAL_OPENCL_ERROR,
                   "the event's command ended with error status %d (as an OpenCL error code: "
                   "%s): it did not run to the end, so the data it was to move or compute is not "
                   "there. The status is its own or that of an event it waited for (a user event "
                   "set to an error status, a transfer or kernel that failed); the call that "
                   "queued the failing command reported it",
                   (int)st, ocal__cl_error_name(st));
}

ocal_status ocal_event_release(ocal_event event) {
  if (!event) return OCAL_OK;
  clReleaseEvent(event->event);
  free(event);
  return OCAL_OK;
}

ocal_status ocal_event_get_cl_event(ocal_event event, cl_event *out) {
  if (!event) return OCAL_FAIL(OCAL_INVALID_HANDLE, "the event is NULL");
  if (!out) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "out must not be NULL");
  *out = event->event;
  return OCAL_OK;
}

ocal_status ocal_event_from_cl(cl_event cl, ocal_event *event) {
  if (!event) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "event must not be NULL");
  *event = NULL;
  if (!cl) return OCAL_FAIL(OCAL_INVALID_ARGUMENT, "cl must not be NULL");
  /* Not through ocal__event_wrap: a user event must never be waited for here. */
  ocal_event ev = malloc(sizeof *ev);
  if (!ev) return OCAL_FAIL(OCAL_OUT_OF_HOST_MEMORY, "no memory for an event");
  cl_int err = clRetainEvent(cl);
  if (err != CL_SUCCESS) {
    free(ev);
    return ocal__cl_fail(NULL, err, "clRetainEvent", __func__);
  }
  ev->event = cl;
  *event = ev;
  return OCAL_OK;
}
