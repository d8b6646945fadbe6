/* ocal — events of non-blocking commands. */
#include <stdlib.h>

#include "internal.h"

struct ocal_event_s {
  cl_event event;
};

ocal_status ocal__event_wrap(cl_event cl, ocal_event *out) {
  ocal_event ev = malloc(sizeof *ev);
  if (!ev) {
    clWaitForEvents(1, &cl); /* the host memory of the transfer must not be left in use */
    clReleaseEvent(cl);
    *out = NULL;
    return ocal__fail(OCAL_OUT_OF_HOST_MEMORY, "ocal", "no memory for an event");
  }
  ev->event = cl;
  *out = ev;
  return OCAL_OK;
}

ocal_status ocal_event_wait(ocal_event event) {
  if (!event) return OCAL_FAIL(OCAL_INVALID_HANDLE, "the event is NULL");
  OCAL_CL_CHECK(NULL, clWaitForEvents(1, &event->event));
  return OCAL_OK;
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
