/* Error reporting: set a thread-local message and return the status. */
#ifndef AC_BASE_ERROR_H
#define AC_BASE_ERROR_H

#include "audioc.h"

#if defined(__GNUC__)
#define AC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AC_PRINTF(a, b)
#endif

/* Sets the message of the last error and returns STATUS. */
ac_status ac_error(ac_status status, const char *fmt, ...) AC_PRINTF(2, 3);

/* Puts "PREFIX: " in front of the current message (adds context), unless
 * the message already starts with it. */
ac_status ac_error_prefix(ac_status status, const char *fmt, ...) AC_PRINTF(2, 3);

/* Each public call that returns an ac_status begins with this, so that
 * ac_last_error() speaks of that call and never of an earlier failure. */
void ac_error_clear(void);

#define AC_TRY(expr)                       \
    do {                                   \
        ac_status ac_try_s_ = (expr);      \
        if (ac_try_s_ != AC_OK) return ac_try_s_; \
    } while (0)

#endif
