/* AVX-512 product for one input row against 16-bit weights (decoding),
 * built with -mavx512f -mavx512bw -mf16c and run only through the kernel
 * table, after its CPU check. Twice the lanes of the AVX2 version per load
 * and FMA. */
#include <immintrin.h>
#include <stdint.h>

#include "tensor/mat_avx512.h"
#include "tensor/transpose_avx512.h"

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

size_t ac_matmul_row16_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1)
{
    size_t K = w->cols, stride = (size_t)ac_dtype_bytes(w->dtype, K), n = n0;
    float out[4];
    for (; n + 4 <= n1; n += 4) {
        quad(x, K, (const unsigned char *)w->data + n * stride, stride, w->dtype, out);
        for (int i = 0; i < 4; i++) y[n + i] = out[i] + (bias ? bias[n + i] : 0.0f);
    }
    return n;
}

/* ---- many rows: a packed GEMM that converts the weights as it packs ----
 * Y[M][n0..n1) in tiles of MR input rows by NR weight rows. Per block of KC
 * columns, NR weight rows are converted to f32 and transposed into PACK
 * [KC][NR] (it stays in L1 while every tile of MR rows of X uses it); a
 * tile keeps its MR x NR sums in registers, broadcasting X's values. Every
 * output is one FMA chain over k in order, then + bias: the tiling, the
 * blocks and the thread count never change a result. */
#define MR 6
#define NR AC_GEMM16_NR
#define NV (NR / 16) /* vectors per packed row */
#define KC AC_GEMM16_KC

/* rows [n, n + nr) x columns [k0, k0 + kc) of W as PACK[kc][NR] (rows past
 * nr as zeros). The weights come from DRAM in 64 short row pieces, which
 * the hardware does not prefetch: the block packed next (NEXT, its first
 * row, NEXT_ROWS rows) is fetched into L2 while the tiles use this one. */
static void pack(const ac_mat *w, size_t n, size_t nr, size_t k0, size_t kc, const unsigned char *next,
                 size_t next_rows, float *out)
{
    size_t stride = (size_t)ac_dtype_bytes(w->dtype, w->cols);
    for (size_t g = 0; g < NV; g++)
        for (size_t k = 0; k < kc; k += 16) {
            size_t kr = kc - k < 16 ? kc - k : 16;
            __mmask16 m = (__mmask16)((1u << kr) - 1);
            __m512 r[16];
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++) {
                size_t row = g * 16 + i;
                if (row < next_rows && k % 32 == 0) _mm_prefetch((const char *)next + row * stride + 2 * k, _MM_HINT_T1);
                r[i] = row < nr ? load_part((const unsigned char *)w->data + (n + row) * stride + 2 * (k0 + k), m,
                                            w->dtype)
                                : _mm512_setzero_ps();
            }
            ac_transpose16(r);
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++)
                if (i < kr) _mm512_store_ps(out + (k + i) * NR + g * 16, r[i]);
        }
}

/* the lanes of Y's row segment at column n + 16 * v that are inside nr */
static inline __mmask16 lanes(size_t nr, size_t v)
{
    size_t c = 16 * v;
    return c >= nr ? 0 : nr - c >= 16 ? 0xffff : (__mmask16)((1u << (nr - c)) - 1);
}

/* MR_ (<= MR) rows of X against the packed block: Y += X . PACK, the first
 * block starting from zero and the last adding the bias */
static inline __attribute__((always_inline)) void tile(size_t mr_, const float *x, size_t ldx, const float *p,
                                                       size_t kc, float *y, size_t ldy, size_t nr, int first,
                                                       const float *bias)
{
    __m512 acc[MR][NV];
    for (size_t i = 0; i < mr_; i++)
        for (size_t v = 0; v < NV; v++)
            acc[i][v] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(lanes(nr, v), y + i * ldy + 16 * v);
    for (size_t k = 0; k < kc; k++) {
        __m512 b[NV];
        for (size_t v = 0; v < NV; v++) b[v] = _mm512_load_ps(p + k * NR + 16 * v);
        for (size_t i = 0; i < mr_; i++) {
            __m512 a = _mm512_set1_ps(x[i * ldx + k]);
            for (size_t v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(a, b[v], acc[i][v]);
        }
    }
    for (size_t v = 0; v < NV; v++) {
        __mmask16 m = lanes(nr, v);
        __m512 bv = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v) : _mm512_setzero_ps();
        for (size_t i = 0; i < mr_; i++)
            _mm512_mask_storeu_ps(y + i * ldy + 16 * v, m, bias ? _mm512_add_ps(acc[i][v], bv) : acc[i][v]);
    }
}

static void tile_any(size_t mr, const float *x, size_t ldx, const float *p, size_t kc, float *y, size_t ldy,
                     size_t nr, int first, const float *bias)
{
    switch (mr) { /* one specialized copy per row count keeps the sums in registers */
    case 1: tile(1, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    case 2: tile(2, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    case 3: tile(3, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    case 4: tile(4, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    case 5: tile(5, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    default: tile(MR, x, ldx, p, kc, y, ldy, nr, first, bias); break;
    }
}

size_t ac_gemm16_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                        float *pack_buf)
{
    size_t K = w->cols, N = w->rows, stride = (size_t)ac_dtype_bytes(w->dtype, K);
    for (size_t n = n0; n < n1; n += NR) {
        size_t nr = n1 - n < NR ? n1 - n : NR;
        for (size_t k0 = 0; k0 < K; k0 += KC) {
            size_t kc = K - k0 < KC ? K - k0 : KC;
            int first = k0 == 0, last = k0 + kc == K;
            /* the next block: this panel's next columns, else the next panel's first */
            size_t nn = last ? n + NR : n, nk = last ? 0 : k0 + KC;
            size_t next_rows = nn >= n1 ? 0 : n1 - nn < NR ? n1 - nn : NR;
            const unsigned char *next = (const unsigned char *)w->data + (next_rows ? nn * stride + 2 * nk : 0);
            pack(w, n, nr, k0, kc, next, next_rows, pack_buf);
            for (size_t m = 0; m < M; m += MR)
                tile_any(M - m < MR ? M - m : MR, x + m * K + k0, K, pack_buf, kc, y + m * N + n, N, nr, first,
                         last && bias ? bias + n : NULL);
        }
    }
    return n1;
}

/* ac_quantize_q8_act, 16 lanes at a time, to the same bits: the largest
 * |x| by max (which, as the scalar comparison, passes a NaN over), and
 * x * id rounded to nearest even by the conversion (the scalar adds and
 * takes away 1.5 * 2^23: the same integer for |v| <= 127, and 0 alike from
 * a NaN through int32's 0x80000000 cut to int8) */
void ac_quantize_q8_act_avx512(const float *x, ac_block_q8_act *out, size_t n)
{
    for (size_t b = 0; b < n / AC_QK8_0; b++, x += AC_QK8_0, out++) {
        __m512 lo = _mm512_loadu_ps(x), hi = _mm512_loadu_ps(x + 16);
        __m512 a = _mm512_max_ps(_mm512_abs_ps(hi), _mm512_max_ps(_mm512_abs_ps(lo), _mm512_setzero_ps()));
        float amax = _mm512_reduce_max_ps(a);
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        __m512i ql = _mm512_cvtps_epi32(_mm512_mul_ps(lo, _mm512_set1_ps(id)));
        __m512i qh = _mm512_cvtps_epi32(_mm512_mul_ps(hi, _mm512_set1_ps(id)));
        _mm_storeu_si128((__m128i *)out->qs, _mm512_cvtepi32_epi8(ql));
        _mm_storeu_si128((__m128i *)(out->qs + 16), _mm512_cvtepi32_epi8(qh));
        /* the sum of the int8 values: a NaN's 0x80000000 counts as its 0 */
        __m512i wl = _mm512_cvtepi8_epi32(_mm512_cvtepi32_epi8(ql)), wh = _mm512_cvtepi8_epi32(_mm512_cvtepi32_epi8(qh));
        out->d = d;
        out->sum = _mm512_reduce_add_epi32(_mm512_add_epi32(wl, wh));
    }
}
