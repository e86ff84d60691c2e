/* The keys and values of self-attention for decoding: layers x beams x
 * positions, allocated once per request at a fixed capacity. Each KV head
 * holds its positions contiguously ([kv_head][position][head_dim]), so a
 * head's keys are read as one stream (with every head in one row, a
 * 28-layer decoder of 8 heads of 128 read each head's keys 4 KB apart: a
 * new page a position). The first SHARED positions (a prompt every beam
 * starts from) are held once for all beams: with a long prompt (audio rows)
 * they are most of the cache, and no beam ever writes them again. */
#ifndef AC_NN_KV_CACHE_H
#define AC_NN_KV_CACHE_H

#include <stddef.h>

#include "audioc.h"
#include "base/arena.h"

typedef struct ac_kv_cache {
    int layers, beams, cap, shared, kv_heads;
    size_t head_dim;
    float *sk, *sv;     /* [layer][kv_head][shared][head_dim]: positions [0, shared) */
    float *k, *v;       /* [layer][beam][kv_head][cap - shared][head_dim]: positions [shared, cap) */
    float *tmp;         /* one layer's own rows of every beam, for reorder */
} ac_kv_cache;

/* SHARED (0 .. CAP) positions held once; beams are given their own rows
 * from there on. A position holds KV_HEADS heads of HEAD_DIM. */
ac_status ac_kv_cache_init(ac_kv_cache *c, int layers, int beams, int cap, int shared, int kv_heads,
                           size_t head_dim, ac_arena *a);

/* KV head 0's [head_dim] at position POS of BEAM in LAYER; the later
 * positions of its part (shared or the beam's own) follow it, head_dim
 * apart, and head h is ac_kv_cache_head_step floats after head 0. */
float *ac_kv_cache_k(const ac_kv_cache *c, int layer, int beam, int pos);
float *ac_kv_cache_v(const ac_kv_cache *c, int layer, int beam, int pos);

/* Floats from one KV head to the next in the part that holds POS. */
size_t ac_kv_cache_head_step(const ac_kv_cache *c, int pos);

/* Stores one position's K and V rows ([kv_heads][head_dim] each); an error
 * when out of range, or when a beam other than 0 writes a shared position. */
ac_status ac_kv_cache_append(ac_kv_cache *c, int layer, int beam, int pos, const float *k, const float *v);

/* Beam b continues from beam PARENT[b]: positions [shared, len) of every
 * layer (the shared ones are every beam's already). */
void ac_kv_cache_reorder(ac_kv_cache *c, const int *parent, int len);

#endif
