#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "base/timing.h"

#define MAX_THREADS 256
#define SPIN_SECONDS 200e-6 /* workers spin this long before sleeping */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* Workers wait for a new generation number: first spinning (kernels come
 * in quick succession, and waking a sleeping thread costs tens of
 * microseconds), then on a condition variable. Work is split statically:
 * thread i takes chunk i, which keeps results independent of timing. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t tid[MAX_THREADS];
    int n_threads;      /* configured size, including the caller */
    int n_workers;      /* started workers */
    atomic_ulong generation;
    atomic_int pending; /* workers still running the current job */
    atomic_int stop;
    /* current job, published by the generation increment */
    ac_range_fn fn;
    void *ctx;
    size_t n, chunk;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;

static void run_chunk(size_t i)
{
    size_t b = i * pool.chunk;
    if (b >= pool.n) return;
    size_t e = b + pool.chunk < pool.n ? b + pool.chunk : pool.n;
    pool.fn(pool.ctx, b, e);
}

static unsigned long wait_generation(unsigned long seen)
{
    double start = ac_now();
    unsigned long g;
    for (int i = 0;; i++) {
        g = atomic_load_explicit(&pool.generation, memory_order_acquire);
        if (g != seen || atomic_load(&pool.stop)) return g;
        cpu_relax();
        if ((i & 255) == 255 && ac_now() - start > SPIN_SECONDS) break;
    }
    pthread_mutex_lock(&pool.mu);
    while ((g = atomic_load(&pool.generation)) == seen && !atomic_load(&pool.stop))
        pthread_cond_wait(&pool.wake, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    return g;
}

static void *worker(void *arg)
{
    size_t index = (size_t)arg;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_generation(seen);
        if (atomic_load(&pool.stop)) break;
        run_chunk(index);
        atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_release);
    }
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static void stop_workers(void)
{
    pthread_mutex_lock(&pool.mu);
    atomic_store(&pool.stop, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.n_workers; i++) pthread_join(pool.tid[i], NULL);
    pool.n_workers = 0;
    atomic_store(&pool.stop, 0);
    atomic_store(&pool.generation, 0);
}

ac_status ac_set_threads(int n)
{
    if (n < 1 || n > MAX_THREADS)
        return ac_error(AC_ERR_ARG, "thread count %d is out of range 1..%d", n, MAX_THREADS);
    pthread_mutex_lock(&run_mu);
    stop_workers();
    pool.n_threads = n;
    pthread_mutex_unlock(&run_mu);
    return AC_OK;
}

int ac_get_threads(void)
{
    if (!pool.n_threads) pool.n_threads = default_threads();
    return pool.n_threads;
}

void ac_threadpool_shutdown(void)
{
    pthread_mutex_lock(&run_mu);
    stop_workers();
    pthread_mutex_unlock(&run_mu);
}

static int start_workers(int want)
{
    while (pool.n_workers < want) {
        if (pthread_create(&pool.tid[pool.n_workers], NULL, worker,
                           (void *)(size_t)(pool.n_workers + 1)) != 0)
            break;
        pool.n_workers++;
    }
    return pool.n_workers;
}

void ac_parallel_for(size_t n, size_t grain, ac_range_fn fn, void *ctx)
{
    if (n == 0) return;
    if (grain == 0) grain = 1;
    size_t threads = (size_t)ac_get_threads();
    size_t max_split = (n + grain - 1) / grain;
    if (threads > max_split) threads = max_split;
    /* Nested calls (a range function that itself runs a parallel loop),
     * calls from a second application thread, and single-thread pools run
     * inline. */
    if (threads <= 1 || pthread_mutex_trylock(&run_mu) != 0) {
        fn(ctx, 0, n);
        return;
    }
    int workers = start_workers((int)threads - 1);
    /* Only as many chunks as threads: idle workers take empty chunks. */
    size_t used = (size_t)workers + 1;
    size_t chunk = (n + used - 1) / used;
    chunk = (chunk + grain - 1) / grain * grain;

    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.chunk = chunk;
    atomic_store_explicit(&pool.pending, pool.n_workers, memory_order_relaxed);
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);

    run_chunk(0);

    for (int i = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) > 0; i++)
        if (i < 100000) cpu_relax();
        else sched_yield();
    pthread_mutex_unlock(&run_mu);
}
