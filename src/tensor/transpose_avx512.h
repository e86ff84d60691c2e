/* The 16 x 16 transpose of 32-bit lanes that the AVX-512 GEMMs pack their
 * weights with (rows of W along k become vectors along n): included by the
 * files built for AVX-512, each keeping its own inlined copy. */
#ifndef AC_TENSOR_TRANSPOSE_AVX512_H
#define AC_TENSOR_TRANSPOSE_AVX512_H

#include <immintrin.h>
#include <stdint.h>

/* a 16 x 16 transpose in four rounds of two-source permutes: the round of
 * block size B (8, 4, 2, 1) swaps the off-diagonal B x B blocks of every
 * 2B x 2B block; row i < i + B takes its lanes j with bit B set from row
 * i + B, which takes the others from row i */
static const int32_t ac_swap_index[4][2][16] = {
    {{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
     {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}},
    {{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
     {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}},
    {{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
     {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}},
    {{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
     {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}}};

static inline __attribute__((always_inline)) void ac_transpose16(__m512 r[16])
{
#pragma GCC unroll 4
    for (int s = 0; s < 4; s++) {
        int b = 8 >> s;
        __m512i il = _mm512_loadu_si512(ac_swap_index[s][0]), ih = _mm512_loadu_si512(ac_swap_index[s][1]);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            if (i & b) continue;
            __m512 a = r[i], c = r[i + b];
            r[i] = _mm512_permutex2var_ps(a, il, c);
            r[i + b] = _mm512_permutex2var_ps(a, ih, c);
        }
    }
}

#endif
