/* Q4_K and Q6_K weights against int8 activations with AVX2 (built with
 * -mavx2 -mfma -mf16c; run only through the kernel table, after its CPU
 * check), as ac_matmul_qk_ref. Each 32 values of a super-block meet one
 * activation block: the weights' small unsigned values (Q4_K 0..15, Q6_K
 * 0..63) are vpmaddubsw's unsigned operand and x the signed one (pair sums
 * at most 2 * 63 * 127, never saturating); Q6_K's offset of 32 comes out
 * as vpmaddubsw(32, x), once per activation block; vpmaddwd then sums the
 * pairs times the sub-blocks' scales into exact int32, converted and
 * scaled by the super-block's and the activation's scales. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/mat_qk_avx2.h"

static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256i load32(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

static float dot_q4_k(const unsigned char *row, const ac_block_q8_act *x, size_t supers)
{
    const __m256i low = _mm256_set1_epi8(15);
    __m256 acc = _mm256_setzero_ps();
    float mins_all = 0;
    for (size_t s = 0; s < supers; s++) {
        const unsigned char *b = row + s * sizeof(ac_block_q4_k);
        uint8_t scales[12];
        uint16_t hd, hm;
        memcpy(&hd, b, 2), memcpy(&hm, b + 2, 2), memcpy(scales, b + 4, 12);
        const unsigned char *qs = b + 16;
        float d = ac_f16_to_f32(hd), mins = 0;
        for (int pair = 0; pair < 4; pair++) {
            __m256i q = load32(qs + 32 * pair);
            __m256i half[2] = {_mm256_and_si256(q, low), _mm256_and_si256(_mm256_srli_epi16(q, 4), low)};
            for (int h = 0; h < 2; h++) {
                int j = 2 * pair + h, sc, m;
                const ac_block_q8_act *a = x + s * 8 + j;
                ac_q4_k_scale_min(scales, j, &sc, &m);
                __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(half[h], load32(a->qs)), _mm256_set1_epi16((short)sc));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * a->d), acc);
                mins += a->d * (float)(m * a->sum);
            }
        }
        mins_all += ac_f16_to_f32(hm) * mins;
    }
    return hsum8(acc) - mins_all;
}

static float dot_q6_k(const unsigned char *row, const ac_block_q8_act *x, size_t supers)
{
    const __m256i low = _mm256_set1_epi8(15), high = _mm256_set1_epi8(0x30), offset = _mm256_set1_epi8(32);
    __m256 acc = _mm256_setzero_ps();
    for (size_t s = 0; s < supers; s++) {
        const unsigned char *b = row + s * sizeof(ac_block_q6_k);
        const unsigned char *ql = b, *qh = b + AC_QK_K / 2;
        const int8_t *scales = (const int8_t *)(b + AC_QK_K / 2 + AC_QK_K / 4);
        uint16_t hd;
        memcpy(&hd, b + 208, 2);
        float d = ac_f16_to_f32(hd);
        for (int h = 0; h < 2; h++) {
            __m256i l0 = load32(ql + 64 * h), l1 = load32(ql + 64 * h + 32), hb = load32(qh + 32 * h);
            /* quarter k: 4 low bits from l0/l1, low or high nibbles; 2 high bits (qh >> 2k) & 3 at bits 4-5 */
            __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(hb, 4), high)),
                _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(hb, 2), high)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(hb, high)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                                _mm256_and_si256(_mm256_srli_epi16(hb, 2), high))};
            for (int k = 0; k < 4; k++) {
                const ac_block_q8_act *a = x + s * 8 + 4 * h + k;
                __m256i xq = load32(a->qs);
                __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q[k], xq), _mm256_maddubs_epi16(offset, xq));
                /* the first 16 values (the low 128 bits) take the first sub-block's scale */
                __m256i sc = _mm256_set_m128i(_mm_set1_epi16(scales[8 * h + 2 * k + 1]),
                                              _mm_set1_epi16(scales[8 * h + 2 * k]));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p, sc)), _mm256_set1_ps(d * a->d), acc);
            }
        }
    }
    return hsum8(acc);
}

void ac_matmul_qk_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1)
{
    size_t supers = w->cols / AC_QK_K, stride = (size_t)ac_dtype_bytes(w->dtype, w->cols);
    for (size_t n = n0; n < n1; n++) {
        const unsigned char *row = (const unsigned char *)w->data + n * stride;
        for (size_t m = 0; m < M; m++) { /* the row stays in L1 from one input row to the next */
            const ac_block_q8_act *xm = x + m * (w->cols / AC_QK8_0);
            float acc = w->dtype == AC_DTYPE_Q4_K ? dot_q4_k(row, xm, supers) : dot_q6_k(row, xm, supers);
            y[m * w->rows + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
}
