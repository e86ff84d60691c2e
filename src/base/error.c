#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *ac_last_error(void) { return last_error; }

void ac_error_clear(void) { last_error[0] = 0; }

ac_status ac_error(ac_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

ac_status ac_error_prefix(ac_status status, const char *fmt, ...)
{
    char prefix[512], old[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t n = strlen(prefix);
    if (strncmp(last_error, prefix, n) == 0 && last_error[n] == ':') return status; /* already named */
    memcpy(old, last_error, sizeof old);
    snprintf(last_error, sizeof last_error, "%s: %s", prefix, old);
    return status;
}

const char *ac_status_name(ac_status status)
{
    static const char *const names[] = {"ok", "arg", "io", "format", "model", "unsupported", "nomem", "cancelled"};
    return (unsigned)status < sizeof names / sizeof *names ? names[status] : "unknown";
}
