#include "read_bandwidth.h"

#include <immintrin.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "audioc.h"
#include "base/threadpool.h"

typedef struct {
    const float *buf;
    volatile float sink[256];
} job;

__attribute__((target("avx2"))) static void read_range(void *ctx, size_t b, size_t e)
{
    job *j = ctx;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = b * 64; i < e * 64; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(j->buf + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(j->buf + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(j->buf + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(j->buf + i + 24));
    }
    float t[8];
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    j->sink[b % 256] = t[0]; /* keeps the loads alive */
}

float *read_buffer(size_t mb)
{
    size_t n = mb << 18; /* floats */
    float *buf = aligned_alloc(1u << 21, n * sizeof *buf);
    if (!buf) return NULL;
    madvise(buf, n * sizeof *buf, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i++) buf[i] = 1.0f;
    return buf;
}

double read_gbs(const float *buf, size_t mb, int reps)
{
    size_t n = mb << 18;
    job j = {.buf = buf};
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = ac_now();
        ac_parallel_for(n / 64, 1024, read_range, &j);
        double dt = ac_now() - t0;
        best = dt < best ? dt : best;
    }
    return (double)n * 4 / best / 1e9;
}
