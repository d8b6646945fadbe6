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

#endif /* OCAL_FAULT_SHIM_H */
