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

#include "tensor/mat_qk_avx2.h"

static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256i load32(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* Super-block S of the ROWS rows that follow these in memory (at NEXT,
 * rows of SUPERS super-blocks of BYTES): fetched while this one computes,
 * as the hardware prefetcher alone keeps too few rows in flight. */
static inline void prefetch_super(const char *next, size_t supers, size_t bytes, size_t s, int rows)
{
    for (int r = 0; r < rows; r++)
        for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(next + (r * supers + s) * bytes + o, _MM_HINT_T0);
}

/* A Q4_K super-block's 8 scales (SC) and 8 mins (M), one byte each, from
 * its scales[12] four at a time (as ac_q4_k_scale_min one by one). */
static inline void q4_k_scales(const unsigned char *s12, uint64_t *sc, uint64_t *m)
{
    uint32_t u[3];
    memcpy(u, s12, 12);
    uint32_t sc_lo = u[0] & 0x3f3f3f3f, m_lo = u[1] & 0x3f3f3f3f;
    uint32_t sc_hi = (u[2] & 0x0f0f0f0f) | ((u[0] >> 6) & 0x03030303) << 4;
    uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0f) | ((u[1] >> 6) & 0x03030303) << 4;
    *sc = sc_lo | (uint64_t)sc_hi << 32;
    *m = m_lo | (uint64_t)m_hi << 32;
}

/* the byte shuffles that take int16 lane j of a 128-bit lane to all 8 of its lanes */
static const int8_t pick16[8][32] = {
#define P(j) {2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, \
              2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, \
              2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1, 2 * j, 2 * j + 1}
    P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7)
#undef P
};

/* Per super-block: its scales and mins unpacked at once, the scales as
 * int16 vectors for vpmaddwd; each sub-block's sum converted and
 * multiplied by its activation's scale into the super-block's sum, which
 * takes d once; the mins' term as 8 lanes, the activations' scales and
 * block sums gathered. ROWS2 weight rows share each load of X. */
#define ROWS2 2
static void dot_q4_k(const unsigned char *const row[ROWS2], const ac_block_q8_act *x, size_t supers,
                     const char *next, float out[ROWS2])
{
    const __m256i low = _mm256_set1_epi8(15);
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32((int)(sizeof(ac_block_q8_act) / 4)));
    __m256 acc[ROWS2], mins[ROWS2];
    for (int r = 0; r < ROWS2; r++) acc[r] = mins[r] = _mm256_setzero_ps();
    for (size_t s = 0; s < supers; s++) {
        const ac_block_q8_act *a = x + s * 8;
        prefetch_super(next, supers, sizeof(ac_block_q4_k), s, ROWS2);
        __m256 ad = _mm256_i32gather_ps(&a->d, idx, 4);
        __m256 adsum = _mm256_mul_ps(ad, _mm256_cvtepi32_ps(_mm256_i32gather_epi32((const int *)&a->sum, idx, 4)));
        __m256i sc16[ROWS2];
        __m256 part[ROWS2];
        for (int r = 0; r < ROWS2; r++) {
            const unsigned char *b = row[r] + s * sizeof(ac_block_q4_k);
            uint16_t hm;
            uint64_t scb, mb;
            memcpy(&hm, b + 2, 2);
            q4_k_scales(b + 4, &scb, &mb);
            sc16[r] = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)scb)));
            __m256 m = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)mb)));
            mins[r] = _mm256_fmadd_ps(_mm256_mul_ps(m, adsum), _mm256_set1_ps(_cvtsh_ss(hm)), mins[r]);
            part[r] = _mm256_setzero_ps();
        }
        for (int pair = 0; pair < 4; pair++)
            for (int h = 0; h < 2; h++) {
                int j = 2 * pair + h;
                __m256i xq = load32(a[j].qs), pick = _mm256_loadu_si256((const __m256i *)pick16[j]);
                __m256 dx = _mm256_broadcast_ss(&a[j].d);
                for (int r = 0; r < ROWS2; r++) {
                    __m256i q = load32(row[r] + s * sizeof(ac_block_q4_k) + 16 + 32 * pair);
                    q = _mm256_and_si256(h ? _mm256_srli_epi16(q, 4) : q, low);
                    __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(q, xq), _mm256_shuffle_epi8(sc16[r], pick));
                    part[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), dx, part[r]);
                }
            }
        for (int r = 0; r < ROWS2; r++) {
            uint16_t hd;
            memcpy(&hd, row[r] + s * sizeof(ac_block_q4_k), 2);
            acc[r] = _mm256_fmadd_ps(part[r], _mm256_set1_ps(_cvtsh_ss(hd)), acc[r]);
        }
    }
    for (int r = 0; r < ROWS2; r++) out[r] = hsum8(_mm256_sub_ps(acc[r], mins[r]));
}

/* Per half of a super-block: its 8 scales as int16 in both 128-bit lanes;
 * quarter k takes scale 2k for its first 16 values (the low lane) and
 * 2k + 1 for the others, picked by a byte shuffle. Four accumulators, one
 * per quarter. */
static float dot_q6_k(const unsigned char *row, const ac_block_q8_act *x, size_t supers, const char *next)
{
    const __m256i low = _mm256_set1_epi8(15), high = _mm256_set1_epi8(0x30), offset = _mm256_set1_epi8(32);
    __m256i pick[4];
    for (int k = 0; k < 4; k++)
        pick[k] = _mm256_setr_epi8(4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k,
                                   4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3,
                                   4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2,
                                   4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (size_t s = 0; s < supers; s++) {
        const unsigned char *b = row + s * sizeof(ac_block_q6_k);
        const unsigned char *ql = b, *qh = b + AC_QK_K / 2;
        prefetch_super(next, supers, sizeof(ac_block_q6_k), s, 1);
        uint16_t hd;
        memcpy(&hd, b + 208, 2);
        float d = _cvtsh_ss(hd);
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + AC_QK_K / 2 + AC_QK_K / 4)));
        for (int h = 0; h < 2; h++) {
            __m256i l0 = load32(ql + 64 * h), l1 = load32(ql + 64 * h + 32), hb = load32(qh + 32 * h);
            __m256i sch = h ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
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
                __m256i dot = _mm256_madd_epi16(p, _mm256_shuffle_epi8(sch, pick[k]));
                acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * a->d), acc[k]);
            }
        }
    }
    return hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

void ac_matmul_qk_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1)
{
    size_t supers = w->cols / AC_QK_K, stride = (size_t)ac_dtype_bytes(w->dtype, w->cols);
    /* Q4_K: ROWS2 rows a pass, a last pass of fewer repeating its last row and keeping only its own outputs */
    size_t step = w->dtype == AC_DTYPE_Q4_K ? ROWS2 : 1;
    for (size_t n = n0; n < n1; n += step) {
        const unsigned char *rows[ROWS2];
        for (size_t r = 0; r < ROWS2; r++) rows[r] = (const unsigned char *)w->data + (n + r < n1 ? n + r : n1 - 1) * stride;
        const char *next = (const char *)w->data + (n + step < n1 ? n + step : n) * stride;
        for (size_t m = 0; m < M; m++) { /* the rows stay in L1 from one input row to the next */
            const ac_block_q8_act *xm = x + m * (w->cols / AC_QK8_0);
            float out[ROWS2] = {0};
            if (w->dtype == AC_DTYPE_Q4_K) dot_q4_k(rows, xm, supers, next, out);
            else out[0] = dot_q6_k(rows[0], xm, supers, next);
            for (size_t r = 0; r < step && n + r < n1; r++) y[m * w->rows + n + r] = out[r] + (bias ? bias[n + r] : 0.0f);
        }
    }
}
