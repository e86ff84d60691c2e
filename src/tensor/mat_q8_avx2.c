/* Q8_0 weights against int8 activations with AVX2 (built with -mavx2 -mfma
 * -mf16c; run only through the kernel table, after its CPU check). A
 * block's 32 products are vpmaddubsw's, which multiplies unsigned by
 * signed bytes: |w| is the unsigned operand and x with w's sign the signed
 * one, so that a weight of -128 (in the format's range) stays exact, and x,
 * which our quantizer keeps within +-127, never overflows when negated
 * (the pair sums, at most 32512, never saturate);
 * vpmaddwd then sums them to 8 exact int32, converted and scaled by the
 * block's two scales. Four weight rows share each load of x.
 *
 * The rows to come are fetched while a group computes. Rows of up to
 * LONG_COLS columns: the next group into L1. Longer rows: a group no longer
 * fits in L1 beside the one in use (Qwen2-0.5B's down projection, 4864
 * columns: 20 KB a group, which streamed at 0.59 of read bandwidth), so
 * every line of the group AHEAD groups on goes into L2 instead (0.8 to
 * 0.9). Rows of 896 and 1024 columns stream as fast with the near fetch. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "tensor/mat_q8_avx2.h"

#define ROWS 4         /* weight rows per pass */
#define LONG_COLS 2048 /* longer rows fetch into L2 ... */
#define AHEAD 4        /* ... this many groups of ROWS rows ahead */

static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* one activation row X (BLOCKS blocks) against the weight rows at W[0..ROWS) */
static void rows4(const ac_block_q8_act *x, size_t blocks, const unsigned char *const w[ROWS], const char *next,
                  int far, float out[ROWS])
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[ROWS];
    for (int r = 0; r < ROWS; r++) acc[r] = _mm256_setzero_ps();
    for (size_t b = 0; b < blocks; b++) {
        /* the rows to fetch follow these in memory: ROWS blocks (2.1 lines) per block */
        const char *pf = next + ROWS * sizeof(ac_block_q8_0) * b;
        if (far) {
            for (int l = 0; l < 3; l++) _mm_prefetch(pf + 64 * l, _MM_HINT_T1);
        } else {
            _mm_prefetch(pf, _MM_HINT_T0);
            _mm_prefetch(pf + 64, _MM_HINT_T0);
        }
        __m256i xq = _mm256_loadu_si256((const __m256i *)x[b].qs);
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; r++) {
            const unsigned char *p = w[r] + b * sizeof(ac_block_q8_0);
            uint16_t h;
            memcpy(&h, p, 2);
            __m256i wq = _mm256_loadu_si256((const __m256i *)(p + 2));
            __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(wq), _mm256_sign_epi8(xq, wq)), ones);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(_cvtsh_ss(h) * x[b].d), acc[r]);
        }
    }
    for (int r = 0; r < ROWS; r++) out[r] = hsum8(acc[r]);
}

void ac_matmul_q8_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1)
{
    size_t blocks = w->cols / AC_QK8_0, stride = blocks * sizeof(ac_block_q8_0);
    const unsigned char *base = w->data;
    int far = w->cols > LONG_COLS;
    for (size_t n = n0; n < n1; n += ROWS) {
        /* a last pass of fewer rows repeats its last row and keeps only its own outputs */
        const unsigned char *rows[ROWS];
        for (int r = 0; r < ROWS; r++) rows[r] = base + (n + r < n1 ? n + r : n1 - 1) * stride;
        /* far: past the range's end too (another range, this thread's next or another's) */
        size_t ahead = n + (far ? AHEAD : 1) * ROWS, end = far ? w->rows : n1;
        const char *next = (const char *)base + (ahead < end ? ahead : n) * stride;
        for (size_t m = 0; m < M; m++) { /* the rows stay in L1 from one input row to the next */
            float out[ROWS];
            rows4(x + m * blocks, blocks, rows, next, far, out);
            for (int r = 0; r < ROWS && n + r < n1; r++) y[m * w->rows + n + r] = out[r] + (bias ? bias[n + r] : 0.0f);
        }
    }
}
