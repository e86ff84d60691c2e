/* Rows of f32 into the K-quants' blocks (layouts in quant.h). Not ggml's
 * search for the best scales: each sub-block's scale covers its range and
 * the 6- or 8-bit scales round up, so no value is clipped by more than a
 * rounding of the f16 super-block scale. The error of a value is at most
 * half a step of its sub-block plus, for Q4_K, half a step of the mins
 * (tests/ref/kquant_ref.py holds the bound). */
#include "tensor/quant_k.h"

#include <math.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/quant.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The f16 value nearest V, as f32 (what a block stores and reads back). */
static float f16_round(float v, uint16_t *h)
{
    *h = ac_f32_to_f16(v);
    return ac_f16_to_f32(*h);
}

static void q4_k_block(const float *x, ac_block_q4_k *b)
{
    float range[8], lift[8], max_range = 0, max_lift = 0;
    for (int j = 0; j < 8; j++) {
        float lo = 0, hi = 0; /* the range always holds 0: mins are stored as non-negative lifts */
        for (int l = 0; l < 32; l++) {
            lo = fminf(lo, x[32 * j + l]);
            hi = fmaxf(hi, x[32 * j + l]);
        }
        range[j] = hi - lo;
        lift[j] = lo < 0 ? -lo : 0.0f; /* never -0: the block stores +0 */
        max_range = fmaxf(max_range, range[j]);
        max_lift = fmaxf(max_lift, lift[j]);
    }
    uint16_t hd, hm;
    float d = f16_round(max_range / (15.0f * 63.0f), &hd), dmin = f16_round(max_lift / 63.0f, &hm);
    b->d = hd;
    b->dmin = hm;
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        m[j] = dmin > 0 ? clampi((int)lrintf(lift[j] / dmin), 0, 63) : 0;
        /* the step covers the sub-block's top after its lift is rounded */
        float top = range[j] - lift[j] + dmin * (float)m[j];
        sc[j] = d > 0 ? clampi((int)ceilf(top / (15.0f * d)), 0, 63) : 0;
    }
    memset(b->scales, 0, sizeof b->scales);
    for (int j = 0; j < 4; j++) {
        b->scales[j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        b->scales[j + 4] = (uint8_t)((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        b->scales[j + 8] = (uint8_t)((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
    for (int j = 0; j < 8; j++) {
        float step = d * (float)sc[j], base = dmin * (float)m[j];
        uint8_t *q = b->qs + 32 * (j / 2);
        for (int l = 0; l < 32; l++) {
            int v = step > 0 ? clampi((int)lrintf((x[32 * j + l] + base) / step), 0, 15) : 0;
            if (j % 2 == 0) q[l] = (uint8_t)v;
            else q[l] |= (uint8_t)(v << 4);
        }
    }
}

static void q6_k_block(const float *x, ac_block_q6_k *b)
{
    float amax[16], top = 0;
    for (int j = 0; j < 16; j++) {
        amax[j] = 0;
        for (int l = 0; l < 16; l++) amax[j] = fmaxf(amax[j], fabsf(x[16 * j + l]));
        top = fmaxf(top, amax[j]);
    }
    uint16_t hd;
    float d = f16_round(top / (31.0f * 127.0f), &hd);
    b->d = hd;
    int q[AC_QK_K];
    for (int j = 0; j < 16; j++) {
        int sc = d > 0 ? clampi((int)ceilf(amax[j] / (31.0f * d)), 0, 127) : 0;
        b->scales[j] = (int8_t)sc;
        float step = d * (float)sc;
        for (int l = 0; l < 16; l++)
            q[16 * j + l] = (step > 0 ? clampi((int)lrintf(x[16 * j + l] / step), -32, 31) : 0) + 32;
    }
    for (int h = 0; h < 2; h++) {
        const int *v = q + 128 * h;
        uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
        for (int l = 0; l < 32; l++) {
            ql[l] = (uint8_t)((v[l] & 15) | ((v[l + 64] & 15) << 4));
            ql[l + 32] = (uint8_t)((v[l + 32] & 15) | ((v[l + 96] & 15) << 4));
            qh[l] = (uint8_t)((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
        }
    }
}

void ac_quantize_q4_k(const float *x, void *out, size_t n)
{
    for (size_t i = 0; i < n / AC_QK_K; i++) {
        ac_block_q4_k b;
        q4_k_block(x + i * AC_QK_K, &b);
        memcpy((unsigned char *)out + i * sizeof b, &b, sizeof b);
    }
}

void ac_quantize_q6_k(const float *x, void *out, size_t n)
{
    for (size_t i = 0; i < n / AC_QK_K; i++) {
        ac_block_q6_k b;
        q6_k_block(x + i * AC_QK_K, &b);
        memcpy((unsigned char *)out + i * sizeof b, &b, sizeof b);
    }
}
