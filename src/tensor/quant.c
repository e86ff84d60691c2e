/* Rows to and from the stored weight types (layouts in quant.h). */
#include "tensor/quant.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/dispatch.h"
#include "tensor/mat.h"
#include "tensor/quant_k.h"

static float f16_at(const unsigned char *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return ac_f16_to_f32(h);
}

/* One block of 32 values as int8 Q, scaled by the returned d = amax/127:
 * the one quantization of weights and activations alike. */
static float quantize_block_q8(const float *x, int8_t *q)
{
    /* written so that the compiler inlines and vectorizes it: a comparison
     * for fmaxf (a NaN is passed over alike), and rounding to nearest even
     * by adding and taking away 1.5 * 2^23 (exact for |v| < 2^22; here
     * |v| <= 127) for lrintf */
    const float round = 12582912.0f;
    float amax = 0;
    for (int i = 0; i < AC_QK8_0; i++) {
        float a = fabsf(x[i]);
        amax = a > amax ? a : amax;
    }
    float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
    for (int i = 0; i < AC_QK8_0; i++) q[i] = (int8_t)(int32_t)((x[i] * id + round) - round);
    return d;
}

/* As activations are quantized, through the level's kernel (the same bits
 * as quantize_block_q8: weights converted at load go through here), the
 * scale then stored in f16. */
static void quantize_q8_0(const float *x, unsigned char *out, size_t n)
{
    enum { BLOCKS = 64 };
    ac_block_q8_act act[BLOCKS];
    for (size_t b0 = 0; b0 < n / AC_QK8_0; b0 += BLOCKS) {
        size_t nb = n / AC_QK8_0 - b0 < BLOCKS ? n / AC_QK8_0 - b0 : BLOCKS;
        ac_kernels()->quantize_q8_act(x + b0 * AC_QK8_0, act, nb * AC_QK8_0);
        for (size_t b = 0; b < nb; b++, out += sizeof(ac_block_q8_0)) {
            uint16_t h = ac_f32_to_f16(act[b].d);
            memcpy(out, &h, 2);
            memcpy(out + 2, act[b].qs, AC_QK8_0);
        }
    }
}

void ac_quantize_q8_act(const float *x, ac_block_q8_act *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK8_0; b++, x += AC_QK8_0, out++) {
        out->d = quantize_block_q8(x, out->qs);
        out->sum = 0;
        for (int i = 0; i < AC_QK8_0; i++) out->sum += out->qs[i];
    }
}

void ac_round_q8_act(const float *x, float *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK8_0; b++, x += AC_QK8_0, out += AC_QK8_0) {
        int8_t q[AC_QK8_0];
        float d = quantize_block_q8(x, q);
        for (int i = 0; i < AC_QK8_0; i++) out[i] = d * (float)q[i];
    }
}

void ac_round_bf16_act(const float *x, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = ac_bf16_to_f32(ac_f32_to_bf16(x[i]));
}

static void dequantize_q8_0(const unsigned char *p, float *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK8_0; b++, p += sizeof(ac_block_q8_0), out += AC_QK8_0) {
        float d = f16_at(p);
        for (int i = 0; i < AC_QK8_0; i++) out[i] = d * (float)(int8_t)p[2 + i];
    }
}

static void dequantize_q4_k(const unsigned char *p, float *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK_K; b++, p += sizeof(ac_block_q4_k)) {
        ac_block_q4_k blk;
        memcpy(&blk, p, sizeof blk);
        float d = ac_f16_to_f32(blk.d), dmin = ac_f16_to_f32(blk.dmin);
        for (int pair = 0; pair < 4; pair++) {
            const uint8_t *q = blk.qs + 32 * pair;
            for (int half = 0; half < 2; half++) {
                int sc, m;
                ac_q4_k_scale_min(blk.scales, 2 * pair + half, &sc, &m);
                float a = d * (float)sc, c = dmin * (float)m;
                for (int l = 0; l < 32; l++) *out++ = a * (float)(half ? q[l] >> 4 : q[l] & 15) - c;
            }
        }
    }
}

static void dequantize_q6_k(const unsigned char *p, float *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK_K; b++, p += sizeof(ac_block_q6_k)) {
        ac_block_q6_k blk;
        memcpy(&blk, p, sizeof blk);
        float d = ac_f16_to_f32(blk.d);
        for (int h = 0; h < 2; h++, out += 128) {
            const uint8_t *ql = blk.ql + 64 * h, *qh = blk.qh + 32 * h;
            const int8_t *sc = blk.scales + 8 * h;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int q1 = ((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32;
                int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
                int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                out[l] = d * (float)sc[is] * (float)q1;
                out[l + 32] = d * (float)sc[is + 2] * (float)q2;
                out[l + 64] = d * (float)sc[is + 4] * (float)q3;
                out[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

int ac_quantize_row(ac_dtype t, const float *x, void *out, size_t n)
{
    unsigned char *o = out;
    if (n % ac_dtype_block(t)) return -1;
    switch (t) {
    case AC_DTYPE_F32: memcpy(out, x, n * sizeof *x); return 0;
    case AC_DTYPE_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = ac_f32_to_f16(x[i]);
            memcpy(o + 2 * i, &h, 2);
        }
        return 0;
    case AC_DTYPE_BF16: ac_f32_to_bf16_n(x, o, n); return 0;
    case AC_DTYPE_Q8_0: quantize_q8_0(x, o, n); return 0;
    case AC_DTYPE_Q4_K: ac_quantize_q4_k(x, o, n); return 0;
    case AC_DTYPE_Q6_K: ac_quantize_q6_k(x, o, n); return 0;
    default: return -1;
    }
}

int ac_dequantize_row(ac_dtype t, const void *in, float *out, size_t n)
{
    const unsigned char *p = in;
    if (n % ac_dtype_block(t)) return -1;
    switch (t) {
    case AC_DTYPE_F32: memcpy(out, in, n * sizeof *out); return 0;
    case AC_DTYPE_F16: ac_f16_to_f32_n(p, out, n); return 0;
    case AC_DTYPE_BF16: ac_bf16_to_f32_n(p, out, n); return 0;
    case AC_DTYPE_Q8_0: dequantize_q8_0(p, out, n); return 0;
    case AC_DTYPE_Q4_K: dequantize_q4_k(p, out, n); return 0;
    case AC_DTYPE_Q6_K: dequantize_q6_k(p, out, n); return 0;
    default: return -1;
    }
}

int ac_convert_row(ac_dtype from, const void *in, ac_dtype to, void *out, size_t n)
{
    enum { SEGMENT = 4096 }; /* a multiple of every block */
    float buf[SEGMENT];
    const unsigned char *src = in;
    unsigned char *dst = out;
    if (n % ac_dtype_block(from) || n % ac_dtype_block(to)) return -1;
    if (ac_dequantize_row(from, in, buf, 0)) return -1; /* a type it cannot read */
    for (size_t c = 0; c < n; c += SEGMENT) {
        size_t k = n - c < SEGMENT ? n - c : SEGMENT;
        /* widened by the level's kernel (F16C for F16): the same values as ac_dequantize_row */
        ac_mat seg = {src + ac_dtype_bytes(from, c), from, 1, k};
        ac_mat_rows(&seg, 0, 1, buf);
        if (ac_quantize_row(to, buf, dst + ac_dtype_bytes(to, c), k)) return -1;
    }
    return 0;
}

/* The f16 scales of a block of type T at P: their count and offsets. */
static int scale_offsets(ac_dtype t, size_t off[2])
{
    switch (t) {
    case AC_DTYPE_Q8_0: off[0] = offsetof(ac_block_q8_0, d); return 1;
    case AC_DTYPE_Q4_K: off[0] = offsetof(ac_block_q4_k, d), off[1] = offsetof(ac_block_q4_k, dmin); return 2;
    case AC_DTYPE_Q6_K: off[0] = offsetof(ac_block_q6_k, d); return 1;
    default: return 0;
    }
}

int64_t ac_quant_bad_scale(ac_dtype t, const void *in, size_t n)
{
    size_t off[2], blk = (size_t)ac_dtype_block(t), size = (size_t)ac_dtype_bytes(t, blk);
    int k = scale_offsets(t, off);
    const unsigned char *p = in;
    for (size_t b = 0; k && b < n / blk; b++)
        for (int i = 0; i < k; i++)
            if (!isfinite(f16_at(p + b * size + off[i]))) return (int64_t)b;
    return -1;
}
