#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"
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
typedef struct pool pool;
typedef struct {
    pool *p;
    size_t index;
} worker_arg;

struct pool {
    pthread_mutex_t run_mu; /* held by the thread running a loop on this pool */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t tid[MAX_THREADS];
    worker_arg args[MAX_THREADS];
    int n_threads;      /* configured size, including the caller */
    int n_workers;      /* started workers */
    atomic_ulong generation;
    atomic_int pending; /* workers still running the current job */
    atomic_int stop;
    /* current job, published by the generation increment */
    ac_range_fn fn;
    void *ctx;
    size_t n, chunk;
};

/* The process-wide pool, and a thread's own pool (ac_set_local_threads). */
static pool global = {.run_mu = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER,
                      .wake = PTHREAD_COND_INITIALIZER};
static _Thread_local pool *local;

static pool *current(void) { return local ? local : &global; }

static void run_chunk(pool *p, size_t i)
{
    size_t b = i * p->chunk;
    if (b >= p->n) return;
    size_t e = b + p->chunk < p->n ? b + p->chunk : p->n;
    p->fn(p->ctx, b, e);
}

static unsigned long wait_generation(pool *p, unsigned long seen)
{
    double start = ac_now();
    unsigned long g;
    for (int i = 0;; i++) {
        g = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (g != seen || atomic_load(&p->stop)) return g;
        cpu_relax();
        if ((i & 255) == 255 && ac_now() - start > SPIN_SECONDS) break;
    }
    pthread_mutex_lock(&p->mu);
    while ((g = atomic_load(&p->generation)) == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return g;
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    local = p == &global ? NULL : p; /* nested loops see their pool busy and run inline */
    unsigned long seen = 0;
    for (;;) {
        seen = wait_generation(p, seen);
        if (atomic_load(&p->stop)) break;
        run_chunk(p, w->index);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
    }
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static void stop_workers(pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++) pthread_join(p->tid[i], NULL);
    p->n_workers = 0;
    atomic_store(&p->stop, 0);
    atomic_store(&p->generation, 0);
}

static ac_status check_count(int n)
{
    if (n < 1 || n > MAX_THREADS)
        return ac_error(AC_ERR_ARG, "thread count %d is out of range 1..%d", n, MAX_THREADS);
    return AC_OK;
}

ac_status ac_set_threads(int n)
{
    AC_TRY(check_count(n));
    pthread_mutex_lock(&global.run_mu);
    stop_workers(&global);
    global.n_threads = n;
    pthread_mutex_unlock(&global.run_mu);
    return AC_OK;
}

static void free_local(void)
{
    if (!local) return;
    stop_workers(local);
    pthread_mutex_destroy(&local->run_mu);
    pthread_mutex_destroy(&local->mu);
    pthread_cond_destroy(&local->wake);
    free(local);
    local = NULL;
}

ac_status ac_set_local_threads(int n)
{
    if (n == 0) {
        free_local();
        return AC_OK;
    }
    AC_TRY(check_count(n));
    free_local();
    pool *p = ac_calloc(1, sizeof *p);
    if (!p) return AC_ERR_NOMEM;
    pthread_mutex_init(&p->run_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->n_threads = n;
    local = p;
    return AC_OK;
}

int ac_get_threads(void)
{
    pool *p = current();
    if (!p->n_threads) p->n_threads = default_threads();
    return p->n_threads;
}

void ac_threadpool_shutdown(void)
{
    free_local();
    pthread_mutex_lock(&global.run_mu);
    stop_workers(&global);
    pthread_mutex_unlock(&global.run_mu);
}

static int start_workers(pool *p, int want)
{
    while (p->n_workers < want) {
        worker_arg *w = &p->args[p->n_workers];
        *w = (worker_arg){p, (size_t)p->n_workers + 1};
        if (pthread_create(&p->tid[p->n_workers], NULL, worker, w) != 0) break;
        p->n_workers++;
    }
    return p->n_workers;
}

void ac_parallel_for(size_t n, size_t grain, ac_range_fn fn, void *ctx)
{
    if (n == 0) return;
    if (grain == 0) grain = 1;
    pool *p = current();
    size_t threads = (size_t)ac_get_threads();
    size_t max_split = (n + grain - 1) / grain;
    if (threads > max_split) threads = max_split;
    /* Nested calls (a range function that itself runs a parallel loop),
     * calls from a second application thread, and single-thread pools run
     * inline. */
    if (threads <= 1 || pthread_mutex_trylock(&p->run_mu) != 0) {
        fn(ctx, 0, n);
        return;
    }
    int workers = start_workers(p, (int)threads - 1);
    /* Only as many chunks as threads: idle workers take empty chunks. */
    size_t used = (size_t)workers + 1;
    size_t chunk = (n + used - 1) / used;
    chunk = (chunk + grain - 1) / grain * grain;

    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk;
    atomic_store_explicit(&p->pending, p->n_workers, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    run_chunk(p, 0);

    for (int i = 0; atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++)
        if (i < 100000) cpu_relax();
        else sched_yield();
    pthread_mutex_unlock(&p->run_mu);
}
