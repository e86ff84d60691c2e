#include "ordered.h"

#include <pthread.h>
#include <stdlib.h>

#include "audioc.h"

typedef struct {
    int n, next, threads_each;
    char *finished;
    void (*work)(int, void *);
    void *user;
    pthread_mutex_t mu;
    pthread_cond_t changed;
} ordered;

static void *worker(void *arg)
{
    ordered *o = arg;
    ac_set_local_threads(o->threads_each);
    for (;;) {
        pthread_mutex_lock(&o->mu);
        int i = o->next < o->n ? o->next++ : -1;
        pthread_mutex_unlock(&o->mu);
        if (i < 0) break;
        o->work(i, o->user);
        pthread_mutex_lock(&o->mu);
        o->finished[i] = 1;
        pthread_cond_broadcast(&o->changed);
        pthread_mutex_unlock(&o->mu);
    }
    ac_set_local_threads(0);
    return NULL;
}

void run_ordered(int n, int parallel, void (*work)(int, void *), void (*done)(int, void *), void *user)
{
    if (parallel > n) parallel = n;
    int cores = ac_get_threads();
    ordered o = {.n = n, .threads_each = parallel > 1 && cores > parallel ? cores / parallel : 1,
                 .finished = calloc((size_t)n + 1, 1), .work = work, .user = user,
                 .mu = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
    pthread_t *tid = parallel > 1 && o.finished ? malloc((size_t)parallel * sizeof *tid) : NULL;
    int started = 0;
    while (tid && started < parallel && pthread_create(&tid[started], NULL, worker, &o) == 0) started++;
    if (!started) {   /* one at a time here, as asked or when no thread could start */
        for (int i = 0; i < n; i++) {
            work(i, user);
            done(i, user);
        }
    } else {
        for (int i = 0; i < n; i++) {
            pthread_mutex_lock(&o.mu);
            while (!o.finished[i]) pthread_cond_wait(&o.changed, &o.mu);
            pthread_mutex_unlock(&o.mu);
            done(i, user);
        }
        for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    }
    free(tid);
    free(o.finished);
    pthread_mutex_destroy(&o.mu);
    pthread_cond_destroy(&o.changed);
}
