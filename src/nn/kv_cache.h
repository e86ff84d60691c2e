/* The keys and values of self-attention for decoding: layers x beams x
 * positions, allocated once per request at a fixed capacity. A row holds
 * every KV head of one position ([kv_heads][head_dim]). The first SHARED
 * positions (a prompt every beam starts from) are held once for all beams:
 * with a long prompt (audio rows) they are most of the cache, and no beam
 * ever writes them again. */
#ifndef AC_NN_KV_CACHE_H
#define AC_NN_KV_CACHE_H

#include <stddef.h>

#include "audioc.h"
#include "base/arena.h"

typedef struct ac_kv_cache {
    int layers, beams, cap, shared;
    size_t width;       /* floats per row */
    float *sk, *sv;     /* [layer][shared][width]: positions [0, shared) */
    float *k, *v;       /* [layer][beam][cap - shared][width]: positions [shared, cap) */
    float *tmp;         /* one layer's own rows of every beam, for reorder */
} ac_kv_cache;

/* SHARED (0 .. CAP) positions held once; beams are given their own rows
 * from there on. */
ac_status ac_kv_cache_init(ac_kv_cache *c, int layers, int beams, int cap, int shared, size_t width, ac_arena *a);

/* Row POS of BEAM in LAYER; the rows of later positions follow it up to
 * the end of its part (shared or the beam's own). */
float *ac_kv_cache_k(const ac_kv_cache *c, int layer, int beam, int pos);
float *ac_kv_cache_v(const ac_kv_cache *c, int layer, int beam, int pos);

/* Stores one position's K and V rows; an error when out of range, or when
 * a beam other than 0 writes a shared position. */
ac_status ac_kv_cache_append(ac_kv_cache *c, int layer, int beam, int pos, const float *k, const float *v);

/* Beam b continues from beam PARENT[b]: positions [shared, len) of every
 * layer (the shared ones are every beam's already). */
void ac_kv_cache_reorder(ac_kv_cache *c, const int *parent, int len);

#endif
