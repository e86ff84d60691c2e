#define _POSIX_C_SOURCE 200809L
#include "base/timing.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

double ac_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* VmHWM rather than getrusage: after fork+exec, ru_maxrss still counts the
 * parent's memory at the time of the fork. */
double ac_peak_rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb == 0) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0) kb = (double)ru.ru_maxrss;
    }
    return kb / 1024.0;
}
