/* AVX2/FMA kernels. This file is compiled with -mavx2 -mfma; its functions
 * run only through the AVX2 level's kernel table, after its CPU check. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tensor/kernels_avx2.h"

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* A mask whose first R (0..8) lanes are set. */
static inline __m256i tail_mask(size_t r)
{
    return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - r));
}

/* The R (1..8) values at P: masked loads and above all masked stores are
 * slow on some CPUs (a masked store costs 6-8 plain ones on Zen 4), so only
 * a row's last, partial vector takes them. */
static inline __m256 load_n(const float *p, size_t r)
{
    return r == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tail_mask(r));
}

static inline void store_n(float *p, size_t r, __m256 v)
{
    if (r == 8) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, tail_mask(r), v);
}

static inline float hmax(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ---- matmul: dot products of rows, a 2x4 tile of outputs at a time ------ */

static void tile(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                 float *y, size_t ldy, size_t K, size_t m, size_t mr, size_t n, size_t nr)
{
    __m256 acc[2][4];
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 4; j++) acc[i][j] = _mm256_setzero_ps();
    const float *xr[2], *wr[4];
    for (size_t i = 0; i < 2; i++) xr[i] = x + (m + (i < mr ? i : 0)) * ldx;
    for (size_t j = 0; j < 4; j++) wr[j] = w + (n + (j < nr ? j : 0)) * ldw;
    size_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 a0 = _mm256_loadu_ps(xr[0] + k), a1 = _mm256_loadu_ps(xr[1] + k);
        for (size_t j = 0; j < 4; j++) {
            __m256 b = _mm256_loadu_ps(wr[j] + k);
            acc[0][j] = _mm256_fmadd_ps(a0, b, acc[0][j]);
            acc[1][j] = _mm256_fmadd_ps(a1, b, acc[1][j]);
        }
    }
    if (k < K) {
        __m256i mask = tail_mask(K - k);
        __m256 a0 = _mm256_maskload_ps(xr[0] + k, mask), a1 = _mm256_maskload_ps(xr[1] + k, mask);
        for (size_t j = 0; j < 4; j++) {
            __m256 b = _mm256_maskload_ps(wr[j] + k, mask);
            acc[0][j] = _mm256_fmadd_ps(a0, b, acc[0][j]);
            acc[1][j] = _mm256_fmadd_ps(a1, b, acc[1][j]);
        }
    }
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            y[(m + i) * ldy + n + j] = hsum(acc[i][j]) + (bias ? bias[n + j] : 0.0f);
}

void ac_matmul_nt_range_avx2(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                             size_t ldy, size_t K, size_t m0, size_t m1, size_t n0, size_t n1)
{
    for (size_t m = m0; m < m1; m += 2) {
        size_t mr = m1 - m < 2 ? m1 - m : 2;
        for (size_t n = n0; n < n1; n += 4) {
            size_t nr = n1 - n < 4 ? n1 - n : 4;
            tile(x, ldx, w, ldw, bias, y, ldy, K, m, mr, n, nr);
        }
    }
}

/* ---- attention over K/V rows read once (decoding) ------------------------ */

void ac_attn_dot_rows_avx2(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                           size_t s_ld)
{
    size_t full = dk / 8 * 8;
    __m256i mask = tail_mask(dk - full);
    for (size_t t = 0; t < n; t++) {
        const float *kr = k + t * ld;
        for (size_t i = 0; i < g; i++) {
            const float *qr = q + i * dk;
            /* four chains of sums, so a row's products overlap */
            __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            size_t d = 0;
            for (; d + 32 <= full; d += 32)
                for (size_t c = 0; c < 4; c++)
                    a[c] = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d + 8 * c), _mm256_loadu_ps(kr + d + 8 * c), a[c]);
            for (size_t c = 0; d < full; d += 8, c++)
                a[c] = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d), _mm256_loadu_ps(kr + d), a[c]);
            if (d < dk)
                a[3] = _mm256_fmadd_ps(_mm256_maskload_ps(qr + d, mask), _mm256_maskload_ps(kr + d, mask), a[3]);
            s[i * s_ld + t] = hsum(_mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])));
        }
    }
}

enum { MIX_KEYS = 16 }; /* value rows a block: in L1 while each query row of the group takes them */

void ac_attn_mix_rows_avx2(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                           float *out, size_t out_ld, int add)
{
    if (!add)
        for (size_t i = 0; i < g; i++) memset(out + i * out_ld, 0, dk * sizeof *out);
    size_t full = dk / 64 * 64;
    for (size_t t0 = 0; t0 < n; t0 += MIX_KEYS) {
        size_t t1 = n - t0 < MIX_KEYS ? n : t0 + MIX_KEYS;
        for (size_t i = 0; i < g; i++) {
            const float *pr = p + i * p_ld;
            float *o = out + i * out_ld;
            for (size_t d = 0; d < full; d += 64) {
                __m256 acc[8];
                for (size_t c = 0; c < 8; c++) acc[c] = _mm256_loadu_ps(o + d + 8 * c);
                for (size_t t = t0; t < t1; t++) {
                    __m256 pt = _mm256_broadcast_ss(pr + t);
                    const float *vr = v + t * ld + d;
                    for (size_t c = 0; c < 8; c++) acc[c] = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vr + 8 * c), acc[c]);
                }
                for (size_t c = 0; c < 8; c++) _mm256_storeu_ps(o + d + 8 * c, acc[c]);
            }
            for (size_t d = full; d < dk; d += 8) {
                size_t live = dk - d < 8 ? dk - d : 8;
                __m256 acc = load_n(o + d, live);
                for (size_t t = t0; t < t1; t++)
                    acc = _mm256_fmadd_ps(_mm256_broadcast_ss(pr + t), load_n(v + t * ld + d, live), acc);
                store_n(o + d, live, acc);
            }
        }
    }
}

/* ---- depthwise conv: vectorized across channels -------------------------- */

void ac_conv1d_depthwise_avx2(const ac_conv1d_shape *s, const float *x, size_t batch,
                              size_t T, const float *w, const float *bias, float *y)
{
    size_t To = ac_conv1d_out_len(s, T), C = (size_t)s->cin;
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < To; t++) {
            float *out = y + (b * To + t) * C;
            for (size_t c = 0; c < C; c += 8) {
                size_t live = C - c < 8 ? C - c : 8;
                __m256 acc = _mm256_setzero_ps();
                for (int k = 0; k < s->kernel; k++) {
                    long ti = (long)t * s->stride - s->pad + (long)k * s->dilation;
                    if (ti < 0 || ti >= (long)T) continue;
                    __m256 xv = load_n(x + (b * T + (size_t)ti) * C + c, live);
                    __m256 wv = load_n(w + (size_t)k * C + c, live);
                    acc = _mm256_fmadd_ps(xv, wv, acc);
                }
                if (bias) acc = _mm256_add_ps(acc, load_n(bias + c, live));
                store_n(out + c, live, acc);
            }
        }
}

/* ---- polyphase filtering: four blocks at a time share each load of a filter */

void ac_polyphase_avx2(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                       size_t blocks, float *out)
{
    size_t i = 0;
    for (; i + 4 <= blocks; i += 4)
        for (size_t j = 0; j < phases; j++) {
            const float *k = bank + j * stride, *x0 = x + i * step;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (size_t m = 0; m < stride; m += 8) {
                __m256 w = _mm256_loadu_ps(k + m);
                a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + m), a0);
                a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + step + m), a1);
                a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + 2 * step + m), a2);
                a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + 3 * step + m), a3);
            }
            out[i * phases + j] = hsum(a0);
            out[(i + 1) * phases + j] = hsum(a1);
            out[(i + 2) * phases + j] = hsum(a2);
            out[(i + 3) * phases + j] = hsum(a3);
        }
    for (; i < blocks; i++)
        for (size_t j = 0; j < phases; j++) {
            const float *k = bank + j * stride, *xi = x + i * step;
            __m256 a = _mm256_setzero_ps();
            for (size_t m = 0; m < stride; m += 8)
                a = _mm256_fmadd_ps(_mm256_loadu_ps(k + m), _mm256_loadu_ps(xi + m), a);
            out[i * phases + j] = hsum(a);
        }
}

/* ---- element-wise ------------------------------------------------------------ */

void ac_channel_affine_avx2(float *x, size_t rows, size_t C, const float *scale,
                            const float *shift, int relu)
{
    __m256 zero = _mm256_setzero_ps();
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * C;
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            __m256 v = _mm256_fmadd_ps(load_n(row + c, live),
                                       load_n(scale + c, live),
                                       load_n(shift + c, live));
            if (relu) v = _mm256_max_ps(v, zero);
            store_n(row + c, live, v);
        }
    }
}

void ac_relu_avx2(float *x, size_t n)
{
    __m256 zero = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        store_n(x + i, live, _mm256_max_ps(load_n(x + i, live), zero));
    }
}

/* exp(x) by range reduction x = n ln2 + r, |r| <= ln2/2, and a degree-6
 * polynomial for e^r (Cephes expf coefficients); relative error ~1e-7. */
static inline __attribute__((always_inline)) __m256 exp8(__m256 x, int nonpositive)
{
    x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.3365447504f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    if (nonpositive) /* n in [-126, 0]: 2^n in one step, the same bits (the exact product rounded once) */
        return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
                                    _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23)));
    /* scale by 2^n in two halves so n = 128 (x near 88.7) does not overflow
     * the exponent field */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i h1 = _mm256_srai_epi32(ni, 1), h2 = _mm256_sub_epi32(ni, h1);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h1, _mm256_set1_epi32(127)), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h2, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

static inline __m256 sigmoid8(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x), 0);
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

#define ELEMENTWISE(name, expr)                                              \
    void ac_##name##_avx2(float *x, size_t n)                                \
    {                                                                        \
        for (size_t i = 0; i < n; i += 8) {                                  \
            size_t live = n - i < 8 ? n - i : 8;                             \
            __m256 v = load_n(x + i, live);                                  \
            store_n(x + i, live, expr);                                      \
        }                                                                    \
    }

ELEMENTWISE(exp, exp8(v, 0))
ELEMENTWISE(sigmoid, sigmoid8(v))
/* tanh(v) = 2 sigmoid(2v) - 1 */
ELEMENTWISE(tanh, _mm256_fmsub_ps(_mm256_set1_ps(2.0f),
                                  sigmoid8(_mm256_add_ps(v, v)), _mm256_set1_ps(1.0f)))

void ac_softmax_rows_avx2(float *x, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * cols, mx = -INFINITY;
        for (size_t i = 0; i < cols; i++) mx = v[i] > mx ? v[i] : mx;
        __m256 m = _mm256_set1_ps(mx), sum = _mm256_setzero_ps();
        for (size_t i = 0; i < cols; i += 8) {
            size_t live = cols - i < 8 ? cols - i : 8;
            __m256 e = exp8(_mm256_sub_ps(load_n(v + i, live), m), 1);
            e = _mm256_and_ps(e, _mm256_castsi256_ps(tail_mask(live)));
            sum = _mm256_add_ps(sum, e);
            store_n(v + i, live, e);
        }
        __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
        for (size_t i = 0; i < cols; i += 8) {
            size_t live = cols - i < 8 ? cols - i : 8;
            store_n(v + i, live, _mm256_mul_ps(load_n(v + i, live), inv));
        }
    }
}

ELEMENTWISE(silu, _mm256_mul_ps(v, sigmoid8(v)))

void ac_silu_mul_avx2(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        __m256 v = load_n(y + i, live);
        store_n(y + i, live, _mm256_mul_ps(_mm256_mul_ps(v, sigmoid8(v)), load_n(x + i, live)));
    }
}

void ac_axpy_avx2(float *y, const float *x, float alpha, size_t n)
{
    __m256 a = _mm256_set1_ps(alpha);
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        __m256 v = _mm256_fmadd_ps(a, load_n(x + i, live), load_n(y + i, live));
        store_n(y + i, live, v);
    }
}

void ac_glu_avx2(const float *x, float *y, size_t rows, size_t C)
{
    for (size_t r = 0; r < rows; r++) {
        const float *a = x + r * 2 * C, *b = a + C;
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            __m256 v = _mm256_mul_ps(load_n(a + c, live), sigmoid8(load_n(b + c, live)));
            store_n(y + r * C + c, live, v);
        }
    }
}

void ac_layernorm_avx2(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                       const float *beta, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *v = x + r * C;
        float *o = y + r * C;
        __m256 s = _mm256_setzero_ps();
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            s = _mm256_add_ps(s, load_n(v + c, live));
        }
        __m256 mean = _mm256_set1_ps(hsum(s) / (float)C);
        __m256 q = _mm256_setzero_ps();
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            __m256 d = _mm256_and_ps(_mm256_sub_ps(load_n(v + c, live), mean),
                                     _mm256_castsi256_ps(tail_mask(live)));
            q = _mm256_fmadd_ps(d, d, q);
        }
        __m256 inv = _mm256_set1_ps(1.0f / sqrtf(hsum(q) / (float)C + eps));
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            __m256 d = _mm256_mul_ps(_mm256_sub_ps(load_n(v + c, live), mean), inv);
            d = _mm256_fmadd_ps(d, load_n(gamma + c, live), load_n(beta + c, live));
            store_n(o + c, live, d);
        }
    }
}

void ac_log_softmax_avx2(float *x, size_t n)
{
    __m256 mx = _mm256_set1_ps(-INFINITY);
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), load_n(x + i, live),
                                    _mm256_castsi256_ps(tail_mask(live)));
        mx = _mm256_max_ps(mx, v);
    }
    float m = hmax(mx);
    __m256 vm = _mm256_set1_ps(m), sum = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        __m256 e = exp8(_mm256_sub_ps(load_n(x + i, live), vm), 1);
        sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_castsi256_ps(tail_mask(live))));
    }
    __m256 lse = _mm256_set1_ps(m + logf(hsum(sum)));
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        store_n(x + i, live, _mm256_sub_ps(load_n(x + i, live), lse));
    }
}


/* erf by Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7) on |x|,
 * with the sign put back. */
static inline __m256 erf8(__m256 x)
{
    __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f)), a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(1.061405429f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    p = _mm256_mul_ps(p, t);
    __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(a, a)), 1);
    return _mm256_or_ps(_mm256_fnmadd_ps(p, e, _mm256_set1_ps(1.0f)), sign);
}

ELEMENTWISE(gelu, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                                _mm256_add_ps(_mm256_set1_ps(1.0f),
                                              erf8(_mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f))))))

void ac_mul_avx2(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        size_t live = n - i < 8 ? n - i : 8;
        store_n(y + i, live, _mm256_mul_ps(load_n(y + i, live), load_n(x + i, live)));
    }
}

void ac_rmsnorm_avx2(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                     size_t gamma_stride, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *v = x + r * C, *g = gamma ? gamma + r * gamma_stride : NULL;
        float *o = y + r * C;
        __m256 q = _mm256_setzero_ps();
        for (size_t c = 0; c < C; c += 8) {
            __m256 d = load_n(v + c, C - c < 8 ? C - c : 8);
            q = _mm256_fmadd_ps(d, d, q);
        }
        __m256 inv = _mm256_set1_ps(1.0f / sqrtf(hsum(q) / (float)C + eps));
        for (size_t c = 0; c < C; c += 8) {
            size_t live = C - c < 8 ? C - c : 8;
            __m256 d = _mm256_mul_ps(load_n(v + c, live), inv);
            if (g) d = _mm256_mul_ps(d, load_n(g + c, live));
            store_n(o + c, live, d);
        }
    }
}

void ac_rope_rotate_avx2(float *x, size_t heads, size_t dim, const float *cs, const float *sn)
{
    size_t half = dim / 2;
    for (size_t h = 0; h < heads; h++) {
        float *a = x + h * dim, *b = a + half;
        for (size_t i = 0; i < half; i += 8) {
            size_t live = half - i < 8 ? half - i : 8;
            __m256 x1 = load_n(a + i, live), x2 = load_n(b + i, live);
            __m256 c = load_n(cs + i, live), s = load_n(sn + i, live);
            store_n(a + i, live, _mm256_fmsub_ps(x1, c, _mm256_mul_ps(x2, s)));
            store_n(b + i, live, _mm256_fmadd_ps(x2, c, _mm256_mul_ps(x1, s)));
        }
    }
}

/* Keys [0, n) of one row: e = exp(s*v - m) where v is not -inf, else 0;
 * returns the sum. */
static float exp_shifted(float *v, size_t n, float s, float m)
{
    __m256 vs = _mm256_set1_ps(s), vm = _mm256_set1_ps(m), ninf = _mm256_set1_ps(-INFINITY), sum = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* whole vectors apart: no tail mask to apply */
        __m256 x = _mm256_loadu_ps(v + i);
        __m256 e = _mm256_and_ps(exp8(_mm256_fmsub_ps(x, vs, vm), 1), _mm256_cmp_ps(x, ninf, _CMP_NEQ_OQ));
        sum = _mm256_add_ps(sum, e);
        _mm256_storeu_ps(v + i, e);
    }
    if (i < n) {
        size_t live = n - i;
        __m256 x = load_n(v + i, live);
        __m256 e = exp8(_mm256_fmsub_ps(x, vs, vm), 1);
        e = _mm256_and_ps(e, _mm256_and_ps(_mm256_cmp_ps(x, ninf, _CMP_NEQ_OQ), _mm256_castsi256_ps(tail_mask(live))));
        sum = _mm256_add_ps(sum, e);
        store_n(v + i, live, e);
    }
    return hsum(sum);
}

void ac_softmax_masked_avx2(float *x, size_t rows, size_t cols, float scale, const ac_mask *m)
{
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * cols, s = scale;
        size_t R = (m ? m->row0 : 0) + r, n = cols;
        if (m && m->keys && m->keys < n) n = m->keys;
        if (m && m->causal && R + 1 < n) n = R + 1;
        if (m && (m->add || m->keep)) { /* the mask's values in place, scaled */
            for (size_t j = 0; j < n; j++)
                v[j] = m->keep && !m->keep[R * m->ld + j] ? -INFINITY : v[j] * scale + (m->add ? m->add[R * m->ld + j] : 0.0f);
            s = 1.0f;
        }
        __m256 mx = _mm256_set1_ps(-INFINITY);
        size_t i = 0;
        for (; i + 8 <= n; i += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(v + i));
        if (i < n)
            mx = _mm256_max_ps(mx, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), load_n(v + i, n - i),
                                                    _mm256_castsi256_ps(tail_mask(n - i))));
        float top = hmax(mx);
        memset(v + n, 0, (cols - n) * sizeof *v);
        if (top == -INFINITY) {
            memset(v, 0, n * sizeof *v);
            continue;
        }
        __m256 inv = _mm256_set1_ps(1.0f / exp_shifted(v, n, s, top * s));
        for (i = 0; i < n; i += 8) {
            size_t live = n - i < 8 ? n - i : 8;
            store_n(v + i, live, _mm256_mul_ps(load_n(v + i, live), inv));
        }
    }
}
