/* ocal — the version of the library that is linked at run time. */
#include "internal.h"

unsigned ocal_version(void) { return OCAL_VERSION_HEX; }

const char *ocal_version_string(void) { return OCAL_VERSION_STRING; }
