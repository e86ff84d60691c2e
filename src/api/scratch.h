/* Scratch memory of a model's calls, kept between calls: each thread that
 * calls a model gets its own set of arenas for that model, made on its
 * first call and reused (reset, keeping their largest block) by its next
 * ones. A server's workers sharing one model so each keep theirs, and
 * memory stays flat once every worker has run. */
#ifndef AC_API_SCRATCH_H
#define AC_API_SCRATCH_H

#include <pthread.h>

#include "audioc.h"
#include "base/arena.h"

typedef struct ac_scratch ac_scratch;

typedef struct {
    pthread_key_t key;     /* the calling thread's scratch */
    pthread_mutex_t mu;
    ac_scratch *all;       /* every thread's scratch, for freeing */
} ac_scratch_pool;

struct ac_scratch {
    ac_arena call;         /* lives for the whole call */
    ac_arena step;         /* reset by the family between steps (chunks) */
    ac_scratch_pool *pool; /* NULL: made for one nested call only */
    ac_scratch *prev, *next;
    int busy;
};

ac_status ac_scratch_pool_init(ac_scratch_pool *p);
/* The calling thread's scratch (a temporary one when a callback calls the
 * same model again); NULL when out of memory. */
ac_scratch *ac_scratch_take(ac_scratch_pool *p);
void ac_scratch_give(ac_scratch *s);
/* Frees every thread's scratch; no call may be running. */
void ac_scratch_pool_free(ac_scratch_pool *p);
/* Bytes held by all the scratch of the pool (for tests). */
size_t ac_scratch_pool_capacity(ac_scratch_pool *p);

#endif
