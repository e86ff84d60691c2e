/* Pools of worker threads that run parallel-for loops: one process-wide,
 * and optionally one per application thread (ac_set_local_threads), so that
 * concurrent requests in a server each get a share of the cores. The calling
 * thread takes part, so a pool of N threads has N-1 workers. */
#ifndef AC_BASE_THREADPOOL_H
#define AC_BASE_THREADPOOL_H

#include <stddef.h>

/* Runs fn(ctx, begin, end) over [0, n) split into at most `threads` ranges.
 * Ranges are multiples of GRAIN (except the last) so kernels can vectorize. */
typedef void (*ac_range_fn)(void *ctx, size_t begin, size_t end);

void ac_parallel_for(size_t n, size_t grain, ac_range_fn fn, void *ctx);

/* Stops the workers (tests and leak checkers call this at exit). */
void ac_threadpool_shutdown(void);

#endif
