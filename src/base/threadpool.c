#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"
#include "base/timing.h"

#define MAX_THREADS 256
#define PIECES_PER_THREAD 4  /* a loop's pieces per pool thread */
#define SPIN_SECONDS 50e-6   /* spin this long (for the next loop, for the last pieces) before sleeping or yielding */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* A loop is cut into pieces (about PIECES_PER_THREAD per thread, multiples
 * of the grain) that the caller and the workers claim one at a time: a
 * thread the system takes away holds up at most the piece it is running,
 * and the others finish the rest. Where the pieces start depends only on
 * n, the grain and the pool's size, never on timing, so a kernel whose
 * sums depend on a range's start still gives the same bits every run.
 *
 * The word `work` holds the loop's number (high 32 bits), its piece count
 * and the next piece to claim (16 bits each): a claim is one
 * compare-exchange, and a late worker can never claim a piece of a loop it
 * did not see published. Workers wait for a new loop number: spinning
 * briefly (kernels come in quick succession), then on a condition
 * variable; the caller does not wait for them to wake, it claims pieces
 * itself. */
typedef struct pool pool;
typedef struct {
    pool *p;
    uint32_t seen; /* the loop number when the worker started */
} worker_arg;

struct pool {
    pthread_mutex_t run_mu; /* held by the thread running a loop on this pool */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t tid[MAX_THREADS];
    worker_arg args[MAX_THREADS];
    int n_threads;      /* configured size, including the caller */
    int n_workers;      /* started workers */
    _Atomic uint64_t work;
    atomic_size_t done; /* pieces of the current loop finished */
    atomic_int stop;
    /* the current loop, published by the release store of `work` */
    ac_range_fn fn;
    void *ctx;
    size_t n, piece;
};

/* The process-wide pool, and a thread's own pool (ac_set_local_threads). */
static pool global = {.run_mu = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER,
                      .wake = PTHREAD_COND_INITIALIZER};
static _Thread_local pool *local;

static pool *current(void) { return local ? local : &global; }

static uint32_t loop_number(uint64_t w) { return (uint32_t)(w >> 32); }
static size_t piece_count(uint64_t w) { return (size_t)(w >> 16 & 0xffff); }
static size_t next_piece(uint64_t w) { return (size_t)(w & 0xffff); }

/* Claims and runs pieces of the current loop until none is left. */
static void run_pieces(pool *p)
{
    uint64_t w = atomic_load_explicit(&p->work, memory_order_acquire);
    while (next_piece(w) < piece_count(w)) {
        if (!atomic_compare_exchange_weak_explicit(&p->work, &w, w + 1, memory_order_acq_rel, memory_order_acquire))
            continue;
        /* the loop cannot end (nor its fields change) before this piece is done */
        size_t b = next_piece(w) * p->piece, e = b + p->piece < p->n ? b + p->piece : p->n;
        p->fn(p->ctx, b, e);
        atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
        w = atomic_load_explicit(&p->work, memory_order_acquire);
    }
}

static uint32_t wait_loop(pool *p, uint32_t seen)
{
    double start = ac_now();
    for (int i = 1;; i++) {
        uint32_t g = loop_number(atomic_load_explicit(&p->work, memory_order_acquire));
        if (g != seen || atomic_load(&p->stop)) return g;
        cpu_relax();
        if (i % 64 == 0) { /* a busy machine may have a thread of ours waiting for this core */
            if (ac_now() - start > SPIN_SECONDS) break;
            sched_yield();
        }
    }
    uint32_t g;
    pthread_mutex_lock(&p->mu);
    while ((g = loop_number(atomic_load(&p->work))) == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return g;
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    local = p == &global ? NULL : p; /* nested loops see their pool busy and run inline */
    for (uint32_t seen = w->seen;;) {
        seen = wait_loop(p, seen);
        if (atomic_load(&p->stop)) break;
        run_pieces(p);
    }
    return NULL;
}

/* The physical cores this process may run on: logical CPUs that share a
 * core (SMT) would only compete for its FMA units. */
static int default_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
    }
    long cores[CPU_SETSIZE];
    int n = 0, cpus = CPU_COUNT(&set);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        char path[96];
        long core = -1, package = -1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%ld", &core) != 1) core = -1;
        if (f) fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        f = fopen(path, "r");
        if (f && fscanf(f, "%ld", &package) != 1) package = -1;
        if (f) fclose(f);
        if (core < 0 || package < 0) { /* no topology: count logical CPUs */
            n = cpus;
            break;
        }
        long id = package << 20 | core;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = cores[i] == id;
        if (!seen) cores[n++] = id;
    }
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
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
}

static ac_status check_count(int n)
{
    if (n < 1 || n > MAX_THREADS)
        return ac_error(AC_ERR_ARG, "thread count %d is out of range 1..%d", n, MAX_THREADS);
    return AC_OK;
}

ac_status ac_set_threads(int n)
{
    ac_error_clear();
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
    ac_error_clear();
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
        *w = (worker_arg){p, loop_number(atomic_load(&p->work))};
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
    size_t grains = (n + grain - 1) / grain;
    /* Nested calls (a range function that itself runs a parallel loop),
     * calls from a second application thread, and single-thread pools run
     * inline. */
    if (threads <= 1 || grains <= 1 || pthread_mutex_trylock(&p->run_mu) != 0) {
        fn(ctx, 0, n);
        return;
    }
    size_t pieces = threads * PIECES_PER_THREAD < grains ? threads * PIECES_PER_THREAD : grains;
    size_t piece = (grains + pieces - 1) / pieces * grain;
    pieces = (n + piece - 1) / piece;
    start_workers(p, (int)(threads < pieces ? threads : pieces) - 1);

    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->piece = piece;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    uint64_t number = (uint64_t)(loop_number(atomic_load(&p->work)) + 1u);
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->work, number << 32 | (uint64_t)pieces << 16, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    run_pieces(p);
    /* the last pieces are the workers': a thread that holds one may have
     * lost its core, so after a short spin give ours away */
    double start = 0;
    for (int i = 1; atomic_load_explicit(&p->done, memory_order_acquire) < pieces; i++) {
        if (i == 256) start = ac_now();
        if (i < 256 || ac_now() - start < SPIN_SECONDS) cpu_relax();
        else sched_yield();
    }
    pthread_mutex_unlock(&p->run_mu);
}
