/* The keys and values of self-attention for decoding: layers x beams x
 * positions, allocated once per request at a fixed capacity. A row holds
 * every KV head of one position ([kv_heads][head_dim]). */
#ifndef AC_NN_KV_CACHE_H
#define AC_NN_KV_CACHE_H

#include <stddef.h>

#include "audioc.h"
#include "base/arena.h"

typedef struct ac_kv_cache {
    int layers, beams, cap;
    size_t width;       /* floats per row */
    float *k, *v;       /* [layer][beam][cap][width] */
    float *tmp;         /* one layer's rows of every beam, for reorder */
} ac_kv_cache;

ac_status ac_kv_cache_init(ac_kv_cache *c, int layers, int beams, int cap, size_t width, ac_arena *a);

/* Row POS of BEAM in LAYER; the rows of later positions follow it. */
float *ac_kv_cache_k(const ac_kv_cache *c, int layer, int beam, int pos);
float *ac_kv_cache_v(const ac_kv_cache *c, int layer, int beam, int pos);

/* Stores one position's K and V rows; an error when out of range. */
ac_status ac_kv_cache_append(ac_kv_cache *c, int layer, int beam, int pos, const float *k, const float *v);

/* Beam b continues from beam PARENT[b]: positions [0, len) of every layer. */
void ac_kv_cache_reorder(ac_kv_cache *c, const int *parent, int len);

#endif
