#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static int log_level = AC_LOG_WARN;

/* The host's callback and its user pointer, read and set as a pair. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static ac_log_fn sink;
static void *sink_user;

void ac_set_log_level(int level) { log_level = level; }

void ac_set_log_callback(ac_log_fn fn, void *user)
{
    pthread_mutex_lock(&sink_lock);
    sink = fn;
    sink_user = user;
    pthread_mutex_unlock(&sink_lock);
}

void ac_log(int level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warning", "info", "debug"};
    if (level > log_level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&sink_lock);
    ac_log_fn fn = sink;
    void *user = sink_user;
    pthread_mutex_unlock(&sink_lock);
    if (fn) fn(level, msg, user);
    else fprintf(stderr, "audioc: %s: %s\n", tags[level < 0 ? 0 : level > 3 ? 3 : level], msg);
}
