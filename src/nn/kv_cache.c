#include "nn/kv_cache.h"

#include <string.h>

#include "base/error.h"

ac_status ac_kv_cache_init(ac_kv_cache *c, int layers, int beams, int cap, int shared, int kv_heads,
                           size_t head_dim, ac_arena *a)
{
    if (layers < 1 || beams < 1 || cap < 1 || kv_heads < 1 || head_dim < 1 || shared < 0 || shared > cap)
        return ac_error(AC_ERR_ARG, "KV cache of %d layers, %d beams, %d positions (%d shared), %d heads of %zu",
                        layers, beams, cap, shared, kv_heads, head_dim);
    size_t width = (size_t)kv_heads * head_dim;
    size_t own = (size_t)layers * (size_t)beams * (size_t)(cap - shared), common = (size_t)layers * (size_t)shared;
    *c = (ac_kv_cache){.layers = layers, .beams = beams, .cap = cap, .shared = shared, .kv_heads = kv_heads,
                       .head_dim = head_dim};
    c->sk = ac_arena_floats(a, common * width + 1);
    c->sv = ac_arena_floats(a, common * width + 1);
    c->k = ac_arena_floats(a, own * width + 1);
    c->v = ac_arena_floats(a, own * width + 1);
    c->tmp = ac_arena_floats(a, (size_t)beams * (size_t)(cap - shared) * width + 1);
    return c->sk && c->sv && c->k && c->v && c->tmp ? AC_OK : AC_ERR_NOMEM;
}

size_t ac_kv_cache_head_step(const ac_kv_cache *c, int pos)
{
    return (size_t)(pos < c->shared ? c->shared : c->cap - c->shared) * c->head_dim;
}

/* The start of LAYER's (and, past the shared part, BEAM's) block */
static size_t block_at(const ac_kv_cache *c, int layer, int beam, int pos)
{
    size_t heads = (size_t)c->kv_heads;
    if (pos < c->shared) return (size_t)layer * heads * ac_kv_cache_head_step(c, pos);
    return ((size_t)layer * (size_t)c->beams + (size_t)beam) * heads * ac_kv_cache_head_step(c, pos);
}

static size_t row_at(const ac_kv_cache *c, int layer, int beam, int pos)
{
    return block_at(c, layer, beam, pos) + (size_t)(pos < c->shared ? pos : pos - c->shared) * c->head_dim;
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
    float *kd = ac_kv_cache_k(c, layer, beam, pos), *vd = ac_kv_cache_v(c, layer, beam, pos);
    size_t step = ac_kv_cache_head_step(c, pos), dk = c->head_dim;
    for (size_t h = 0; h < (size_t)c->kv_heads; h++) {
        memcpy(kd + h * step, k + h * dk, dk * sizeof *k);
        memcpy(vd + h * step, v + h * dk, dk * sizeof *v);
    }
    return AC_OK;
}

/* Only the beams that change parent are copied (each step of a beam search
 * whose beams keep their lines costs nothing): every read of the old rows
 * goes to TMP before any beam is written. A beam's own block is
 * [kv_head][cap - shared][head_dim]: each head's first LEN - shared rows. */
void ac_kv_cache_reorder(ac_kv_cache *c, const int *parent, int len)
{
    int moved = 0;
    for (int b = 0; b < c->beams; b++) moved |= parent[b] != b;
    if (!moved || len <= c->shared) return;
    size_t step = ac_kv_cache_head_step(c, c->shared), heads = (size_t)c->kv_heads;
    size_t bytes = (size_t)(len - c->shared) * c->head_dim * sizeof(float), block = heads * step;
    for (int l = 0; l < c->layers; l++)
        for (int which = 0; which < 2; which++) {
            float *(*at)(const ac_kv_cache *, int, int, int) = which ? ac_kv_cache_v : ac_kv_cache_k;
            for (int b = 0; b < c->beams; b++)
                if (parent[b] != b)
                    for (size_t h = 0; h < heads; h++)
                        memcpy(c->tmp + (size_t)b * block + h * step, at(c, l, parent[b], c->shared) + h * step,
                               bytes);
            for (int b = 0; b < c->beams; b++)
                if (parent[b] != b)
                    for (size_t h = 0; h < heads; h++)
                        memcpy(at(c, l, b, c->shared) + h * step, c->tmp + (size_t)b * block + h * step, bytes);
        }
}
