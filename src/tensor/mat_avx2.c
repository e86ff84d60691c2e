/* AVX2/FMA/F16C products with 16-bit weights (built with -mavx2 -mfma
 * -mf16c; run only through the kernel table, after its CPU check). One
 * weight row is converted in registers and used for up to 8 input rows. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/mat_avx2.h"

#define MB 8 /* input rows per pass */

static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* 8 weights at P as f32. */
static inline __m256 load8(const unsigned char *p, ac_dtype t)
{
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    if (t == AC_DTYPE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)); /* bf16 */
}

static float scalar_weight(const unsigned char *p, size_t k, ac_dtype t)
{
    uint16_t h;
    memcpy(&h, p + 2 * k, 2);
    return t == AC_DTYPE_F16 ? ac_f16_to_f32(h) : ac_bf16_to_f32(h);
}

/* dot products of one 16-bit weight row with rows x[0..mr) */
static void row16(const float *x, size_t K, const unsigned char *w, ac_dtype t, size_t mr, float *out)
{
    __m256 acc[MB];
    for (size_t m = 0; m < mr; m++) acc[m] = _mm256_setzero_ps();
    size_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 wv = load8(w + 2 * k, t);
        for (size_t m = 0; m < mr; m++) acc[m] = _mm256_fmadd_ps(_mm256_loadu_ps(x + m * K + k), wv, acc[m]);
    }
    for (size_t m = 0; m < mr; m++) {
        float s = hsum8(acc[m]);
        for (size_t i = k; i < K; i++) s += x[m * K + i] * scalar_weight(w, i, t);
        out[m] = s;
    }
}

/* one input row: four accumulators keep the FMA pipeline full */
static float row16_single(const float *x, size_t K, const unsigned char *w, ac_dtype t)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t k = 0;
    for (; k + 32 <= K; k += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), load8(w + 2 * k, t), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8), load8(w + 2 * k + 16, t), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 16), load8(w + 2 * k + 32, t), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 24), load8(w + 2 * k + 48, t), a3);
    }
    for (; k + 8 <= K; k += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), load8(w + 2 * k, t), a0);
    float s = hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; k < K; k++) s += x[k] * scalar_weight(w, k, t);
    return s;
}

/* one input row against four weight rows: four independent FMA chains and
 * one load of x for four rows */
static void row16_quad(const float *x, size_t K, const unsigned char *w, size_t stride, ac_dtype t, float *out)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const unsigned char *w1 = w + stride, *w2 = w1 + stride, *w3 = w2 + stride;
    /* the next four rows follow these in memory: fetch them one cache line
     * per step, so DRAM streams while this block computes */
    const char *next = (const char *)w + 4 * stride;
    size_t k = 0;
    for (; k + 8 <= K; k += 8) {
        _mm_prefetch(next + 8 * k, _MM_HINT_T0);
        __m256 xv = _mm256_loadu_ps(x + k);
        a0 = _mm256_fmadd_ps(xv, load8(w + 2 * k, t), a0);
        a1 = _mm256_fmadd_ps(xv, load8(w1 + 2 * k, t), a1);
        a2 = _mm256_fmadd_ps(xv, load8(w2 + 2 * k, t), a2);
        a3 = _mm256_fmadd_ps(xv, load8(w3 + 2 * k, t), a3);
    }
    out[0] = hsum8(a0), out[1] = hsum8(a1), out[2] = hsum8(a2), out[3] = hsum8(a3);
    for (; k < K; k++) {
        out[0] += x[k] * scalar_weight(w, k, t);
        out[1] += x[k] * scalar_weight(w1, k, t);
        out[2] += x[k] * scalar_weight(w2, k, t);
        out[3] += x[k] * scalar_weight(w3, k, t);
    }
}

void ac_matmul_few_avx2(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                        size_t n1)
{
    size_t K = w->cols, stride = (size_t)ac_dtype_bytes(w->dtype, K);
    float out[MB];
    if (M == 1) { /* decoding one sequence */
        size_t n = n0;
        for (; n + 4 <= n1; n += 4) {
            row16_quad(x, K, (const unsigned char *)w->data + n * stride, stride, w->dtype, out);
            for (int i = 0; i < 4; i++) y[n + i] = out[i] + (bias ? bias[n + i] : 0.0f);
        }
        n0 = n;
    }
    for (size_t m0 = 0; m0 < M; m0 += MB) {
        size_t mr = M - m0 < MB ? M - m0 : MB;
        for (size_t n = n0; n < n1; n++) {
            const unsigned char *row = (const unsigned char *)w->data + n * stride;
            if (mr == 1) out[0] = row16_single(x + m0 * K, K, row, w->dtype);
            else row16(x + m0 * K, K, row, w->dtype, mr, out);
            for (size_t m = 0; m < mr; m++) y[(m0 + m) * w->rows + n] = out[m] + (bias ? bias[n] : 0.0f);
        }
    }
}

void ac_mat_rows_avx2(const ac_mat *w, size_t r0, size_t r1, float *out)
{
    size_t K = w->cols, stride = (size_t)ac_dtype_bytes(w->dtype, K);
    for (size_t r = r0; r < r1; r++) {
        const unsigned char *p = (const unsigned char *)w->data + r * stride;
        float *o = out + (r - r0) * K;
        size_t k = 0;
        if (w->dtype == AC_DTYPE_Q8_0) {
            for (; k < K; k += 32, p += 34) {
                uint16_t h;
                memcpy(&h, p, 2);
                __m256 d = _mm256_set1_ps(ac_f16_to_f32(h));
                for (int i = 0; i < 4; i++)
                    _mm256_storeu_ps(o + k + 8 * i, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                                                         _mm_loadl_epi64((const __m128i *)(p + 2 + 8 * i))))));
            }
            continue;
        }
        for (; k + 8 <= K; k += 8) _mm256_storeu_ps(o + k, load8(p + 2 * k, w->dtype));
        for (; k < K; k++) o[k] = scalar_weight(p, k, w->dtype);
    }
}
