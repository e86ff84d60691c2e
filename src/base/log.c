#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>

static int log_level = AC_LOG_WARN;

void ac_set_log_level(int level) { log_level = level; }

void ac_log(int level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warning", "info", "debug"};
    if (level > log_level) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "audioc: %s: ", tags[level < 0 ? 0 : level > 3 ? 3 : level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
