/* ocal fault injection — what the test program asks of the shim (tests/fault/shim.c). */
#ifndef OCAL_FAULT_SHIM_H
#define OCAL_FAULT_SHIM_H

#include <stddef.h>

/* Stops injecting: the program calls it before it checks that it can recover, so that a
 * lasting fault (NAME:N+) does not also fail the recovery. */
void fault_disarm(void);

/* How many failures the shim has injected so far. */
unsigned long fault_injected(void);

/* The program's own host memory, bypassing the counted allocator (free it with free). */
void *fault_host_alloc(size_t size);

/* Arms a failure from the program itself (a program that sweeps its own injection points):
 * the n-th call (1-based) of entry point `name` counted from now fails, and no other; it
 * re-arms a disarmed shim. Returns 0, or -1 for a name the shim does not wrap. */
int fault_arm(const char *name, unsigned long n);

/* How often entry point `name` has been called so far (0 for a name the shim does not wrap). */
unsigned long fault_calls(const char *name);

#endif /* OCAL_FAULT_SHIM_H */
