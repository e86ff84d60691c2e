/* The version of the library a program loaded: audioc.h's when it was built. */
#include "audioc.h"

const char *ac_version(int *major, int *minor, int *patch)
{
    if (major) *major = AUDIOC_VERSION_MAJOR;
    if (minor) *minor = AUDIOC_VERSION_MINOR;
    if (patch) *patch = AUDIOC_VERSION_PATCH;
    return AUDIOC_VERSION;
}
