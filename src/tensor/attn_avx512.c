/* AVX-512 tiles of attention's two products (attn_avx512.h). Both keep
 * their accumulators in registers over the whole reduction and read the
 * other operand from packed, contiguous panels that stay in L1/L2: the
 * shapes (a reduction of head_dim = 64, or an output of 64 columns) are
 * where a general GEMM spends its time packing. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "tensor/attn_avx512.h"
#include "tensor/attn_tiles.h"
#include "tensor/dispatch.h"

enum { SR = AC_ATTN_TILE_ROWS, VR = AC_ATTN_TILE_ROWS }; /* query rows per tile of each product */

#define INLINE static inline __attribute__((always_inline))

/* S[MR][AC_ATTN_KP] of rows Q[MR] (stride q_ld) against one panel
 * KP[dk][AC_ATTN_KP]; the first KEYS columns are stored (row stride nk). */
INLINE void score_tile(const int MR, const float *q, size_t q_ld, const float *kp, size_t dk, float *s, size_t nk,
                       size_t keys)
{
    enum { NV = AC_ATTN_KP / 16 };
    __m512 acc[SR][NV];
    for (int i = 0; i < MR; i++)
        for (int c = 0; c < NV; c++) acc[i][c] = _mm512_setzero_ps();
    for (size_t d = 0; d < dk; d++) {
        __m512 k[NV];
        for (int c = 0; c < NV; c++) k[c] = _mm512_loadu_ps(kp + d * AC_ATTN_KP + 16 * c);
        for (int i = 0; i < MR; i++) {
            __m512 b = _mm512_set1_ps(q[i * q_ld + d]);
            for (int c = 0; c < NV; c++) acc[i][c] = _mm512_fmadd_ps(b, k[c], acc[i][c]);
        }
    }
    for (int c = 0; c < NV; c++) {
        size_t left = keys > 16 * (size_t)c ? keys - 16 * (size_t)c : 0;
        __mmask16 m = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        for (int i = 0; i < MR; i++) _mm512_mask_storeu_ps(s + i * nk + 16 * c, m, acc[i][c]);
    }
}

void ac_attn_scores_avx512(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s)
{
    /* a panel (16 KB at dk = 64) stays in L1 for all the rows */
    for (size_t t = 0; t < nk; t += AC_ATTN_KP) {
        const float *panel = kp + t * dk;
        size_t keys = nk - t < AC_ATTN_KP ? nk - t : AC_ATTN_KP;
#define SCORE_ROWS(MR) score_tile(MR, q + r * q_ld, q_ld, panel, dk, s + r * nk + t, nk, keys);
        AC_ATTN_ROW_BLOCKS(rows, SCORE_ROWS);
#undef SCORE_ROWS
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
    AC_ATTN_VALUE_WALK(dk, rows, VALUE_ROWS)
}

/* exp(x) as exp8 of kernels_avx2.c (the same reduction and Cephes
 * polynomial) on 16 lanes: the softmax agrees with the AVX2 one. */
static inline __attribute__((always_inline)) __m512 exp16(__m512 x, int nonpositive)
{
    x = _mm512_min_ps(x, _mm512_set1_ps(88.3762626647949f));
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.3365447504f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    if (nonpositive) /* n in [-126, 0]: 2^n in one step, the exact product rounded once either way */
        return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(
                                    _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23)));
    /* 2^n in two halves: n = 128 must not overflow the exponent */
    __m512i ni = _mm512_cvtps_epi32(n);
    __m512i h1 = _mm512_srai_epi32(ni, 1), h2 = _mm512_sub_epi32(ni, h1);
    __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h1, _mm512_set1_epi32(127)), 23));
    __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h2, _mm512_set1_epi32(127)), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
}

static inline __mmask16 lanes(size_t left) { return left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1); }

/* The LEFT (>= 1) values at P, lanes past them from OR; a row's values by
 * plain loads and stores but for its last, partial vector (a masked store
 * costs 6-8 plain ones on Zen 4) */
static inline __m512 load_or(__m512 or, size_t left, const float *p)
{
    return left >= 16 ? _mm512_loadu_ps(p) : _mm512_mask_loadu_ps(or, lanes(left), p);
}

static inline void store_n(float *p, size_t left, __m512 v)
{
    if (left >= 16) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, lanes(left), v);
}

void ac_softmax_masked_avx512(float *x, size_t rows, size_t cols, float scale, const ac_mask *m)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * cols, s = scale;
        size_t R = (m ? m->row0 : 0) + r, n = cols;
        if (m && m->keys && m->keys < n) n = m->keys;
        if (m && m->causal && R + 1 < n) n = R + 1;
        if (m && (m->add || m->keep)) { /* the mask's values in place, scaled */
            for (size_t j = 0; j < n; j++)
                v[j] = m->keep && !m->keep[R * m->ld + j] ? -INFINITY
                                                          : v[j] * scale + (m->add ? m->add[R * m->ld + j] : 0.0f);
            s = 1.0f;
        }
        __m512 mx = ninf;
        for (size_t i = 0; i < n; i += 16) mx = _mm512_max_ps(mx, load_or(ninf, n - i, v + i));
        float top = _mm512_reduce_max_ps(mx);
        memset(v + n, 0, (cols - n) * sizeof *v);
        if (top == -INFINITY) {
            memset(v, 0, n * sizeof *v);
            continue;
        }
        __m512 vs = _mm512_set1_ps(s), vm = _mm512_set1_ps(top * s), sum = _mm512_setzero_ps();
        for (size_t i = 0; i < n; i += 16) {
            __mmask16 k = lanes(n - i);
            __m512 e = load_or(_mm512_setzero_ps(), n - i, v + i);
            k = _mm512_mask_cmp_ps_mask(k, e, ninf, _CMP_NEQ_OQ); /* masked keys give exactly 0 */
            e = _mm512_maskz_mov_ps(k, exp16(_mm512_fmsub_ps(e, vs, vm), 1));
            sum = _mm512_add_ps(sum, e);
            store_n(v + i, n - i, e);
        }
        __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
        for (size_t i = 0; i < n; i += 16)
            store_n(v + i, n - i, _mm512_mul_ps(load_or(_mm512_setzero_ps(), n - i, v + i), inv));
    }
}

/* ---- decoding: a few query rows over K/V rows read once ---------------- */

enum { ROW_VECS = 8 }; /* channels of a value row held at once: 8 x 16 (a head of 128) */

/* the first lanes of 16 that D channels from C * 16 on fill */
static inline __mmask16 lanes_of(size_t d, size_t c)
{
    size_t left = d - c * 16;
    return left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
}

void ac_attn_dot_rows_avx512(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                             size_t s_ld)
{
    size_t nv = (dk + 15) / 16;
    for (size_t t = 0; t < n; t++) {
        const float *kr = k + t * ld;
        /* two query rows at a time take each load of the key row */
        for (size_t i = 0; i < g; i += 2) {
            const float *q0 = q + i * dk, *q1 = i + 1 < g ? q0 + dk : q0;
            __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
            for (size_t c = 0; c < nv; c++) {
                __mmask16 m = lanes_of(dk, c);
                __m512 x = _mm512_maskz_loadu_ps(m, kr + 16 * c);
                a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q0 + 16 * c), x, a0);
                a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q1 + 16 * c), x, a1);
            }
            s[i * s_ld + t] = _mm512_reduce_add_ps(a0);
            if (i + 1 < g) s[(i + 1) * s_ld + t] = _mm512_reduce_add_ps(a1);
        }
    }
}

/* OUT rows I0 (and I0 + 1 when TWO) over channels [16 * C0, 16 * (C0 + NV)) */
INLINE void mix_pair(const int NV, int two, const float *p, size_t p_ld, const float *v, size_t ld, size_t n,
                     size_t dk, size_t c0, float *out, size_t out_ld)
{
    __m512 acc[2][ROW_VECS];
    __mmask16 m[ROW_VECS];
    for (int c = 0; c < NV; c++) {
        m[c] = lanes_of(dk, c0 + (size_t)c);
        acc[0][c] = _mm512_maskz_loadu_ps(m[c], out + 16 * (c0 + (size_t)c));
        acc[1][c] = two ? _mm512_maskz_loadu_ps(m[c], out + out_ld + 16 * (c0 + (size_t)c)) : _mm512_setzero_ps();
    }
    for (size_t t = 0; t < n; t++) {
        const float *vr = v + t * ld + 16 * c0;
        __m512 p0 = _mm512_set1_ps(p[t]), p1 = two ? _mm512_set1_ps(p[p_ld + t]) : p0;
        for (int c = 0; c < NV; c++) {
            __m512 x = _mm512_maskz_loadu_ps(m[c], vr + 16 * c);
            acc[0][c] = _mm512_fmadd_ps(p0, x, acc[0][c]);
            if (two) acc[1][c] = _mm512_fmadd_ps(p1, x, acc[1][c]);
        }
    }
    for (int c = 0; c < NV; c++) {
        _mm512_mask_storeu_ps(out + 16 * (c0 + (size_t)c), m[c], acc[0][c]);
        if (two) _mm512_mask_storeu_ps(out + out_ld + 16 * (c0 + (size_t)c), m[c], acc[1][c]);
    }
}

void ac_attn_mix_rows_avx512(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                             float *out, size_t out_ld, int add)
{
    if (!add)
        for (size_t i = 0; i < g; i++) memset(out + i * out_ld, 0, dk * sizeof *out);
    size_t nv = (dk + 15) / 16;
    /* two query rows at a time take each value row once */
    for (size_t i = 0; i < g; i += 2) {
        int two = i + 1 < g;
        for (size_t c0 = 0; c0 < nv; c0 += ROW_VECS) {
            const float *pi = p + i * p_ld;
            float *oi = out + i * out_ld;
            switch (nv - c0 < ROW_VECS ? nv - c0 : ROW_VECS) { /* a copy per width keeps the sums in registers */
            case 1: mix_pair(1, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 2: mix_pair(2, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 3: mix_pair(3, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 4: mix_pair(4, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 5: mix_pair(5, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 6: mix_pair(6, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            case 7: mix_pair(7, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            default: mix_pair(ROW_VECS, two, pi, p_ld, v, ld, n, dk, c0, oi, out_ld); break;
            }
        }
    }
}
