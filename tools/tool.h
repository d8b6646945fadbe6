/* ocal — what the `ocal` tool's command files share (never installed). */
#ifndef OCAL_TOOL_H
#define OCAL_TOOL_H

#include <ocal.h>

/* Prints "ocal: WHAT: STATUS" and the library's message to stderr; returns 1. */
int tool_fail(const char *what, ocal_status s);

/* `ocal demo [SELECTOR]`: one checked line per capability; returns the exit status. */
int tool_demo(const char *selector);

/* `ocal doctor`: checks the OpenCL setup, one line per problem; returns the exit status. */
int tool_doctor(void);

#endif /* OCAL_TOOL_H */
