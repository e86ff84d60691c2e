/* A packed GEMM of Q8_0 weights and int8 activations on AVX2 (built with
 * -mavx2 -mfma -mf16c; run only through the kernel table, after its CPU
 * check), for CPUs without AVX-512 VNNI. Y[M][n0..n1) in panels of NR
 * weight rows: per KB blocks of 32 columns, the panel is transposed into
 * PACK, for each block and each group of 4 columns (a quad), 8 weight
 * rows' 4 bytes side by side per vector. A tile of MR input rows by NT
 * such vectors takes each quad of X broadcast: vpmaddubsw multiplies
 * unsigned by signed bytes, so |w| is the unsigned operand and x with w's
 * sign the signed one. That way round a weight of -128 (in the format's
 * range) stays exact: |w| = 128 unsigned, and x, which our quantizer keeps
 * within +-127, never overflows when negated (a pair's sum, at most 32512,
 * never saturates), and vpmaddwd sums the pairs to one exact int32
 * per output and quad. Each block's int32 sums are then converted and
 * scaled by the weight's and the activation's scales into f32 sums. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "tensor/dispatch.h"
#include "tensor/gemm_q8_avx2.h"

#define MR 4
#define NT 2                         /* vectors of 8 outputs per tile */
#define NR AC_GEMM16_NR
#define NV (NR / 8)                  /* vectors of outputs per panel */
#define KB (AC_GEMM16_KC / AC_QK8_0) /* blocks packed at a time */
#define QUADS (AC_QK8_0 / 4)         /* quads per block */

_Static_assert(NV % NT == 0, "tiles cover the panel");
_Static_assert((KB * QUADS * NV * 8 + KB * NV * 8) <= AC_GEMM_W_PACK, "the pack fits its buffer");

/* an 8 x 8 transpose of 32-bit lanes */
static inline __attribute__((always_inline)) void transpose8(__m256i r[8])
{
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
    }
}

/* Weight rows [n, n + nr) x blocks [b0, b0 + nb) into PACK: the bytes as
 * [block][quad][NV][8 rows] int32, then the scales as [block][NV][8 rows]
 * f32; rows past nr as zeros. */
static void pack(const ac_mat *w, size_t n, size_t nr, size_t b0, size_t nb, int32_t *out)
{
    const size_t stride = w->cols / AC_QK8_0 * sizeof(ac_block_q8_0);
    const unsigned char *base = (const unsigned char *)w->data + n * stride + b0 * sizeof(ac_block_q8_0);
    float *scales = (float *)(out + KB * QUADS * NV * 8);
    for (size_t g = 0; g < NV; g++)
        for (size_t b = 0; b < nb; b++) {
            __m256i r[8];
            uint16_t h[8] = {0};
            for (size_t i = 0; i < 8; i++) {
                size_t row = g * 8 + i;
                const unsigned char *p = base + row * stride + b * sizeof(ac_block_q8_0);
                r[i] = row < nr ? _mm256_loadu_si256((const __m256i *)(p + 2)) : _mm256_setzero_si256();
                if (row < nr) memcpy(&h[i], p, 2);
            }
            transpose8(r); /* vector q: quad q of every row */
            for (size_t q = 0; q < QUADS; q++) _mm256_store_si256((__m256i *)(out + ((b * QUADS + q) * NV + g) * 8), r[q]);
            _mm256_store_ps(scales + (b * NV + g) * 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h)));
        }
}

static inline __m256i quad_at(const int8_t *q)
{
    int32_t v;
    memcpy(&v, q, 4);
    return _mm256_set1_epi32(v);
}

/* MR_ (<= MR) rows of X (activation blocks b0.., rows BLOCKS apart)
 * against NT vectors of the packed blocks (P at the tile's first vector):
 * ACC[i][0..8*NT) += X . P, as f32. The int32 sums of a block stay in
 * registers (MR * NT of 16); ACC is read and written once per block. */
static inline __attribute__((always_inline)) void tile(size_t mr_, const ac_block_q8_act *x, size_t blocks,
                                                       const int32_t *p, const float *scales, size_t nb,
                                                       float acc[MR][NT * 8])
{
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t b = 0; b < nb; b++) {
        __m256i dot[MR][NT];
        for (size_t i = 0; i < mr_; i++)
            for (size_t v = 0; v < NT; v++) dot[i][v] = _mm256_setzero_si256();
        for (size_t q = 0; q < QUADS; q++) {
            __m256i wv[NT], wa[NT];
            for (size_t v = 0; v < NT; v++) {
                wv[v] = _mm256_load_si256((const __m256i *)(p + ((b * QUADS + q) * NV + v) * 8));
                wa[v] = _mm256_abs_epi8(wv[v]);
            }
            for (size_t i = 0; i < mr_; i++) {
                __m256i xs = quad_at(x[i * blocks + b].qs + 4 * q);
                for (size_t v = 0; v < NT; v++)
                    dot[i][v] = _mm256_add_epi32(
                        dot[i][v], _mm256_madd_epi16(_mm256_maddubs_epi16(wa[v], _mm256_sign_epi8(xs, wv[v])), ones));
            }
        }
        for (size_t i = 0; i < mr_; i++) {
            __m256 dx = _mm256_set1_ps(x[i * blocks + b].d);
            for (size_t v = 0; v < NT; v++)
                _mm256_storeu_ps(acc[i] + 8 * v,
                                 _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[i][v]),
                                                 _mm256_mul_ps(_mm256_load_ps(scales + (b * NV + v) * 8), dx),
                                                 _mm256_loadu_ps(acc[i] + 8 * v)));
        }
    }
}

static void tile_any(size_t mr, const ac_block_q8_act *x, size_t blocks, const int32_t *p, const float *scales,
                     size_t nb, float acc[MR][NT * 8])
{
    switch (mr) { /* one specialized copy per row count keeps the sums in registers */
    case 1: tile(1, x, blocks, p, scales, nb, acc); break;
    case 2: tile(2, x, blocks, p, scales, nb, acc); break;
    case 3: tile(3, x, blocks, p, scales, nb, acc); break;
    default: tile(MR, x, blocks, p, scales, nb, acc); break;
    }
}

size_t ac_gemm_q8_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1, float *pack_buf)
{
    size_t blocks = w->cols / AC_QK8_0, N = w->rows;
    int32_t *p = (int32_t *)pack_buf;
    const float *scales = (const float *)(p + KB * QUADS * NV * 8);
    for (size_t n = n0; n < n1; n += NR) {
        size_t nr = n1 - n < NR ? n1 - n : NR;
        for (size_t b0 = 0; b0 < blocks; b0 += KB) {
            size_t nb = blocks - b0 < KB ? blocks - b0 : KB;
            int first = b0 == 0, last = b0 + nb == blocks;
            pack(w, n, nr, b0, nb, p);
            for (size_t v0 = 0; v0 < NV && 8 * v0 < nr; v0 += NT) {
                size_t c0 = 8 * v0, cols = nr - c0 < 8 * NT ? nr - c0 : 8 * NT;
                for (size_t m = 0; m < M; m += MR) {
                    size_t mr = M - m < MR ? M - m : MR;
                    float acc[MR][NT * 8] = {{0}};
                    float *yt = y + m * N + n + c0;
                    if (!first)
                        for (size_t i = 0; i < mr; i++) memcpy(acc[i], yt + i * N, cols * sizeof(float));
                    tile_any(mr, x + m * blocks + b0, blocks, p + v0 * 8, scales + v0 * 8, nb, acc);
                    for (size_t i = 0; i < mr; i++)
                        for (size_t c = 0; c < cols; c++)
                            yt[i * N + c] = acc[i][c] + (last && bias ? bias[n + c0 + c] : 0.0f);
                }
            }
        }
    }
    return n1;
}
