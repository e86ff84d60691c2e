/* The trace hook: a family hands named intermediate results to a caller's
 * callback as it computes them (a layer's output, a stage's ids), so that
 * a test can compare each stage with its reference through the same calls
 * a user makes. Production callers leave it empty, and then nothing is
 * copied or kept. */
#ifndef AC_BASE_TRACE_H
#define AC_BASE_TRACE_H

#include <stddef.h>

/* NAME is the stage ("layer", "encoder_proj", "ids"), LAYER its layer or
 * -1, DATA its BYTES as the family documents them (f32 or int32 arrays,
 * text). DATA lives only for the call. */
typedef void (*ac_trace_fn)(void *user, const char *name, int layer, const void *data, size_t bytes);

typedef struct ac_trace {
    ac_trace_fn fn; /* NULL: no trace */
    void *user;
} ac_trace;

static inline void ac_trace_put(const ac_trace *t, const char *name, int layer, const void *data, size_t bytes)
{
    if (t && t->fn) t->fn(t->user, name, layer, data, bytes);
}

#endif
