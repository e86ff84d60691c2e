/* Vevo2's pitch pieces (src/audio/pitch_shift, f0, resample_soxr) for
 * tests/ref/test_vevo2_pitch.py, which compares their dumps with
 * tests/ref/vevo2/pitch_ref.py and f0_ref.py:
 *   test_vevo2_pitch stretch IN.f32 RATE OUTDIR   OUTDIR/{stft,pv,stretch}.f32: the STFT of
 *                                                 the stretch, its phase vocoder, the stretched signal
 *   test_vevo2_pitch shift IN.f32 SR STEPS OUT.f32 the pitch-shifted signal
 *   test_vevo2_pitch soxr IN.f32 IN_RATE OUT_RATE OUT.f32
 *   test_vevo2_pitch f0 IN.f32 SR [TRACK.f32]     prints "median voiced"; the 16 kHz track of IN
 *   test_vevo2_pitch steps TARGET_HZ SOURCE_HZ    prints the semitone shift
 *   test_vevo2_pitch bad                          bad inputs give AC_ERR_ARG with a message
 *   test_vevo2_pitch time IN.f32 SR STEPS         prints the seconds of one pitch shift
 * Input and output files are raw little-endian f32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audio/f0.h"
#include "audio/mel.h"
#include "audio/pitch_shift.h"
#include "audio/resample_soxr.h"
#include "audio/stft.h"
#include "base/error.h"
#include "test_util.h"

/* All of PATH as floats; exits when it cannot be read. */
static float *read_f32(const char *path, int64_t *n)
{
    size_t k;
    float *x = read_f32_file(path, &k);
    if (!x) exit(2);
    *n = (int64_t)k;
    return x;
}

static void write_f32(const char *path, const float *x, int64_t n)
{
    if (write_file(path, x, (size_t)n * sizeof *x)) {
        fprintf(stderr, "%s: cannot write\n", path);
        exit(2);
    }
}

static int fail(ac_status st)
{
    fprintf(stderr, "error %d: %s\n", (int)st, ac_last_error());
    return 1;
}

static int run_stretch(const char *in, double rate, const char *dir)
{
    int64_t n;
    float *x = read_f32(in, &n);
    float window[AC_TIME_STRETCH_N_FFT];
    ac_hann(AC_TIME_STRETCH_N_FFT, 1, window);
    ac_stft_params p = {.n_fft = AC_TIME_STRETCH_N_FFT, .hop = AC_TIME_STRETCH_HOP, .win = AC_TIME_STRETCH_N_FFT,
                        .window = window, .layout = AC_STFT_CENTER, .pad = AC_PAD_ZERO};
    ac_stft s;
    ac_status st = ac_stft_init(&s, &p);
    if (st) return fail(st);
    int64_t frames = ac_stft_frames(&s, n), out_frames = ac_phase_vocoder_frames(frames, rate);
    size_t bins = (size_t)s.bins, len = (size_t)ac_time_stretch_length(n, rate);
    float *spec = malloc((size_t)frames * 2 * bins * sizeof *spec);
    float *pv = malloc((size_t)out_frames * 2 * bins * sizeof *pv);
    float *y = malloc((len ? len : 1) * sizeof *y);
    st = ac_stft_signal(&s, x, n, AC_SPEC_COMPLEX, spec);
    if (!st) st = ac_phase_vocoder(spec, frames, rate, pv);
    if (!st) st = ac_time_stretch(x, n, rate, y);
    if (st) return fail(st);
    char path[4096];
    snprintf(path, sizeof path, "%s/stft.f32", dir);
    write_f32(path, spec, frames * 2 * (int64_t)bins);
    snprintf(path, sizeof path, "%s/pv.f32", dir);
    write_f32(path, pv, out_frames * 2 * (int64_t)bins);
    snprintf(path, sizeof path, "%s/stretch.f32", dir);
    write_f32(path, y, (int64_t)len);
    ac_stft_free(&s);
    free(spec), free(pv), free(y), free(x);
    return 0;
}

static int run_shift(const char *in, int sr, double steps, const char *out)
{
    int64_t n;
    float *x = read_f32(in, &n), *y = malloc((size_t)n * sizeof *y);
    ac_status st = ac_pitch_shift(x, n, sr, steps, y);
    if (st) return fail(st);
    write_f32(out, y, n);
    free(x), free(y);
    return 0;
}

static int run_soxr(const char *in, double in_rate, double out_rate, const char *out)
{
    int64_t n, got;
    float *x = read_f32(in, &n);
    float *y = malloc((size_t)ac_resample_soxr_capacity(n, in_rate, out_rate) * sizeof *y);
    ac_status st = ac_resample_soxr(x, n, in_rate, out_rate, y, &got);
    if (st) return fail(st);
    write_f32(out, y, got);
    free(x), free(y);
    return 0;
}

static int run_f0(const char *in, int sr, const char *track)
{
    int64_t n, voiced;
    double median;
    float *x = read_f32(in, &n);
    ac_status st = ac_f0_median(x, n, sr, &median, &voiced);
    if (st) return fail(st);
    printf("%.9g %lld\n", median, (long long)voiced);
    if (track) {   /* IN is at 16 kHz here */
        int64_t frames = ac_f0_frames(n);
        float *f0 = malloc((size_t)(frames > 0 ? frames : 1) * sizeof *f0);
        st = ac_f0_track(x, n, f0);
        if (st) return fail(st);
        write_f32(track, f0, frames);
        free(f0);
    }
    free(x);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_time(const char *in, int sr, double steps)
{
    int64_t n;
    float *x = read_f32(in, &n), *y = malloc((size_t)n * sizeof *y);
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        ac_status st = ac_pitch_shift(x, n, sr, steps, y);
        if (st) return fail(st);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("%.4f\n", best);
    free(x), free(y);
    return 0;
}

/* Each call must fail with AC_ERR_ARG and a message holding NEEDLE. */
#define REFUSED(call, needle)                                                                   \
    do {                                                                                        \
        ac_error_clear();                                                                       \
        ac_status st_ = (call);                                                                 \
        CHECK(st_ == AC_ERR_ARG && error_has(needle), "%s: status %d, message '%s'", #call, (int)st_, \
              ac_last_error());                                                                 \
    } while (0)

static int run_bad(void)
{
    enum { N = 24000 };
    float *x = calloc(N, sizeof *x), *y = calloc(N * 4 + 16, sizeof *y);
    for (int i = 0; i < N; i++) x[i] = 0.5f * sinf(2 * (float)M_PI * 220 * (float)i / 24000);
    double median;
    int64_t got;
    REFUSED(ac_pitch_shift(x, 0, 24000, 2, y), "0 samples");
    REFUSED(ac_pitch_shift(x, -5, 24000, 2, y), "-5 samples");
    REFUSED(ac_pitch_shift(x, N, 0, 2, y), "sample rate 0");
    REFUSED(ac_pitch_shift(x, N, -24000, 2, y), "sample rate -24000");
    REFUSED(ac_pitch_shift(x, N, 24000, 25, y), "25 semitones");
    REFUSED(ac_pitch_shift(x, N, 24000, -24.5, y), "-24.5 semitones");
    REFUSED(ac_pitch_shift(x, N, 24000, NAN, y), "nan semitones");
    REFUSED(ac_pitch_shift(x, N, 24000, INFINITY, y), "inf semitones");
    REFUSED(ac_time_stretch(x, N, 0.2, y), "rate 0.2");
    REFUSED(ac_time_stretch(x, N, NAN, y), "rate nan");
    REFUSED(ac_phase_vocoder(x, 0, 1.0, y), "0 frames");
    REFUSED(ac_resample_soxr(x, N, 0, 16000, y, &got), "bad arguments");
    REFUSED(ac_f0_median(x, 0, 24000, &median, NULL), "0 samples");
    REFUSED(ac_f0_median(x, N, 0, &median, NULL), "sample rate 0");
    x[1234] = NAN;
    REFUSED(ac_pitch_shift(x, N, 24000, 2, y), "sample 1234 is nan");
    REFUSED(ac_f0_median(x, N, 24000, &median, NULL), "sample 1234 is nan");
    REFUSED(ac_f0_track(x, N, y), "sample 1234 is nan");
    x[1234] = INFINITY;
    REFUSED(ac_time_stretch(x, N, 1.5, y), "sample 1234 is inf");
    x[1234] = 0;
    /* the limits themselves are accepted, and tiny inputs give finite output */
    CHECK(ac_pitch_shift(x, N, 24000, 24, y) == AC_OK, "+24: %s", ac_last_error());
    CHECK(ac_pitch_shift(x, N, 24000, -24, y) == AC_OK, "-24: %s", ac_last_error());
    for (int n = 1; n <= 5; n++) {
        CHECK(ac_pitch_shift(x, n, 24000, 24, y) == AC_OK, "n=%d: %s", n, ac_last_error());
        CHECK(ac_pitch_shift(x, n, 24000, -24, y) == AC_OK, "n=%d: %s", n, ac_last_error());
        for (int i = 0; i < n; i++) CHECK(isfinite(y[i]), "n=%d: sample %d is %g", n, i, y[i]);
    }
    /* silence and too-short clips: nothing voiced, median 0, no NaN, shift 0 */
    int64_t voiced = -1;
    memset(x, 0, N * sizeof *x);
    CHECK(ac_f0_median(x, N, 24000, &median, &voiced) == AC_OK && median == 0 && voiced == 0,
          "silence: median %g, %lld voiced", median, (long long)voiced);
    CHECK(ac_f0_median(x, 100, 16000, &median, &voiced) == AC_OK && median == 0 && voiced == 0,
          "100 samples: median %g, %lld voiced", median, (long long)voiced);
    CHECK(ac_semitone_shift(200, 0) == 0 && ac_semitone_shift(0, 200) == 0 && ac_semitone_shift(NAN, 200) == 0,
          "no F0: a shift");
    free(x), free(y);
    return test_finish();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "stretch") && argc == 5) return run_stretch(argv[2], atof(argv[3]), argv[4]);
    if (!strcmp(mode, "shift") && argc == 6) return run_shift(argv[2], atoi(argv[3]), atof(argv[4]), argv[5]);
    if (!strcmp(mode, "soxr") && argc == 6) return run_soxr(argv[2], atof(argv[3]), atof(argv[4]), argv[5]);
    if (!strcmp(mode, "f0") && (argc == 4 || argc == 5)) return run_f0(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL);
    if (!strcmp(mode, "steps") && argc == 4) {
        printf("%d\n", ac_semitone_shift(atof(argv[2]), atof(argv[3])));
        return 0;
    }
    if (!strcmp(mode, "bad") && argc == 2) return run_bad();
    if (!strcmp(mode, "time") && argc == 5) return run_time(argv[2], atoi(argv[3]), atof(argv[4]));
    fprintf(stderr, "usage: see tests/drivers/test_vevo2_pitch.c\n");
    return 2;
}
