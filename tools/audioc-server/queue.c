/* A fixed set of worker threads taking jobs from two bounded FIFOs: quick
 * jobs (a VAD, a short transcription) and the rest. Every worker takes a
 * quick job first; the quick workers take nothing else, so a quick job
 * never waits behind long ones (speech that takes minutes). Each worker has
 * its own share of the thread budget (ac_set_local_threads), so concurrent
 * requests do not fight over one pool. One lock and condition variable
 * cover every job's state: requests are few, and this keeps the waiting
 * simple. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

static struct {
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* a job was queued, changed state or got events */
    struct lane {
        job **ring;
        int head, count;
    } lanes[2];               /* the quick jobs', the others' */
    int cap, count;           /* jobs waiting in both, at most cap */
    int stop;
    pthread_t *tid;
    job **running;            /* each worker's job, or NULL */
    int n_workers, threads_each, warm;
    int n_general;            /* workers 0..n_general-1 take any job, the rest quick jobs only (set before they start) */
    double timeout;           /* seconds a job's work may take (0: no limit) */
    double job_seconds;       /* a running mean of the jobs' work */
    void (*warm_up)(void *arg);
    void *warm_up_arg;
} q = {.mu = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static void deadline(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long long ns = ts->tv_nsec + (long long)(seconds * 1e9);
    ts->tv_sec += (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
}

/* The oldest waiting job of lane L (the lock held, its count > 0). */
static job *pop(int l)
{
    struct lane *x = &q.lanes[l];
    job *j = x->ring[x->head];
    x->head = (x->head + 1) % q.cap;
    x->count--;
    q.count--;
    return j;
}

/* The lane worker ME takes from next, or -1 when none has work for it. */
static int lane_for(int me)
{
    if (q.lanes[0].count) return 0;
    return me < q.n_general && q.lanes[1].count ? 1 : -1;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    ac_set_local_threads(q.threads_each);
    if (q.warm_up) q.warm_up(q.warm_up_arg);
    pthread_mutex_lock(&q.mu);
    q.warm++;
    pthread_cond_broadcast(&q.changed);
    for (;;) {
        while (lane_for(me) < 0 && !q.stop) pthread_cond_wait(&q.changed, &q.mu);
        if (lane_for(me) < 0) break;   /* stopping, and nothing left for it */
        job *j = pop(lane_for(me));
        j->state = JOB_RUNNING;
        q.running[me] = j;
        int stopping = q.stop;
        double t0 = ac_now();
        j->deadline = q.timeout > 0 ? t0 + q.timeout : 0;
        pthread_cond_broadcast(&q.changed);
        pthread_mutex_unlock(&q.mu);
        if (!atomic_load(&j->cancelled) && !stopping) j->run(j);
        pthread_mutex_lock(&q.mu);
        q.job_seconds += 0.2 * (ac_now() - t0 - q.job_seconds);
        q.running[me] = NULL;
        pthread_mutex_unlock(&q.mu);
        queue_finish(j);
        pthread_mutex_lock(&q.mu);
    }
    pthread_mutex_unlock(&q.mu);
    ac_set_local_threads(0);
    return NULL;
}

int queue_start(int workers, int quick_workers, int threads_per_worker, int max_queue, double timeout,
                void (*warm_up)(void *arg), void *arg)
{
    q.timeout = timeout;
    q.n_general = workers;
    workers += quick_workers;
    q.warm_up = warm_up;
    q.warm_up_arg = arg;
    q.cap = max_queue > 0 ? max_queue : 1;
    q.lanes[0].ring = calloc((size_t)q.cap, sizeof *q.lanes[0].ring);
    q.lanes[1].ring = calloc((size_t)q.cap, sizeof *q.lanes[1].ring);
    q.tid = calloc((size_t)workers, sizeof *q.tid);
    q.running = calloc((size_t)workers, sizeof *q.running);
    if (!q.lanes[0].ring || !q.lanes[1].ring || !q.tid || !q.running) return -1;
    q.threads_each = threads_per_worker;
    for (; q.n_workers < workers; q.n_workers++)
        if (pthread_create(&q.tid[q.n_workers], NULL, worker, (void *)(intptr_t)q.n_workers) != 0) return -1;
    pthread_mutex_lock(&q.mu);
    while (q.warm < q.n_workers) pthread_cond_wait(&q.changed, &q.mu);
    pthread_mutex_unlock(&q.mu);
    return 0;
}

int queue_submit(job *j)
{
    pthread_mutex_lock(&q.mu);
    /* a job waits only when every worker is busy; max_queue bounds the waiting */
    int ok = !q.stop && q.count < q.cap;
    if (ok) {
        struct lane *x = &q.lanes[j->quick ? 0 : 1];
        j->state = JOB_QUEUED;
        x->ring[(x->head + x->count++) % q.cap] = j;
        q.count++;
        pthread_cond_broadcast(&q.changed);
    }
    pthread_mutex_unlock(&q.mu);
    return ok ? 0 : -1;
}

int queue_full(void)
{
    pthread_mutex_lock(&q.mu);
    int full = q.stop || q.count >= q.cap;
    pthread_mutex_unlock(&q.mu);
    return full;
}

int job_stopped(job *j)
{
    int why = atomic_load(&j->cancelled);
    if (!why && j->deadline > 0 && ac_now() > j->deadline) {
        atomic_compare_exchange_strong(&j->cancelled, &why, JOB_DEADLINE);
        why = atomic_load(&j->cancelled);
    }
    return why;
}

void job_stop_message(int reason, char *out, size_t n)
{
    if (reason == JOB_DEADLINE)
        snprintf(out, n, "the request was stopped after %g s, the most work this server gives one request: ask for "
                 "less (a shorter input, fewer steps or tokens)", q.timeout);
    else snprintf(out, n, "%s", reason == JOB_STOPPED ? "the server is shutting down: the request was stopped at its "
                  "deadline" : "the request was cancelled");
}

int queue_retry_after(void)
{
    pthread_mutex_lock(&q.mu);
    double s = q.job_seconds * (q.count + 1) / (q.n_workers > 0 ? q.n_workers : 1);
    pthread_mutex_unlock(&q.mu);
    return s < 1 ? 1 : s > 60 ? 60 : (int)(s + 0.999);
}

int queue_wait(job *j, int want, int *events, double timeout)
{
    struct timespec ts;
    deadline(&ts, timeout);
    pthread_mutex_lock(&q.mu);
    int rc = 0;
    while (j->state < want && !(events && j->events.len) && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&q.changed, &q.mu, &ts);
    int state = j->state;
    if (events) *events = j->events.len > 0;
    pthread_mutex_unlock(&q.mu);
    return state;
}

void queue_push_event(job *j, const char *data, size_t n)
{
    pthread_mutex_lock(&q.mu);
    buffer_add(&j->events, data, n);
    pthread_cond_broadcast(&q.changed);
    pthread_mutex_unlock(&q.mu);
}

long queue_read_events(job *j, size_t pos, char *out, size_t max, double timeout)
{
    struct timespec ts;
    deadline(&ts, timeout);
    pthread_mutex_lock(&q.mu);
    int rc = 0;
    while (j->events.len <= pos && j->state != JOB_DONE && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&q.changed, &q.mu, &ts);
    long n = 0;
    if (j->events.len > pos) {
        size_t k = j->events.len - pos < max ? j->events.len - pos : max;
        memcpy(out, j->events.data + pos, k);
        n = (long)k;
    } else if (j->state == JOB_DONE) {
        n = -1;
    }
    pthread_mutex_unlock(&q.mu);
    return n;
}

void queue_finish(job *j)
{
    pthread_mutex_lock(&q.mu);
    j->state = JOB_DONE;
    pthread_cond_broadcast(&q.changed);
    pthread_mutex_unlock(&q.mu);
}

int queue_cancel_running(void)
{
    int n = 0;
    pthread_mutex_lock(&q.mu);
    for (int i = 0; i < q.n_workers; i++)
        if (q.running[i]) atomic_store(&q.running[i]->cancelled, JOB_STOPPED), n++;
    pthread_mutex_unlock(&q.mu);
    return n;
}

void queue_stop(void)
{
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    /* jobs still waiting are dropped: their requests see them done with no result */
    for (int l = 0; l < 2; l++)
        while (q.lanes[l].count) pop(l)->state = JOB_DONE;
    pthread_cond_broadcast(&q.changed);
    pthread_mutex_unlock(&q.mu);
    for (int i = 0; i < q.n_workers; i++) pthread_join(q.tid[i], NULL);
    free(q.tid);
    for (int l = 0; l < 2; l++) {
        free(q.lanes[l].ring);
        q.lanes[l].ring = NULL;
    }
    free(q.running);
    q.running = NULL;
    q.tid = NULL;
    q.n_workers = 0;
}
