#include "api/scratch.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"

static void unlink_scratch(ac_scratch *s)
{
    ac_scratch_pool *p = s->pool;
    if (s->prev) s->prev->next = s->next;
    else p->all = s->next;
    if (s->next) s->next->prev = s->prev;
}

static void scratch_free(ac_scratch *s)
{
    ac_arena_free(&s->call);
    ac_arena_free(&s->step);
    free(s);
}

/* A thread that called the model ends: its scratch goes with it. */
static void thread_done(void *arg)
{
    ac_scratch *s = arg;
    pthread_mutex_lock(&s->pool->mu);
    unlink_scratch(s);
    pthread_mutex_unlock(&s->pool->mu);
    scratch_free(s);
}

ac_status ac_scratch_pool_init(ac_scratch_pool *p)
{
    p->all = NULL;
    if (pthread_key_create(&p->key, thread_done) != 0)
        return ac_error(AC_ERR_NOMEM, "no thread-specific key left for a model's scratch");
    pthread_mutex_init(&p->mu, NULL);
    return AC_OK;
}

static ac_scratch *scratch_new(void)
{
    ac_scratch *s = ac_calloc(1, sizeof *s);
    if (!s) return NULL;
    ac_arena_init(&s->call, 1u << 20);
    ac_arena_init(&s->step, 16u << 20);
    return s;
}

ac_scratch *ac_scratch_take(ac_scratch_pool *p)
{
    ac_scratch *s = pthread_getspecific(p->key);
    if (s && s->busy) return scratch_new();   /* a nested call on this thread */
    if (!s) {
        if (!(s = scratch_new())) return NULL;
        if (pthread_setspecific(p->key, s) != 0) {
            scratch_free(s);
            ac_error(AC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        s->pool = p;
        pthread_mutex_lock(&p->mu);
        s->next = p->all;
        if (p->all) p->all->prev = s;
        p->all = s;
        pthread_mutex_unlock(&p->mu);
    }
    s->busy = 1;
    return s;
}

void ac_scratch_give(ac_scratch *s)
{
    if (!s) return;
    if (!s->pool) {
        scratch_free(s);
        return;
    }
    ac_arena_reset(&s->call);
    ac_arena_reset(&s->step);
    s->busy = 0;
}

void ac_scratch_pool_free(ac_scratch_pool *p)
{
    pthread_key_delete(p->key);   /* no thread_done from here on */
    for (ac_scratch *s = p->all, *next; s; s = next) {
        next = s->next;
        scratch_free(s);
    }
    p->all = NULL;
    pthread_mutex_destroy(&p->mu);
}

size_t ac_scratch_pool_capacity(ac_scratch_pool *p)
{
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    for (const ac_scratch *s = p->all; s; s = s->next) n += ac_arena_capacity(&s->call) + ac_arena_capacity(&s->step);
    pthread_mutex_unlock(&p->mu);
    return n;
}
