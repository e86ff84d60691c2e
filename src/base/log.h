/* Logging to stderr. Results go to stdout, never through here. */
#ifndef AC_BASE_LOG_H
#define AC_BASE_LOG_H

#include "base/error.h"

enum { AC_LOG_ERROR = 0, AC_LOG_WARN = 1, AC_LOG_INFO = 2, AC_LOG_DEBUG = 3 };

void ac_log(int level, const char *fmt, ...) AC_PRINTF(2, 3);

#define ac_warn(...) ac_log(AC_LOG_WARN, __VA_ARGS__)
#define ac_info(...) ac_log(AC_LOG_INFO, __VA_ARGS__)

#endif
