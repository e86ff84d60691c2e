#include "base/threadpool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"

#define MAX_THREADS 256

/* Workers sleep on a condition variable between jobs; a job is a
 * generation number plus the range function. Work is split statically:
 * thread i takes chunk i, which keeps results independent of timing. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t tid[MAX_THREADS];
    int n_threads;      /* configured size, including the caller */
    int n_workers;      /* started workers */
    unsigned long generation;
    int pending;        /* workers still running the current job */
    int stop;
    /* current job */
    ac_range_fn fn;
    void *ctx;
    size_t n, chunk;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;

static void run_chunk(size_t i)
{
    size_t b = i * pool.chunk;
    if (b >= pool.n) return;
    size_t e = b + pool.chunk < pool.n ? b + pool.chunk : pool.n;
    pool.fn(pool.ctx, b, e);
}

static void *worker(void *arg)
{
    size_t index = (size_t)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.stop && pool.generation == seen)
            pthread_cond_wait(&pool.wake, &pool.mu);
        if (pool.stop) break;
        seen = pool.generation;
        pthread_mutex_unlock(&pool.mu);
        run_chunk(index);
        pthread_mutex_lock(&pool.mu);
        if (--pool.pending == 0) pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.mu);
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
    pool.stop = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.n_workers; i++) pthread_join(pool.tid[i], NULL);
    pool.n_workers = 0;
    pool.stop = 0;
    pool.generation = 0;
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
    /* Nested calls (a range function that itself runs a parallel loop) and
     * single-thread pools run inline. */
    if (threads <= 1 || pthread_mutex_trylock(&run_mu) != 0) {
        fn(ctx, 0, n);
        return;
    }
    int workers = start_workers((int)threads - 1);
    threads = (size_t)workers + 1;
    size_t chunk = (n + threads - 1) / threads;
    chunk = (chunk + grain - 1) / grain * grain;

    pthread_mutex_lock(&pool.mu);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.chunk = chunk;
    pool.pending = workers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);

    run_chunk(0);

    pthread_mutex_lock(&pool.mu);
    while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&run_mu);
}
