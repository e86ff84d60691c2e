/* Products of BF16 weights and activations rounded to bf16 on vdpbf16ps
 * (built with -mavx512f -mavx512bw -mavx512bf16; run only through the
 * kernel table, after its CPU check): each instruction takes, per f32
 * lane, the two products of a pair of consecutive columns, exact in f32,
 * and adds them to the lane. A weight row in memory is already a run of
 * such pairs. The one-row kernel takes X rounded to bf16
 * (ac_round_bf16_act), so converting it here is exact; the GEMM takes X as
 * given, and its conversion (to nearest even) is the rounding. */
#include <immintrin.h>
#include <stdint.h>

#include "tensor/dispatch.h"
#include "tensor/mat_avx512.h"
#include "tensor/mat_bf16.h"
#include "tensor/prefetch.h"
#include "tensor/transpose_avx512.h"

/* 32 values of X from K on as bf16 pairs: those of mask M, zeros past them */
static inline __m512bh x_pairs(const float *x, __mmask32 m)
{
    __m512 lo = _mm512_maskz_loadu_ps((__mmask16)m, x), hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), x + 16);
    return _mm512_cvtne2ps_pbh(hi, lo);
}

static inline __m512bh w_pairs(const unsigned char *p, __mmask32 m)
{
    return (__m512bh)_mm512_maskz_loadu_epi16(m, p);
}

static inline __mmask32 first_lanes(size_t n) { return n >= 32 ? 0xffffffffu : (__mmask32)((1u << n) - 1); }

/* one input row against four weight rows, prefetching the next four */
static void quad(const float *x, size_t K, const unsigned char *w, size_t stride, float *out)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const unsigned char *w1 = w + stride, *w2 = w1 + stride, *w3 = w2 + stride;
    const char *next = (const char *)w + 4 * stride;
    for (size_t k = 0; k < K; k += 32) {
        _mm_prefetch(next + 8 * k, _MM_HINT_T0);
        _mm_prefetch(next + 8 * k + 64, _MM_HINT_T0);
        _mm_prefetch(next + 8 * k + 128, _MM_HINT_T0);
        _mm_prefetch(next + 8 * k + 192, _MM_HINT_T0);
        __mmask32 m = first_lanes(K - k);
        __m512bh xv = x_pairs(x + k, m);
        a0 = _mm512_dpbf16_ps(a0, xv, w_pairs(w + 2 * k, m));
        a1 = _mm512_dpbf16_ps(a1, xv, w_pairs(w1 + 2 * k, m));
        a2 = _mm512_dpbf16_ps(a2, xv, w_pairs(w2 + 2 * k, m));
        a3 = _mm512_dpbf16_ps(a3, xv, w_pairs(w3 + 2 * k, m));
    }
    out[0] = _mm512_reduce_add_ps(a0), out[1] = _mm512_reduce_add_ps(a1);
    out[2] = _mm512_reduce_add_ps(a2), out[3] = _mm512_reduce_add_ps(a3);
}

size_t ac_matmul_row16_bf16(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1)
{
    if (w->dtype != AC_DTYPE_BF16) return ac_matmul_row16_avx512(x, w, bias, y, n0, n1);
    size_t K = w->cols, stride = 2 * K, n = n0;
    float out[4];
    for (; n + 4 <= n1; n += 4) {
        quad(x, K, (const unsigned char *)w->data + n * stride, stride, out);
        for (int i = 0; i < 4; i++) y[n + i] = out[i] + (bias ? bias[n + i] : 0.0f);
    }
    return n;
}

/* ---- many rows: a packed GEMM -------------------------------------------
 * Y[M][n0..n1) in tiles of MR input rows by NR weight rows. Per block of up
 * to MC input rows and KC columns (KP pairs), the rows of X are packed once
 * into [MC][KP] pairs and kept (in L2) for every block of NR weight rows,
 * which are transposed into PACK [KP][NR] pairs (in L1); a tile keeps its
 * MR x NR sums in registers, broadcasting X's pairs. Packing X per block of
 * weight rows instead took a third of the time, its loads missing L2. */
#define MR 6
#define NR AC_GEMM16_NR
#define NV (NR / 16)
#define KC AC_GEMM16_KC
#define KP (KC / 2)
#define MC AC_GEMM_MC

_Static_assert(KP * NR + MC * KP <= AC_GEMM_PACK, "the packs fit their buffer");

/* rows [n, n + nr) x columns [k0, k0 + kc) of W as PACK[(kc+1)/2][NR]
 * pairs (a last odd column paired with zero; rows past nr as zeros) */
static void pack_w(const ac_mat *w, size_t n, size_t nr, size_t k0, size_t kc, uint32_t *out)
{
    size_t stride = 2 * w->cols;
    for (size_t g = 0; g < NV; g++)
        for (size_t k = 0; k < kc; k += 32) {
            __mmask32 m = first_lanes(kc - k);
            __m512 r[16];
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++) {
                size_t row = g * 16 + i;
                r[i] = row < nr ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(
                                      m, (const unsigned char *)w->data + (n + row) * stride + 2 * (k0 + k)))
                                : _mm512_setzero_ps();
            }
            ac_transpose16(r);
            size_t pairs = (kc - k + 1) / 2;
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++)
                if (i < pairs) _mm512_store_ps((float *)(out + (k / 2 + i) * NR + g * 16), r[i]);
        }
}

/* Rows [n, n + nr) x columns [k0, k0 + kc) of W into L2: the next panel */
static inline void prefetch_panel(const ac_mat *w, size_t n, size_t nr, size_t k0, size_t kc)
{
    ac_prefetch_l2((const char *)w->data + n * 2 * w->cols + 2 * k0, nr, 2 * w->cols, 2 * kc);
}

/* rows [0, mr) of X (row stride LDX) x columns [0, kc) as OUT[mr][KP] pairs */
static void pack_x(const float *x, size_t ldx, size_t mr, size_t kc, uint32_t *out)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t k = 0; k < kc; k += 32)
            _mm512_store_si512(out + i * KP + k / 2, (__m512i)x_pairs(x + i * ldx + k, first_lanes(kc - k)));
}

static inline __mmask16 lanes(size_t nr, size_t v)
{
    size_t c = 16 * v;
    return c >= nr ? 0 : nr - c >= 16 ? 0xffff : (__mmask16)((1u << (nr - c)) - 1);
}

/* Y's segments by plain loads and stores where whole: masked ones are
 * slower on some CPUs, and all but a last block of weight rows are whole */
static inline __m512 load_y(const float *y, __mmask16 m)
{
    return m == 0xffff ? _mm512_loadu_ps(y) : _mm512_maskz_loadu_ps(m, y);
}

static inline void store_y(float *y, __mmask16 m, __m512 v)
{
    if (m == 0xffff) _mm512_storeu_ps(y, v);
    else _mm512_mask_storeu_ps(y, m, v);
}

static inline __attribute__((always_inline)) void tile(size_t mr_, const uint32_t *xp, const uint32_t *p, size_t kp,
                                                       float *y, size_t ldy, size_t nr, int first, const float *bias)
{
    __m512 acc[MR][NV];
    for (size_t i = 0; i < mr_; i++)
        for (size_t v = 0; v < NV; v++)
            acc[i][v] = first ? _mm512_setzero_ps() : load_y(y + i * ldy + 16 * v, lanes(nr, v));
    for (size_t k = 0; k < kp; k++) {
        __m512bh b[NV];
        for (size_t v = 0; v < NV; v++) b[v] = (__m512bh)_mm512_load_si512(p + k * NR + 16 * v);
        for (size_t i = 0; i < mr_; i++) {
            __m512bh a = (__m512bh)_mm512_set1_epi32((int)xp[i * KP + k]);
            for (size_t v = 0; v < NV; v++) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], a, b[v]);
        }
    }
    for (size_t v = 0; v < NV; v++) {
        __mmask16 m = lanes(nr, v);
        __m512 bv = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v) : _mm512_setzero_ps();
        for (size_t i = 0; i < mr_; i++)
            store_y(y + i * ldy + 16 * v, m, bias ? _mm512_add_ps(acc[i][v], bv) : acc[i][v]);
    }
}

static void tile_any(size_t mr, const uint32_t *xp, const uint32_t *p, size_t kp, float *y, size_t ldy, size_t nr,
                     int first, const float *bias)
{
    switch (mr) { /* one specialized copy per row count keeps the sums in registers */
    case 1: tile(1, xp, p, kp, y, ldy, nr, first, bias); break;
    case 2: tile(2, xp, p, kp, y, ldy, nr, first, bias); break;
    case 3: tile(3, xp, p, kp, y, ldy, nr, first, bias); break;
    case 4: tile(4, xp, p, kp, y, ldy, nr, first, bias); break;
    case 5: tile(5, xp, p, kp, y, ldy, nr, first, bias); break;
    default: tile(MR, xp, p, kp, y, ldy, nr, first, bias); break;
    }
}

size_t ac_gemm16_bf16(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                      float *pack_buf)
{
    if (w->dtype != AC_DTYPE_BF16) return ac_gemm16_avx512(x, w, bias, y, M, n0, n1, pack_buf);
    size_t K = w->cols, N = w->rows;
    uint32_t *wp = (uint32_t *)pack_buf, *xp = wp + KP * NR;
    for (size_t m0 = 0; m0 < M; m0 += MC) {
        size_t mc = M - m0 < MC ? M - m0 : MC;
        for (size_t k0 = 0; k0 < K; k0 += KC) {
            size_t kc = K - k0 < KC ? K - k0 : KC;
            pack_x(x + m0 * K + k0, K, mc, kc, xp);
            for (size_t n = n0; n < n1; n += NR) {
                size_t nr = n1 - n < NR ? n1 - n : NR;
                pack_w(w, n, nr, k0, kc, wp);
                if (n + NR < n1) prefetch_panel(w, n + NR, n1 - n - NR < NR ? n1 - n - NR : NR, k0, kc);
                for (size_t m = 0; m < mc; m += MR)
                    tile_any(mc - m < MR ? mc - m : MR, xp + m * KP, wp, (kc + 1) / 2, y + (m0 + m) * N + n, N, nr,
                             k0 == 0, k0 + kc == K && bias ? bias + n : NULL);
            }
        }
    }
    return n1;
}
