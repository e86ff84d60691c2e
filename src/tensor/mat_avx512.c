/* AVX-512 product for one input row against 16-bit weights (decoding),
 * built with -mavx512f -mavx512bw -mf16c and called only after the CPU
 * check. Twice the lanes of the AVX2 version per load and FMA. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/simd_avx512.h"

/* 16 weights at P as f32. */
static inline __m512 load16(const unsigned char *p, ac_dtype t)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (t == AC_DTYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); /* bf16 */
}

static float weight(const unsigned char *p, size_t k, ac_dtype t)
{
    uint16_t h;
    memcpy(&h, p + 2 * k, 2);
    return t == AC_DTYPE_F16 ? ac_f16_to_f32(h) : ac_bf16_to_f32(h);
}

/* one input row against four weight rows, prefetching the next four */
static void quad(const float *x, size_t K, const unsigned char *w, size_t stride, ac_dtype t, float *out)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const unsigned char *w1 = w + stride, *w2 = w1 + stride, *w3 = w2 + stride;
    const char *next = (const char *)w + 4 * stride;
    size_t k = 0;
    for (; k + 16 <= K; k += 16) {
        _mm_prefetch(next + 8 * k, _MM_HINT_T0);
        _mm_prefetch(next + 8 * k + 64, _MM_HINT_T0);
        __m512 xv = _mm512_loadu_ps(x + k);
        a0 = _mm512_fmadd_ps(xv, load16(w + 2 * k, t), a0);
        a1 = _mm512_fmadd_ps(xv, load16(w1 + 2 * k, t), a1);
        a2 = _mm512_fmadd_ps(xv, load16(w2 + 2 * k, t), a2);
        a3 = _mm512_fmadd_ps(xv, load16(w3 + 2 * k, t), a3);
    }
    out[0] = _mm512_reduce_add_ps(a0), out[1] = _mm512_reduce_add_ps(a1);
    out[2] = _mm512_reduce_add_ps(a2), out[3] = _mm512_reduce_add_ps(a3);
    for (; k < K; k++) {
        out[0] += x[k] * weight(w, k, t);
        out[1] += x[k] * weight(w1, k, t);
        out[2] += x[k] * weight(w2, k, t);
        out[3] += x[k] * weight(w3, k, t);
    }
}

size_t ac_matmul_row_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1)
{
    size_t K = w->cols, stride = (size_t)ac_dtype_bytes(w->dtype, K), n = n0;
    float out[4];
    for (; n + 4 <= n1; n += 4) {
        quad(x, K, (const unsigned char *)w->data + n * stride, stride, w->dtype, out);
        for (int i = 0; i < 4; i++) y[n + i] = out[i] + (bias ? bias[n + i] : 0.0f);
    }
    return n;
}
