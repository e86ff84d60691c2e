/* AVX-512 product for one input row against 16-bit weights (decoding),
 * built with -mavx512f -mavx512bw -mf16c and called only after the CPU
 * check. Twice the lanes of the AVX2 version per load and FMA. */
#include <immintrin.h>

#include "tensor/simd_avx512.h"

/* 16-bit weights as f32: 16 of them, or the lanes of mask M (masked loads
 * never touch the lanes they leave out, so a row's end needs no scalar tail). */
static inline __m512 cvt16(__m256i h, ac_dtype t)
{
    if (t == AC_DTYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); /* bf16 */
}

static inline __m512 load16(const unsigned char *p, ac_dtype t)
{
    return cvt16(_mm256_loadu_si256((const __m256i *)p), t);
}

static inline __m512 load_part(const unsigned char *p, __mmask16 m, ac_dtype t)
{
    return cvt16(_mm512_castsi512_si256(_mm512_maskz_loadu_epi16((__mmask32)m, p)), t);
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
    if (k < K) {
        __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
        a0 = _mm512_fmadd_ps(xv, load_part(w + 2 * k, m, t), a0);
        a1 = _mm512_fmadd_ps(xv, load_part(w1 + 2 * k, m, t), a1);
        a2 = _mm512_fmadd_ps(xv, load_part(w2 + 2 * k, m, t), a2);
        a3 = _mm512_fmadd_ps(xv, load_part(w3 + 2 * k, m, t), a3);
    }
    out[0] = _mm512_reduce_add_ps(a0), out[1] = _mm512_reduce_add_ps(a1);
    out[2] = _mm512_reduce_add_ps(a2), out[3] = _mm512_reduce_add_ps(a3);
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
