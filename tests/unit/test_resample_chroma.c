/* The sinc resampler's SIMD and block paths against its one-output-at-a-
 * time reference, the chroma and time rescale on cases with known answers,
 * and the bad inputs of all three. Parity with torchaudio, librosa's
 * algorithm and torch is tests/ref/test_vevo2_dsp.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/chroma.h"
#include "audio/resample_sinc.h"
#include "base/arena.h"
#include "base/error.h"
#include "tensor/kernels.h"
#include "test_util.h"

static uint32_t seed = 777;

static double max_abs(const float *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

static void test_resample_twins(void)
{
    static const int rates[][2] = {{24000, 16000}, {44100, 16000}, {16000, 24000}, {48000, 24000},
                                   {48000, 44100}, {22050, 16000}, {8000, 8000}};
    static const int64_t lens[] = {1, 2, 7, 333, 1000, 44101};
    ac_arena arena;
    ac_arena_init(&arena, 1 << 20);
    float *x = malloc(44101 * sizeof *x), *ref = malloc(44101 * 3 * sizeof *ref), *y = malloc(44101 * 3 * sizeof *y);
    fill_random(x, 44101, -1, 1, &seed);
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
        ac_sinc_resampler rs;
        CHECK(ac_sinc_resampler_init(&rs, rates[r][0], rates[r][1]) == AC_OK, "%d -> %d: %s", rates[r][0],
              rates[r][1], ac_last_error());
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            int64_t n = lens[l], m = ac_sinc_resampled_len(&rs, n);
            int64_t want = ((int64_t)rates[r][1] * n + rates[r][0] - 1) / rates[r][0];
            CHECK(m == want, "%d -> %d, %lld samples: length %lld, expected %lld", rates[r][0], rates[r][1],
                  (long long)n, (long long)m, (long long)want);
            CHECK(ac_sinc_resample_ref(&rs, x, n, ref) == AC_OK, "ref");
            ac_kernels_set_simd(AC_SIMD_NONE);
            CHECK(ac_sinc_resample(&rs, x, n, &arena, y) == AC_OK, "scalar");
            CHECK(max_abs(y, ref, m) == 0, "%d -> %d, %lld samples: blocks differ from the reference by %g",
                  rates[r][0], rates[r][1], (long long)n, max_abs(y, ref, m));
            ac_kernels_set_simd(AC_SIMD_AVX512);
            ac_arena_reset(&arena);
            CHECK(ac_sinc_resample(&rs, x, n, &arena, y) == AC_OK, "simd");
            CHECK(max_abs(y, ref, m) <= 1e-6, "%d -> %d, %lld samples: SIMD differs from the reference by %g",
                  rates[r][0], rates[r][1], (long long)n, max_abs(y, ref, m));
            ac_arena_reset(&arena);
        }
        ac_sinc_resampler_free(&rs);
    }
    /* a constant stays constant away from the edges (the filter passes DC) */
    ac_sinc_resampler rs;
    CHECK(ac_sinc_resampler_init(&rs, 24000, 16000) == AC_OK, "init");
    for (int i = 0; i < 3000; i++) x[i] = 0.5f;
    CHECK(ac_sinc_resample(&rs, x, 3000, &arena, y) == AC_OK, "dc");
    double dc = 0;
    for (int i = 100; i < 1900; i++) dc = fmax(dc, fabs(y[i] - 0.5));
    CHECK(dc < 2e-3, "DC gain off by %g", dc);
    ac_sinc_resampler_free(&rs);
    ac_arena_free(&arena);
    free(x), free(ref), free(y);
}

static void test_resample_bad(void)
{
    ac_sinc_resampler rs;
    static const int bad[][2] = {{0, 16000}, {24000, 0}, {-24000, 16000}, {24000, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ac_error_clear();
        CHECK(ac_sinc_resampler_init(&rs, bad[i][0], bad[i][1]) == AC_ERR_ARG && error_has("must be positive"),
              "%d -> %d: %s", bad[i][0], bad[i][1], ac_last_error());
        ac_sinc_resampler_free(&rs);
    }
    CHECK(ac_sinc_resampler_init(&rs, 44100, 16001) == AC_ERR_ARG && error_has("larger common divisor"),
          "coprime rates: %s", ac_last_error());
    ac_sinc_resampler_free(&rs);
    ac_arena arena;
    ac_arena_init(&arena, 1 << 16);
    float x[64] = {0}, y[64];
    CHECK(ac_sinc_resampler_init(&rs, 24000, 16000) == AC_OK, "init");
    CHECK(ac_sinc_resample(&rs, x, 0, &arena, y) == AC_ERR_ARG && error_has("0 samples"), "n=0: %s", ac_last_error());
    CHECK(ac_sinc_resample_ref(&rs, x, -3, y) == AC_ERR_ARG, "n<0");
    x[17] = NAN;
    CHECK(ac_sinc_resample(&rs, x, 64, &arena, y) == AC_ERR_ARG && error_has("sample 17 is not finite"), "nan: %s",
          ac_last_error());
    x[17] = INFINITY;
    CHECK(ac_sinc_resample_ref(&rs, x, 64, y) == AC_ERR_ARG && error_has("not finite"), "inf");
    CHECK(ac_sinc_resampled_len(&rs, INT64_MAX) == -1, "overflowing length");
    ac_sinc_resampler_free(&rs);
    ac_arena_free(&arena);
}

static void test_chroma_cases(void)
{
    ac_chroma c;
    ac_arena arena;
    ac_arena_init(&arena, 1 << 20);
    CHECK(ac_chroma_init(&c, 24000, 1920, 480, 24) == AC_OK, "init: %s", ac_last_error());
    int64_t n = 24000, T = n / 480;
    CHECK(ac_chroma_frames(&c, n) == T + 1, "frames");
    float *x = calloc((size_t)n, sizeof *x), *y = malloc((size_t)(T + 1) * 24 * sizeof *y),
          *y2 = malloc((size_t)(T + 1) * 24 * sizeof *y);
    double tuning = 1;
    /* silence: no peaks, tuning 0, zero chroma */
    CHECK(ac_chroma_stft(&c, x, n, T, &arena, y, &tuning) == AC_OK, "silence: %s", ac_last_error());
    int zeros = 1;
    for (int64_t i = 0; i < T * 24; i++) zeros &= y[i] == 0;
    CHECK(tuning == 0 && zeros, "silence: tuning %g, zeros %d", tuning, zeros);
    /* a tone on FFT bin 36 (450 Hz): tuning -0.23, each frame's maximum 1 at
     * A/A# (450 Hz is 0.78 quarter tones above A4; A is row 18 from C) */
    for (int64_t i = 0; i < n; i++) x[i] = 0.5f * (float)sin(2 * M_PI * 450.0 * (double)i / 24000.0);
    ac_arena_reset(&arena);
    CHECK(ac_chroma_stft(&c, x, n, T + 1, &arena, y, &tuning) == AC_OK, "tone");
    CHECK(fabs(tuning + 0.23) < 1e-9, "tone: tuning %.17g", tuning);
    int peak = 0;
    for (int k = 1; k < 24; k++) peak = y[10 * 24 + k] > y[10 * 24 + peak] ? k : peak;
    CHECK(peak == 19 && y[10 * 24 + peak] == 1.0f, "tone: peak at row %d (%g)", peak, (double)y[10 * 24 + peak]);
    /* results do not depend on the thread count */
    ac_set_threads(1);
    ac_arena_reset(&arena);
    CHECK(ac_chroma_stft(&c, x, n, T + 1, &arena, y2, NULL) == AC_OK, "one thread");
    ac_set_threads(0);
    CHECK(memcmp(y, y2, (size_t)(T + 1) * 24 * sizeof *y) == 0, "thread count changes the chroma");
    ac_chroma_free(&c);
    ac_arena_free(&arena);
    free(x), free(y), free(y2);
}

static void test_chroma_bad(void)
{
    ac_chroma c;
    static const int bad[][4] = {{0, 1920, 480, 24}, {24000, 1, 480, 24}, {24000, 1920, 0, 24},
                                 {24000, 1920, 480, 0}, {24000, 1920, 480, 1025}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ac_error_clear();
        CHECK(ac_chroma_init(&c, bad[i][0], bad[i][1], bad[i][2], bad[i][3]) == AC_ERR_ARG && error_has("chroma: rate"),
              "case %zu: %s", i, ac_last_error());
        ac_chroma_free(&c);
    }
    float fb[24 * 961];
    CHECK(ac_chroma_filters(24000, 1920, 24, NAN, fb) == AC_ERR_ARG, "filters: nan tuning");
    CHECK(ac_chroma_filters(24000, 1920, 2000, 0, fb) == AC_ERR_ARG, "filters: 2000 bins");
    ac_arena arena;
    ac_arena_init(&arena, 1 << 16);
    CHECK(ac_chroma_init(&c, 24000, 1920, 480, 24) == AC_OK, "init");
    float x[1000] = {0}, y[3 * 24];
    double tuning;
    CHECK(ac_chroma_stft(&c, x, 0, 0, &arena, y, &tuning) == AC_ERR_ARG && error_has("0 samples"), "n=0: %s",
          ac_last_error());
    CHECK(ac_chroma_stft(&c, x, 1000, 4, &arena, y, &tuning) == AC_ERR_ARG && error_has("which has 3"),
          "too many frames: %s", ac_last_error());
    CHECK(ac_chroma_stft(&c, x, 1000, -1, &arena, y, &tuning) == AC_ERR_ARG, "negative frames");
    x[999] = -INFINITY;
    CHECK(ac_chroma_stft(&c, x, 1000, 3, &arena, y, &tuning) == AC_ERR_ARG && error_has("sample 999 is not finite"),
          "inf: %s", ac_last_error());
    CHECK(ac_chroma_tuning(&c, x, -1, &arena, &tuning) == AC_ERR_ARG, "tuning of -1 frames");
    ac_chroma_free(&c);
    ac_arena_free(&arena);
}

static void test_interp(void)
{
    float x[5 * 3], y[9 * 3];
    fill_random(x, 15, -1, 1, &seed);
    CHECK(ac_frames_interp_linear(x, 5, 3, 5, y) == AC_OK && memcmp(x, y, sizeof x) == 0, "equal lengths copy");
    CHECK(ac_frames_interp_linear(x, 1, 3, 9, y) == AC_OK, "one frame");
    int same = 1;
    for (int t = 0; t < 9; t++)
        for (int k = 0; k < 3; k++) same &= fabsf(y[t * 3 + k] - x[k]) <= 1e-6f;
    CHECK(same, "one frame repeats (as torch, x*w0 + x*w1 with float32 weights)");
    /* doubling: frame 2d+1 sits a quarter of the way from d to d+1 */
    CHECK(ac_frames_interp_linear(x, 4, 3, 8, y) == AC_OK, "double");
    CHECK(fabsf(y[3 * 3 + 1] - (0.75f * x[1 * 3 + 1] + 0.25f * x[2 * 3 + 1])) < 1e-6f && y[1] == x[1],
          "doubling weights");
    CHECK(ac_frames_interp_linear(x, 0, 3, 8, y) == AC_ERR_ARG && error_has("need all >= 1"), "t_in 0");
    CHECK(ac_frames_interp_linear(x, 4, 3, 0, y) == AC_ERR_ARG, "t_out 0");
    CHECK(ac_frames_interp_linear(x, 4, 0, 8, y) == AC_ERR_ARG, "no channels");
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_resample_twins);
    RUN(test_resample_bad);
    RUN(test_chroma_cases);
    RUN(test_chroma_bad);
    RUN(test_interp);
    return test_finish();
}
