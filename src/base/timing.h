/* Monotonic wall clock and peak memory, for --timings and benchmarks. */
#ifndef AC_BASE_TIMING_H
#define AC_BASE_TIMING_H

double ac_now(void);            /* seconds, monotonic */
double ac_peak_rss_mb(void);    /* peak resident set size of the process */

#endif
