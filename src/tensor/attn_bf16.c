/* AVX512_BF16 tiles of attention's scores and values (attn_bf16.h): the
 * register tiles of attn_avx512.c, each vdpbf16ps taking a pair of
 * channels (scores) or of keys (values) per lane, exact products summed in
 * f32. */
#include <immintrin.h>

#include "tensor/attn_bf16.h"
#include "tensor/attn_tiles.h"
#include "tensor/dispatch.h"
#include "tensor/transpose_avx512.h"

enum { SR = AC_ATTN_TILE_ROWS, VR = AC_ATTN_TILE_ROWS }; /* query rows per tile of each product */

#define INLINE static inline __attribute__((always_inline))

/* S[MR][AC_ATTN_KP] (row stride nk, the first KEYS columns stored) of the
 * bf16 pairs of rows Q[MR] (stride q_ld words) against one panel
 * KP[dk2][AC_ATTN_KP] of key pairs */
INLINE void score_tile(const int MR, const uint32_t *q, size_t q_ld, const uint32_t *kp, size_t dk2, float *s,
                       size_t nk, size_t keys)
{
    enum { NV = AC_ATTN_KP / 16 };
    __m512 acc[SR][NV];
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++) acc[i][c] = _mm512_setzero_ps();
    for (size_t d = 0; d < dk2; d++) {
        __m512bh k[NV];
        for (int c = 0; c < NV; c++) k[c] = (__m512bh)_mm512_loadu_si512(kp + d * AC_ATTN_KP + 16 * c);
        for (int i = 0; i < MR; i++) {
            __m512bh b = (__m512bh)_mm512_set1_epi32((int)q[i * q_ld + d]);
            for (int c = 0; c < NV; c++) acc[i][c] = _mm512_dpbf16_ps(acc[i][c], k[c], b);
        }
    }
    for (int c = 0; c < NV; c++) {
        size_t left = keys > 16 * (size_t)c ? keys - 16 * (size_t)c : 0;
        __mmask16 m = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        for (int i = 0; i < MR; i++) _mm512_mask_storeu_ps(s + i * nk + 16 * c, m, acc[i][c]);
    }
}

/* ac_f32_to_bf16 of 16 values, each in the high half of its lane (the
 * low half is left over): nearest even, NaNs quieted as the scalar does */
INLINE __m512i bf16_high(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)),
                                 _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
}

static inline __mmask16 first16(size_t n) { return n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1); }

/* The scalar pack's layout (dispatch.h) with its bits: K a panel of keys
 * at a time, 16 keys by 16 channel pairs transposed at once; V two key
 * rows into pairs. */
void ac_attn_pack_bf16_avx512(const float *k, const float *v, size_t ld, size_t nk, size_t dk, uint32_t *kp,
                              uint32_t *vp)
{
    /* pair j of a row: lane j of the high halves of channels 2j and 2j + 1 */
    static const int16_t odd[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
                                    33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
    const __m512i highs = _mm512_loadu_si512(odd);
    size_t dk2 = (dk + 1) / 2, dkp = AC_ATTN_VP(dk), panels = (nk + AC_ATTN_KP - 1) / AC_ATTN_KP;
    for (size_t pn = 0; pn < panels; pn++)
        for (size_t g = 0; g < AC_ATTN_KP; g += 16)
            for (size_t d0 = 0; d0 < dk2; d0 += 16) {
                __m512 r[16];
                __mmask16 lo = first16(dk - 2 * d0), hi = dk > 2 * d0 + 16 ? first16(dk - 2 * d0 - 16) : 0;
                for (size_t i = 0; i < 16; i++) {
                    size_t t = pn * AC_ATTN_KP + g + i;
                    const float *row = k + t * ld + 2 * d0;
                    __m512i a = t < nk ? bf16_high(_mm512_maskz_loadu_ps(lo, row)) : _mm512_setzero_si512();
                    __m512i b = t < nk ? bf16_high(_mm512_maskz_loadu_ps(hi, row + 16)) : _mm512_setzero_si512();
                    r[i] = _mm512_castsi512_ps(_mm512_permutex2var_epi16(a, highs, b));
                }
                ac_transpose16(r); /* vector j: pair d0 + j of the 16 keys */
                for (size_t j = 0; j < 16 && d0 + j < dk2; j++)
                    _mm512_storeu_ps((float *)kp + (pn * dk2 + d0 + j) * AC_ATTN_KP + g, r[j]);
            }
    for (size_t t = 0; t < (nk + 1) / 2; t++) {
        const float *a = v + 2 * t * ld, *b = 2 * t + 1 < nk ? a + ld : NULL;
        for (size_t d = 0; d < dkp; d += 16) {
            __mmask16 m = d < dk ? first16(dk - d) : 0;
            __m512i ra = _mm512_srli_epi32(bf16_high(_mm512_maskz_loadu_ps(m, a + d)), 16);
            __m512i rb = b ? _mm512_and_si512(bf16_high(_mm512_maskz_loadu_ps(m, b + d)),
                                              _mm512_set1_epi32((int)0xffff0000))
                           : _mm512_setzero_si512();
            _mm512_storeu_si512(vp + t * dkp + d, _mm512_or_si512(ra, rb));
        }
    }
}

/* N values of X as bf16 (nearest even) at OUT, a zero after them when N
 * is odd; OUT may be X itself (each block is read before it is written) */
static void round_row(const float *x, size_t n, uint16_t *out)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        _mm512_storeu_si512(out + i, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i)));
    if (i < n) {
        size_t left = n - i;
        __mmask16 lo = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        __mmask16 hi = left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
        __m512 l = _mm512_maskz_loadu_ps(lo, x + i), h = _mm512_maskz_loadu_ps(hi, x + i + 16);
        __m512i v = (__m512i)_mm512_cvtne2ps_pbh(h, l);
        _mm512_mask_storeu_epi16(out + i, (__mmask32)((1ull << (left + (left & 1))) - 1), v);
    }
}

void ac_attn_scores_bf16(const float *q, size_t q_ld, size_t rows, const uint32_t *kp, size_t nk, size_t dk,
                         float *s)
{
    size_t dk2 = (dk + 1) / 2;
    uint32_t qb[SR * AC_ATTN_BF16_DK / 2];
    for (size_t r0 = 0; r0 < rows; r0 += SR) {
        size_t mr = rows - r0 < SR ? rows - r0 : SR;
        for (size_t i = 0; i < mr; i++) round_row(q + (r0 + i) * q_ld, dk, (uint16_t *)(qb + i * dk2));
        for (size_t t = 0; t < nk; t += AC_ATTN_KP) {
            const uint32_t *panel = kp + t * dk2;
            size_t keys = nk - t < AC_ATTN_KP ? nk - t : AC_ATTN_KP;
            float *st = s + r0 * nk + t;
            switch (mr) {
            case 6: score_tile(6, qb, dk2, panel, dk2, st, nk, keys); break;
            case 5: score_tile(5, qb, dk2, panel, dk2, st, nk, keys); break;
            case 4: score_tile(4, qb, dk2, panel, dk2, st, nk, keys); break;
            case 3: score_tile(3, qb, dk2, panel, dk2, st, nk, keys); break;
            case 2: score_tile(2, qb, dk2, panel, dk2, st, nk, keys); break;
            default: score_tile(1, qb, dk2, panel, dk2, st, nk, keys); break;
            }
        }
    }
}

/* OUT[MR][16*NV] = P[MR][nk] . V over key pairs: P's rows of pairs (stride
 * p_ld words), VP[nk2][dkp] pairs; the last vector stores the lanes of LAST */
INLINE void value_tile(const int MR, const int NV, const uint32_t *p, size_t p_ld, size_t nk2, const uint32_t *vp,
                       size_t dkp, float *out, size_t out_ld, __mmask16 last)
{
    __m512 acc[VR][4];
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++) acc[i][c] = _mm512_setzero_ps();
    for (size_t t = 0; t < nk2; t++) {
        __m512bh v[4];
        for (int c = 0; c < NV; c++) v[c] = (__m512bh)_mm512_loadu_si512(vp + t * dkp + 16 * c);
        for (int i = 0; i < MR; i++) {
            __m512bh b = (__m512bh)_mm512_set1_epi32((int)p[i * p_ld + t]);
            for (int c = 0; c < NV; c++) acc[i][c] = _mm512_dpbf16_ps(acc[i][c], v[c], b);
        }
    }
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++)
            _mm512_mask_storeu_ps(out + i * out_ld + 16 * c, c == NV - 1 ? last : 0xffff, acc[i][c]);
}

#define VALUE_ROWS(MR)                                                                                     \
    switch (nv) {                                                                                          \
    case 4: value_tile(MR, 4, p + r * p_ld, p_ld, nk2, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    case 3: value_tile(MR, 3, p + r * p_ld, p_ld, nk2, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    case 2: value_tile(MR, 2, p + r * p_ld, p_ld, nk2, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    default: value_tile(MR, 1, p + r * p_ld, p_ld, nk2, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    }

void ac_attn_values_bf16(float *pf, size_t rows, const uint32_t *vp, size_t nk, size_t dk, float *out,
                         size_t out_ld)
{
    size_t dkp = AC_ATTN_VP(dk), nk2 = (nk + 1) / 2, p_ld = nk; /* a row of pairs where its floats were */
    for (size_t r = 0; r < rows; r++) round_row(pf + r * nk, nk, (uint16_t *)(pf + r * nk));
    const uint32_t *p = (const uint32_t *)pf;
    AC_ATTN_VALUE_WALK(dk, rows, VALUE_ROWS)
}
