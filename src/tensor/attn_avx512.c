/* AVX-512 tiles of attention's two products (attn_avx512.h). Both keep
 * their accumulators in registers over the whole reduction and read the
 * other operand from packed, contiguous panels that stay in L1/L2: the
 * shapes (a reduction of head_dim = 64, or an output of 64 columns) are
 * where a general GEMM spends its time packing. */
#include <immintrin.h>

#include "tensor/attn_avx512.h"
#include "tensor/dispatch.h"

enum { SR = 6, VR = 6 }; /* query rows per tile of each product */

#define INLINE static inline __attribute__((always_inline))

/* S[MR][32] of rows Q[MR] (stride q_ld) against one panel KP[dk][32]; the
 * first KEYS columns are stored (row stride nk). */
INLINE void score_tile(const int MR, const float *q, size_t q_ld, const float *kp, size_t dk, float *s, size_t nk,
                       size_t keys)
{
    __m512 acc[SR][2];
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (size_t d = 0; d < dk; d++) {
        __m512 k0 = _mm512_loadu_ps(kp + d * AC_ATTN_KP), k1 = _mm512_loadu_ps(kp + d * AC_ATTN_KP + 16);
        for (int i = 0; i < MR; i++) {
            __m512 b = _mm512_set1_ps(q[i * q_ld + d]);
            acc[i][0] = _mm512_fmadd_ps(b, k0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(b, k1, acc[i][1]);
        }
    }
    __mmask16 m0 = keys >= 16 ? 0xffff : (__mmask16)((1u << keys) - 1);
    __mmask16 m1 = keys >= 32 ? 0xffff : keys <= 16 ? 0 : (__mmask16)((1u << (keys - 16)) - 1);
    for (int i = 0; i < MR; i++) {
        _mm512_mask_storeu_ps(s + i * nk, m0, acc[i][0]);
        _mm512_mask_storeu_ps(s + i * nk + 16, m1, acc[i][1]);
    }
}

void ac_attn_scores_avx512(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s)
{
    /* a panel (8 KB at dk = 64) stays in L1 for all the rows */
    for (size_t t = 0; t < nk; t += AC_ATTN_KP) {
        const float *panel = kp + t * dk;
        size_t keys = nk - t < AC_ATTN_KP ? nk - t : AC_ATTN_KP, r = 0;
        for (; r + SR <= rows; r += SR) score_tile(SR, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys);
        switch (rows - r) {
        case 5: score_tile(5, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys); break;
        case 4: score_tile(4, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys); break;
        case 3: score_tile(3, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys); break;
        case 2: score_tile(2, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys); break;
        case 1: score_tile(1, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys); break;
        default: break;
        }
    }
}

/* OUT[MR][16*NV] = P[MR][nk] . VP[nk][16*NV] (VP's row stride dkp); COLS of
 * the last vector are stored. */
INLINE void value_tile(const int MR, const int NV, const float *p, size_t nk, const float *vp, size_t dkp, float *out,
                       size_t out_ld, __mmask16 last)
{
    __m512 acc[VR][4];
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++) acc[i][c] = _mm512_setzero_ps();
    for (size_t t = 0; t < nk; t++) {
        __m512 v[4];
        for (int c = 0; c < NV; c++) v[c] = _mm512_loadu_ps(vp + t * dkp + 16 * c);
        for (int i = 0; i < MR; i++) {
            __m512 b = _mm512_set1_ps(p[i * nk + t]);
            for (int c = 0; c < NV; c++) acc[i][c] = _mm512_fmadd_ps(b, v[c], acc[i][c]);
        }
    }
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++)
            _mm512_mask_storeu_ps(out + i * out_ld + 16 * c, c == NV - 1 ? last : 0xffff, acc[i][c]);
}

#define VALUE_ROWS(MR)                                                                        \
    switch (nv) {                                                                             \
    case 4: value_tile(MR, 4, p + r * nk, nk, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    case 3: value_tile(MR, 3, p + r * nk, nk, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    case 2: value_tile(MR, 2, p + r * nk, nk, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    default: value_tile(MR, 1, p + r * nk, nk, vp + c, dkp, out + r * out_ld + c, out_ld, last); break; \
    }

void ac_attn_values_avx512(const float *p, size_t rows, const float *vp, size_t nk, size_t dk, float *out,
                           size_t out_ld)
{
    size_t dkp = AC_ATTN_VP(dk);
    for (size_t c = 0; c < dk; c += 64) {
        size_t cols = dk - c < 64 ? dk - c : 64, nv = (cols + 15) / 16, tail = cols - 16 * (nv - 1);
        __mmask16 last = tail == 16 ? 0xffff : (__mmask16)((1u << tail) - 1);
        size_t r = 0;
        for (; r + VR <= rows; r += VR) VALUE_ROWS(VR)
        switch (rows - r) {
        case 5: VALUE_ROWS(5) break;
        case 4: VALUE_ROWS(4) break;
        case 3: VALUE_ROWS(3) break;
        case 2: VALUE_ROWS(2) break;
        case 1: VALUE_ROWS(1) break;
        default: break;
        }
    }
}
