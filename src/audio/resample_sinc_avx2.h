/* The AVX2/FMA inner loop of ac_sinc_resample (resample_sinc_avx2.c, built
 * with -mavx2 -mfma); called only after ac_kernels_simd() says the CPU has
 * them. */
#ifndef AC_AUDIO_RESAMPLE_SINC_AVX2_H
#define AC_AUDIO_RESAMPLE_SINC_AVX2_H

#include <stddef.h>

/* out[i*phases + j] = sum_m kernel[j*stride + m] * x[i*step + m] for
 * BLOCKS blocks i, m < stride (a multiple of 8; x holds the whole span). */
void ac_sinc_dot_blocks_avx2(const float *kernel, int stride, int phases, const float *x, int step,
                             size_t blocks, float *out);

#endif
