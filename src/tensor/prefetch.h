/* Blocks of rows into the caches ahead of a GEMM's tiles: ROWS rows of
 * BYTES from BASE, STRIDE bytes apart. A panel's rows lie a stride apart,
 * more streams than the hardware's prefetch follows (and at 4 KB or more
 * apart each row is another page, where it stops). */
#ifndef AC_TENSOR_PREFETCH_H
#define AC_TENSOR_PREFETCH_H

#include <immintrin.h>
#include <stddef.h>

/* into L1: what the next tile reads */
static inline void ac_prefetch_l1(const void *base, size_t rows, size_t stride, size_t bytes)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < bytes; c += 64) _mm_prefetch((const char *)base + r * stride + c, _MM_HINT_T0);
}

/* into L2: the next panel to pack, while this one's tiles run */
static inline void ac_prefetch_l2(const void *base, size_t rows, size_t stride, size_t bytes)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < bytes; c += 64) _mm_prefetch((const char *)base + r * stride + c, _MM_HINT_T1);
}

#endif
