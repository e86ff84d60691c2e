/* A packed GEMM of Q8_0 weights and int8 activations on vpdpbusd (built
 * with -mavx512f -mavx512bw -mavx512vnni; run only through the kernel
 * table, after its CPU check). Y[M][n0..n1) in tiles of MR input rows by
 * NR weight rows. Per block of KB blocks of 32 columns, NR weight rows are
 * transposed into PACK: for each block, each group of 4 columns (a quad),
 * 16 weight rows' 4 bytes side by side per vector, so that one vpdpbusd
 * takes 4 products for 16 outputs, with X's quad broadcast. vpdpbusd
 * multiplies unsigned by signed bytes: the weights are packed as w + 128
 * (unsigned) and the block's sum starts from -128 * sum(x), which takes
 * the offset back out exactly. Each block's int32 sums are then converted
 * and scaled by the weight's and the activation's scales into f32 sums. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "tensor/dispatch.h"
#include "tensor/mat_q8_vnni.h"
#include "tensor/prefetch.h"
#include "tensor/transpose_avx512.h"

#define MR 2 /* three rows of sums and their int32 partials spill the 32 registers: 0.64 of the int8 roof against 0.69 */
#define NR AC_GEMM16_NR
#define NV (NR / 16)               /* vectors of outputs per tile row */
#define KB (AC_GEMM16_KC / AC_QK8_0) /* blocks packed at a time */
#define QUADS (AC_QK8_0 / 4)         /* quads per block */

_Static_assert(KB % 2 == 0, "blocks are packed two at a time");
_Static_assert((KB * QUADS * NV * 16 + KB * NV * 16) <= AC_GEMM_W_PACK, "the pack fits its buffer");

/* Weight rows [n, n + nr) x blocks [b0, b0 + nb) into PACK: the bytes
 * (+128) as [block][quad][NV][16 rows] int32, then the scales as
 * [block][NV][16 rows] f32; rows past nr as zeros. */
static void pack(const ac_mat *w, size_t n, size_t nr, size_t b0, size_t nb, int32_t *out)
{
    const size_t stride = w->cols / AC_QK8_0 * sizeof(ac_block_q8_0);
    const unsigned char *base = (const unsigned char *)w->data + n * stride + b0 * sizeof(ac_block_q8_0);
    float *scales = (float *)(out + KB * QUADS * NV * 16);
    const __m512i offset = _mm512_set1_epi8((char)0x80);
    for (size_t g = 0; g < NV; g++) {
        for (size_t b = 0; b < nb; b += 2) {
            __m512 r[16];
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; i++) {
                size_t row = g * 16 + i;
                const unsigned char *p = base + row * stride + b * sizeof(ac_block_q8_0) + 2;
                __m256i lo = row < nr ? _mm256_loadu_si256((const __m256i *)p) : _mm256_setzero_si256();
                __m256i hi = row < nr && b + 1 < nb ? _mm256_loadu_si256((const __m256i *)(p + sizeof(ac_block_q8_0)))
                                                    : _mm256_setzero_si256();
                r[i] = _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
            }
            ac_transpose16(r); /* vector j: quad j of every row, block b for j < 8, b + 1 after */
#pragma GCC unroll 16
            for (size_t j = 0; j < 16; j++) {
                size_t bj = b + j / QUADS;
                if (bj < nb)
                    _mm512_store_si512(out + ((bj * QUADS + j % QUADS) * NV + g) * 16,
                                       _mm512_xor_si512(_mm512_castps_si512(r[j]), offset));
            }
        }
        for (size_t b = 0; b < nb; b++) {
            uint16_t h[16] = {0};
            for (size_t i = 0; i < 16 && g * 16 + i < nr; i++)
                memcpy(&h[i], base + (g * 16 + i) * stride + b * sizeof(ac_block_q8_0), 2);
            _mm512_store_ps(scales + (b * NV + g) * 16, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)h)));
        }
    }
}

/* the lanes of Y's row segment at column n + 16 * v that are inside nr */
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

static inline int32_t quad_at(const int8_t *q)
{
    int32_t v;
    memcpy(&v, q, 4);
    return v;
}

/* Blocks [b0, b0 + nb) of ROWS rows of X (BLOCKS apart) into L1, for the
 * next tile: a panel of long rows takes each row from another page
 * (measured: +10 % at 4096 columns, nothing at 1024) */
static inline void prefetch_rows(const ac_block_q8_act *x, size_t rows, size_t blocks, size_t b0, size_t nb)
{
    ac_prefetch_l1(x + b0, rows, blocks * sizeof *x, nb * sizeof *x);
}

/* Weight rows [n, n + nr) x blocks [b0, b0 + nb) into L2: the next panel
 * to pack (a prefill of 200 rows spent a tenth in packing) */
static inline void prefetch_panel(const ac_mat *w, size_t n, size_t nr, size_t b0, size_t nb)
{
    const size_t stride = w->cols / AC_QK8_0 * sizeof(ac_block_q8_0);
    ac_prefetch_l2((const char *)w->data + n * stride + b0 * sizeof(ac_block_q8_0), nr, stride,
                   nb * sizeof(ac_block_q8_0));
}

/* MR_ (<= MR) rows of X (activation blocks b0.., rows BLOCKS apart) against
 * the packed blocks: Y += X . PACK, the first call of a panel starting from
 * zero and the last adding the bias */
static inline __attribute__((always_inline)) void tile(size_t mr_, const ac_block_q8_act *x, size_t blocks,
                                                       const int32_t *p, size_t nb, float *y, size_t ldy, size_t nr,
                                                       int first, const float *bias)
{
    const float *scales = (const float *)(p + KB * QUADS * NV * 16);
    __m512 acc[MR][NV];
    for (size_t i = 0; i < mr_; i++)
        for (size_t v = 0; v < NV; v++)
            acc[i][v] = first ? _mm512_setzero_ps() : load_y(y + i * ldy + 16 * v, lanes(nr, v));
    for (size_t b = 0; b < nb; b++) {
        __m512i dot[MR][NV];
        for (size_t i = 0; i < mr_; i++) {
            __m512i start = _mm512_set1_epi32(-128 * x[i * blocks + b].sum);
            for (size_t v = 0; v < NV; v++) dot[i][v] = start;
        }
        for (size_t q = 0; q < QUADS; q++) {
            __m512i wv[NV];
            for (size_t v = 0; v < NV; v++) wv[v] = _mm512_load_si512(p + ((b * QUADS + q) * NV + v) * 16);
            for (size_t i = 0; i < mr_; i++) {
                __m512i xq = _mm512_set1_epi32(quad_at(x[i * blocks + b].qs + 4 * q));
                for (size_t v = 0; v < NV; v++) dot[i][v] = _mm512_dpbusd_epi32(dot[i][v], wv[v], xq);
            }
        }
        for (size_t i = 0; i < mr_; i++) {
            __m512 dx = _mm512_set1_ps(x[i * blocks + b].d);
            for (size_t v = 0; v < NV; v++)
                acc[i][v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][v]),
                                            _mm512_mul_ps(_mm512_load_ps(scales + (b * NV + v) * 16), dx), acc[i][v]);
        }
    }
    for (size_t v = 0; v < NV; v++) {
        __mmask16 m = lanes(nr, v);
        __m512 bv = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v) : _mm512_setzero_ps();
        for (size_t i = 0; i < mr_; i++)
            store_y(y + i * ldy + 16 * v, m, bias ? _mm512_add_ps(acc[i][v], bv) : acc[i][v]);
    }
}

static void tile_any(size_t mr, const ac_block_q8_act *x, size_t blocks, const int32_t *p, size_t nb, float *y,
                     size_t ldy, size_t nr, int first, const float *bias)
{
    switch (mr) { /* one specialized copy per row count keeps the sums in registers */
    case 1: tile(1, x, blocks, p, nb, y, ldy, nr, first, bias); break;
    case 2: tile(2, x, blocks, p, nb, y, ldy, nr, first, bias); break;
    default: tile(MR, x, blocks, p, nb, y, ldy, nr, first, bias); break;
    }
}

size_t ac_gemm_q8_vnni(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1, float *pack_buf)
{
    size_t blocks = w->cols / AC_QK8_0, N = w->rows;
    int32_t *p = (int32_t *)pack_buf;
    for (size_t n = n0; n < n1; n += NR) {
        size_t nr = n1 - n < NR ? n1 - n : NR;
        for (size_t b0 = 0; b0 < blocks; b0 += KB) {
            size_t nb = blocks - b0 < KB ? blocks - b0 : KB;
            pack(w, n, nr, b0, nb, p);
            if (b0 + KB < blocks) prefetch_panel(w, n, nr, b0 + KB, blocks - b0 - KB < KB ? blocks - b0 - KB : KB);
            else if (n + NR < n1) prefetch_panel(w, n + NR, n1 - n - NR < NR ? n1 - n - NR : NR, 0, blocks < KB ? blocks : KB);
            for (size_t m = 0; m < M; m += MR) {
                if (m + MR < M) /* the next tile's rows */
                    prefetch_rows(x + (m + MR) * blocks, M - m - MR < MR ? M - m - MR : MR, blocks, b0, nb);
                tile_any(M - m < MR ? M - m : MR, x + m * blocks + b0, blocks, p, nb, y + m * N + n, N, nr, b0 == 0,
                         b0 + nb == blocks && bias ? bias + n : NULL);
            }
        }
    }
    return n1;
}
