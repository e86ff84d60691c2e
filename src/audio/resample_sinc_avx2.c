/* Built with -mavx2 -mfma; runs only after the CPU check. */
#include "audio/resample_sinc_avx2.h"

#include <immintrin.h>

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Four blocks at a time share each load of a kernel row. */
void ac_sinc_dot_blocks_avx2(const float *kernel, int stride, int phases, const float *x, int step,
                             size_t blocks, float *out)
{
    size_t st = (size_t)step, np = (size_t)phases;
    size_t i = 0;
    for (; i + 4 <= blocks; i += 4)
        for (size_t j = 0; j < np; j++) {
            const float *k = kernel + j * (size_t)stride, *x0 = x + i * st;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (int m = 0; m < stride; m += 8) {
                __m256 w = _mm256_loadu_ps(k + m);
                a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + m), a0);
                a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + st + m), a1);
                a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + 2 * st + m), a2);
                a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + 3 * st + m), a3);
            }
            out[i * np + j] = hsum(a0);
            out[(i + 1) * np + j] = hsum(a1);
            out[(i + 2) * np + j] = hsum(a2);
            out[(i + 3) * np + j] = hsum(a3);
        }
    for (; i < blocks; i++)
        for (size_t j = 0; j < np; j++) {
            const float *k = kernel + j * (size_t)stride, *xi = x + i * st;
            __m256 a = _mm256_setzero_ps();
            for (int m = 0; m < stride; m += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(k + m), _mm256_loadu_ps(xi + m), a);
            out[i * np + j] = hsum(a);
        }
}
