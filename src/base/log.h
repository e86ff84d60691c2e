/* Logging: to stderr, or to the callback the host program set
 * (ac_set_log_callback). Results go to stdout, never through here. */
#ifndef AC_BASE_LOG_H
#define AC_BASE_LOG_H

#include "base/error.h"

/* the levels are audioc.h's AC_LOG_* */
void ac_log(int level, const char *fmt, ...) AC_PRINTF(2, 3);

#define ac_warn(...) ac_log(AC_LOG_WARN, __VA_ARGS__)
#define ac_info(...) ac_log(AC_LOG_INFO, __VA_ARGS__)

#endif
