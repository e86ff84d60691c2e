/* Monotonic wall clock and peak memory (declared in audioc.h: the CLI
 * reports them with --timings). */
#ifndef AC_BASE_TIMING_H
#define AC_BASE_TIMING_H

#include "audioc.h"

#endif
