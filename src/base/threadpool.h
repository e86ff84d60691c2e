/* Pools of worker threads that run parallel-for loops: one process-wide,
 * and optionally one per application thread (ac_set_local_threads), so that
 * concurrent requests in a server each get a share of the cores. The calling
 * thread takes part, so a pool of N threads has N-1 workers. */
#ifndef AC_BASE_THREADPOOL_H
#define AC_BASE_THREADPOOL_H

#include <stddef.h>

/* Runs fn(ctx, begin, end) over [0, n) cut into ranges, about 4 per
 * thread, that the threads claim as they go (a thread that loses its core
 * holds up one range, not the loop). Ranges are multiples of GRAIN (except
 * the last) so kernels can vectorize; where they start depends only on n,
 * GRAIN and the pool's size. */
typedef void (*ac_range_fn)(void *ctx, size_t begin, size_t end);

void ac_parallel_for(size_t n, size_t grain, ac_range_fn fn, void *ctx);

/* Stops the workers (tests and leak checkers call this at exit). */
void ac_threadpool_shutdown(void);

#endif
