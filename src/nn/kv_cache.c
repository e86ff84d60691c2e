#include "nn/kv_cache.h"

#include <string.h>

#include "base/error.h"

ac_status ac_kv_cache_init(ac_kv_cache *c, int layers, int beams, int cap, int shared, size_t width, ac_arena *a)
{
    if (layers < 1 || beams < 1 || cap < 1 || width < 1 || shared < 0 || shared > cap)
        return ac_error(AC_ERR_ARG, "KV cache of %d layers, %d beams, %d positions (%d shared), width %zu", layers,
                        beams, cap, shared, width);
    size_t own = (size_t)layers * (size_t)beams * (size_t)(cap - shared), common = (size_t)layers * (size_t)shared;
    *c = (ac_kv_cache){.layers = layers, .beams = beams, .cap = cap, .shared = shared, .width = width};
    c->sk = ac_arena_floats(a, common * width + 1);
    c->sv = ac_arena_floats(a, common * width + 1);
    c->k = ac_arena_floats(a, own * width + 1);
    c->v = ac_arena_floats(a, own * width + 1);
    c->tmp = ac_arena_floats(a, (size_t)beams * (size_t)(cap - shared) * width + 1);
    return c->sk && c->sv && c->k && c->v && c->tmp ? AC_OK : AC_ERR_NOMEM;
}

static size_t row_at(const ac_kv_cache *c, int layer, int beam, int pos)
{
    if (pos < c->shared) return ((size_t)layer * (size_t)c->shared + (size_t)pos) * c->width;
    size_t own = (size_t)(c->cap - c->shared);
    return (((size_t)layer * (size_t)c->beams + (size_t)beam) * own + (size_t)(pos - c->shared)) * c->width;
}

float *ac_kv_cache_k(const ac_kv_cache *c, int layer, int beam, int pos)
{
    return (pos < c->shared ? c->sk : c->k) + row_at(c, layer, beam, pos);
}

float *ac_kv_cache_v(const ac_kv_cache *c, int layer, int beam, int pos)
{
    return (pos < c->shared ? c->sv : c->v) + row_at(c, layer, beam, pos);
}

ac_status ac_kv_cache_append(ac_kv_cache *c, int layer, int beam, int pos, const float *k, const float *v)
{
    if (layer < 0 || layer >= c->layers || beam < 0 || beam >= c->beams || pos < 0 || pos >= c->cap)
        return ac_error(AC_ERR_ARG, "KV cache: layer %d, beam %d, position %d is outside %d x %d x %d", layer, beam,
                        pos, c->layers, c->beams, c->cap);
    if (pos < c->shared && beam != 0)
        return ac_error(AC_ERR_ARG, "KV cache: position %d is shared by every beam; beam %d may not write it", pos,
                        beam);
    memcpy(ac_kv_cache_k(c, layer, beam, pos), k, c->width * sizeof *k);
    memcpy(ac_kv_cache_v(c, layer, beam, pos), v, c->width * sizeof *v);
    return AC_OK;
}

/* Only the beams that change parent are copied (each step of a beam search
 * whose beams keep their lines costs nothing): every read of the old rows
 * goes to TMP before any beam is written. */
void ac_kv_cache_reorder(ac_kv_cache *c, const int *parent, int len)
{
    int moved = 0;
    for (int b = 0; b < c->beams; b++) moved |= parent[b] != b;
    if (!moved || len <= c->shared) return;
    size_t row = (size_t)(len - c->shared) * c->width, bytes = row * sizeof(float);
    for (int l = 0; l < c->layers; l++)
        for (int which = 0; which < 2; which++) {
            float *(*at)(const ac_kv_cache *, int, int, int) = which ? ac_kv_cache_v : ac_kv_cache_k;
            for (int b = 0; b < c->beams; b++)
                if (parent[b] != b) memcpy(c->tmp + (size_t)b * row, at(c, l, parent[b], c->shared), bytes);
            for (int b = 0; b < c->beams; b++)
                if (parent[b] != b) memcpy(at(c, l, b, c->shared), c->tmp + (size_t)b * row, bytes);
        }
}
