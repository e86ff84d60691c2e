/* src/audio DSP against numpy.fft, torch.stft and torch.istft (golden
 * arrays from tests/ref/dsp_ref.py, under argv[1]/dsp), and properties that
 * need no reference: ISTFT(STFT(x)) = x, streaming = whole signal, errors.
 *
 * Tolerances (signals and spectra of unit scale; "relative" is the largest
 * difference over the largest reference value of the array):
 *   FFT, STFT: 1e-5 relative; ISTFT: 1e-5 relative to torch.istft;
 *   ISTFT(STFT(x)): 1e-5 absolute; Whisper log-mel: 2e-5 absolute. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/fft.h"
#include "audio/logmel.h"
#include "audio/mel.h"
#include "audio/stft.h"
#include "base/error.h"
#include "test_util.h"

#define FFT_TOL 1e-5
#define STFT_TOL 1e-5
#define ISTFT_TOL 1e-5
#define ROUNDTRIP_TOL 1e-5
#define WHISPER_TOL 2e-5

static char golden_dir[4200];
static uint32_t seed = 4242;

/* The N floats of golden file NAME (NULL and a failure if it is not N long). */
static float *load(const char *name, size_t n)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", golden_dir, name);
    FILE *f = fopen(path, "rb");
    float *x = malloc((n ? n : 1) * sizeof *x + 1);
    size_t got = f ? fread(x, sizeof *x, n + 1, f) : 0;
    if (f) fclose(f);
    CHECK(f && got == n, "%s: %zu floats, expected %zu", path, got, n);
    if (!f || got != n) {
        free(x);
        return NULL;
    }
    return x;
}

/* Largest |a - b| over the largest |b| (over 1 if B is all 0). */
static double rel_err(const float *a, const float *b, size_t n)
{
    double d = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        top = fmax(top, fabs((double)b[i]));
        if (isnan(a[i])) d = INFINITY;
    }
    return d / (top > 0 ? top : 1);
}

static double abs_err(const float *a, const float *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, isnan(a[i]) ? INFINITY : fabs((double)a[i] - b[i]));
    return d;
}

static ac_stft_layout layout_of(const char *s)
{
    return !strcmp(s, "center") ? AC_STFT_CENTER : !strcmp(s, "start") ? AC_STFT_START : AC_STFT_SAME;
}

static ac_spec_kind kind_of(const char *s)
{
    return !strcmp(s, "power") ? AC_SPEC_POWER : !strcmp(s, "magnitude") ? AC_SPEC_MAGNITUDE : AC_SPEC_COMPLEX;
}

/* ---- golden cases ------------------------------------------------------- */

static void case_fft(const char *op, int n, const char *in_name, const char *out_name)
{
    int real_in = !strcmp(op, "rfft"), real_out = !strcmp(op, "irfft"), bins = n / 2 + 1;
    size_t n_in = real_in ? (size_t)n : 2 * (size_t)(real_out ? bins : n);
    size_t n_out = real_out ? (size_t)n : 2 * (size_t)(real_in ? bins : n);
    float *in = load(in_name, n_in), *ref = load(out_name, n_out), *out = calloc(n_out, sizeof *out);
    if (in && ref) {
        if (real_in || real_out) {
            ac_rfft *f = NULL;
            CHECK(ac_rfft_new(n, &f) == AC_OK, "rfft %d: %s", n, ac_last_error());
            if (f && real_in) ac_rfft_forward(f, in, out);
            if (f && real_out) ac_rfft_inverse(f, in, out);
            ac_rfft_free(f);
        } else {
            ac_fft *f = NULL;
            CHECK(ac_fft_new(n, &f) == AC_OK, "fft %d: %s", n, ac_last_error());
            if (f && !strcmp(op, "fft")) ac_fft_forward(f, in, out);
            if (f && !strcmp(op, "ifft")) ac_fft_inverse(f, in, out);
            ac_fft_free(f);
        }
        double e = rel_err(out, ref, n_out);
        CHECK(e <= FFT_TOL, "%s n=%d: relative error %g", op, n, e);
    }
    free(in), free(ref), free(out);
}

static void case_stft(int n_fft, int hop, int win, const char *layout, const char *pad, const char *kind, int64_t n,
                      const char *x_name, const char *w_name, const char *out_name)
{
    ac_stft s;
    ac_stft_params p = {n_fft, hop, win, NULL, layout_of(layout), !strcmp(pad, "reflect") ? AC_PAD_REFLECT : AC_PAD_ZERO};
    float *x = load(x_name, (size_t)n), *w = load(w_name, (size_t)win);
    p.window = w;
    if (!x || !w || ac_stft_init(&s, &p) != AC_OK) {
        CHECK(0, "stft %d/%d/%d: %s", n_fft, hop, win, ac_last_error());
        free(x), free(w);
        return;
    }
    int64_t T = ac_stft_frames(&s, n);
    size_t per = (size_t)s.bins * (kind_of(kind) == AC_SPEC_COMPLEX ? 2 : 1), total = (size_t)T * per;
    float *ref = load(out_name, total), *out = calloc(total ? total : 1, sizeof *out);
    if (ref) {
        CHECK(ac_stft_signal(&s, x, n, kind_of(kind), out) == AC_OK, "stft: %s", ac_last_error());
        double e = rel_err(out, ref, total);
        CHECK(e <= STFT_TOL, "stft n_fft %d hop %d win %d %s %s %s, %lld samples: relative error %g", n_fft, hop, win,
              layout, pad, kind, (long long)n, e);
    }
    ac_stft_free(&s);
    free(x), free(w), free(ref), free(out);
}

static void case_istft(int n_fft, int hop, int win, const char *layout, int64_t frames, int64_t length,
                       const char *spec_name, const char *w_name, const char *out_name)
{
    ac_stft s;
    float *w = load(w_name, (size_t)win), *spec = load(spec_name, (size_t)frames * 2 * (n_fft / 2 + 1));
    ac_stft_params p = {n_fft, hop, win, w, layout_of(layout), AC_PAD_ZERO};
    if (!w || !spec || ac_stft_init(&s, &p) != AC_OK) {
        CHECK(0, "istft %d/%d/%d: %s", n_fft, hop, win, ac_last_error());
        free(w), free(spec);
        return;
    }
    int64_t len = length < 0 ? ac_istft_length(&s, frames) : length;
    float *ref = out_name ? load(out_name, (size_t)len) : NULL, *out = calloc((size_t)len + 1, sizeof *out);
    ac_status st = ac_istft(&s, spec, frames, length, out);
    if (!out_name) {
        CHECK(st == AC_ERR_ARG && error_has("squared window is 0 at output sample 0"), "istft with a zero window sum: %s",
              ac_last_error());
    } else if (ref) {
        CHECK(st == AC_OK, "istft: %s", ac_last_error());
        double e = rel_err(out, ref, (size_t)len);
        CHECK(e <= ISTFT_TOL, "istft n_fft %d hop %d win %d %s, %lld frames, length %lld: relative error %g", n_fft, hop,
              win, layout, (long long)frames, (long long)len, e);
    }
    ac_stft_free(&s);
    free(w), free(spec), free(ref), free(out);
}

/* Whisper's front end: log10 mel of the reflect-centred STFT power, the last
 * frame dropped, the dynamic range floor and scale. */
static void case_whisper(int64_t n, const char *x_name, const char *out_name)
{
    enum { M = 80, NFFT = 400, BINS = 201 };
    float *x = load(x_name, (size_t)n), *fb = malloc(M * BINS * sizeof *fb), window[NFFT];
    int64_t T = n / 160; /* 1 + n/160 frames, less the last */
    float *ref = load(out_name, (size_t)T * M), *out = calloc((size_t)T * M, sizeof *out);
    ac_hann(NFFT, 1, window);
    ac_mel_slaney(M, NFFT, 16000, 0, 8000, fb);
    ac_melbank mel;
    ac_logmel lm;
    ac_stft_params p = {NFFT, 160, NFFT, window, AC_STFT_CENTER, AC_PAD_REFLECT};
    CHECK(ac_melbank_init(&mel, fb, M, BINS) == AC_OK, "mel");
    CHECK(ac_logmel_init(&lm, &p, &mel, AC_LOG10_CLAMP, 1e-10f) == AC_OK, "logmel: %s", ac_last_error());
    if (x && ref) {
        for (int64_t t = 0; t < T; t++) CHECK(ac_logmel_frame(&lm, x, 0, n, n, t, out + t * M) == AC_OK, "frame");
        ac_logmel_whisper_scale(out, (size_t)T * M);
        double e = abs_err(out, ref, (size_t)T * M);
        CHECK(e <= WHISPER_TOL, "Whisper log-mel of %lld samples: error %g", (long long)n, e);
    }
    ac_logmel_free(&lm);
    ac_melbank_free(&mel);
    free(x), free(fb), free(ref), free(out);
}

static void test_golden(void)
{
    char path[4400], line[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", golden_dir);
    FILE *f = fopen(path, "r");
    CHECK(f, "%s is missing: tests/ref/dsp_ref.py makes it", path);
    if (!f) return;
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        char op[32], a[8][64];
        int n_fft, hop, win;
        long long n, m;
        if (sscanf(line, "%31s", op) != 1) continue;
        cases++;
        if (!strcmp(op, "fft") || !strcmp(op, "ifft") || !strcmp(op, "rfft") || !strcmp(op, "irfft")) {
            CHECK(sscanf(line, "%*s %d %63s %63s", &n_fft, a[0], a[1]) == 3, "line: %s", line);
            case_fft(op, n_fft, a[0], a[1]);
        } else if (!strcmp(op, "stft")) {
            CHECK(sscanf(line, "%*s %d %d %d %63s %63s %63s %lld %63s %63s %63s", &n_fft, &hop, &win, a[0], a[1], a[2],
                         &n, a[3], a[4], a[5]) == 10,
                  "line: %s", line);
            case_stft(n_fft, hop, win, a[0], a[1], a[2], n, a[3], a[4], a[5]);
        } else if (!strcmp(op, "istft")) {
            CHECK(sscanf(line, "%*s %d %d %d %63s %lld %lld %63s %63s %63s", &n_fft, &hop, &win, a[0], &n, &m, a[1],
                         a[2], a[3]) == 9,
                  "line: %s", line);
            case_istft(n_fft, hop, win, a[0], n, m, a[1], a[2], a[3]);
        } else if (!strcmp(op, "istft_fails")) {
            CHECK(sscanf(line, "%*s %d %d %d %63s %lld %63s %63s", &n_fft, &hop, &win, a[0], &n, a[1], a[2]) == 7,
                  "line: %s", line);
            case_istft(n_fft, hop, win, a[0], n, -1, a[1], a[2], NULL);
        } else if (!strcmp(op, "whisper")) {
            CHECK(sscanf(line, "%*s %lld %63s %63s", &n, a[0], a[1]) == 3, "line: %s", line);
            case_whisper(n, a[0], a[1]);
        } else {
            CHECK(0, "unknown case: %s", line);
        }
    }
    fclose(f);
    CHECK(cases >= 50, "%d golden cases", cases);
}

/* ---- properties ------------------------------------------------------------ */

static float *noise(int64_t n)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    fill_random(x, (size_t)n, -1, 1, &seed);
    return x;
}

/* ISTFT(STFT(x)) = x for windows whose overlap-added square has no zeros. */
static void test_roundtrip(void)
{
    static const struct {
        int n_fft, hop, win, periodic;
        ac_stft_layout layout;
        ac_stft_pad pad;
        int64_t n;
    } cases[] = {
        {400, 160, 400, 1, AC_STFT_CENTER, AC_PAD_REFLECT, 16000},
        {512, 128, 400, 0, AC_STFT_CENTER, AC_PAD_ZERO, 9999},
        {1920, 480, 1920, 1, AC_STFT_SAME, AC_PAD_REFLECT, 480 * 20},
        {1920, 480, 1920, 1, AC_STFT_CENTER, AC_PAD_ZERO, 24000},
        {2048, 512, 2048, 1, AC_STFT_CENTER, AC_PAD_ZERO, 7777},
        {401, 100, 301, 1, AC_STFT_CENTER, AC_PAD_REFLECT, 3001},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        float *w = malloc((size_t)cases[c].win * sizeof *w);
        ac_hann(cases[c].win, cases[c].periodic, w);
        ac_stft_params p = {cases[c].n_fft, cases[c].hop, cases[c].win, w, cases[c].layout, cases[c].pad};
        ac_stft s;
        CHECK(ac_stft_init(&s, &p) == AC_OK, "init");
        int64_t n = cases[c].n, T = ac_stft_frames(&s, n);
        float *x = noise(n), *spec = malloc((size_t)T * 2 * s.bins * sizeof *spec), *y = calloc((size_t)n, sizeof *y);
        CHECK(ac_stft_signal(&s, x, n, AC_SPEC_COMPLEX, spec) == AC_OK, "stft");
        /* SAME gives back T*hop samples by itself; the others get the length */
        int64_t len = cases[c].layout == AC_STFT_SAME ? -1 : n;
        CHECK(cases[c].layout != AC_STFT_SAME || ac_istft_length(&s, T) == n, "same: %lld samples",
              (long long)ac_istft_length(&s, T));
        CHECK(ac_istft(&s, spec, T, len, y) == AC_OK, "istft: %s", ac_last_error());
        double e = abs_err(y, x, (size_t)n);
        CHECK(e <= ROUNDTRIP_TOL, "case %zu: ISTFT(STFT(x)) differs from x by %g", c, e);
        ac_stft_free(&s);
        free(w), free(x), free(spec), free(y);
    }
}

/* Frames from a sliding buffer that keeps only the samples a later frame
 * reads are those of the whole signal, bit for bit. */
static void test_streaming(void)
{
    for (int reflect = 0; reflect < 2; reflect++) {
        float w[400];
        ac_hann(400, 0, w);
        ac_stft_params p = {512, 160, 400, w, AC_STFT_CENTER, reflect ? AC_PAD_REFLECT : AC_PAD_ZERO};
        ac_stft s;
        CHECK(ac_stft_init(&s, &p) == AC_OK, "init");
        int64_t n = 12345, T = ac_stft_frames(&s, n);
        CHECK(T == 1 + n / 160, "%lld frames", (long long)T);
        float *x = noise(n), *whole = malloc((size_t)T * s.bins * sizeof *whole), frame[257];
        CHECK(ac_stft_signal(&s, x, n, AC_SPEC_POWER, whole) == AC_OK, "whole");
        int same = 1;
        for (int64_t t = 0; t < T; t++) {
            /* the window's samples, and with reflection the mirrors of those outside */
            int64_t begin = ac_stft_frame_begin(&s, t), end = ac_stft_frame_end(&s, t);
            int64_t lo = begin < 0 ? 0 : begin, hi = end > n ? n : end;
            if (reflect && begin < 0 && hi < 1 - begin) hi = 1 - begin;
            if (reflect && end > n && lo > 2 * n - 1 - end) lo = 2 * n - 1 - end;
            if (hi < lo) hi = lo;
            CHECK(ac_stft_frame(&s, x + lo, lo, hi - lo, n, t, AC_SPEC_POWER, frame) == AC_OK, "frame %lld: %s",
                  (long long)t, ac_last_error());
            same &= memcmp(frame, whole + t * s.bins, sizeof frame) == 0;
        }
        CHECK(same, "reflect %d: streamed frames differ", reflect);
        /* a buffer that misses a sample the frame reads */
        ac_error_clear();
        int64_t lo = ac_stft_frame_begin(&s, 10);
        CHECK(ac_stft_frame(&s, x + lo + 1, lo + 1, 500, n, 10, AC_SPEC_POWER, frame) == AC_ERR_ARG &&
                  error_has("frame 10 reads sample"),
              "missing sample: %s", ac_last_error());
        if (reflect) {
            /* frame 0 reflects samples 1..256, beyond its window */
            CHECK(ac_stft_frame(&s, x, 0, 200, n, 0, AC_SPEC_POWER, frame) == AC_ERR_ARG, "missing mirror");
        }
        ac_stft_free(&s);
        free(x), free(whole);
    }
}

static void test_edges(void)
{
    ac_stft s;
    /* frame counts of each layout */
    ac_stft_params p = {400, 160, 400, NULL, AC_STFT_CENTER, AC_PAD_ZERO};
    CHECK(ac_stft_init(&s, &p) == AC_OK, "no window");
    CHECK(ac_stft_frames(&s, 0) == 1 && ac_stft_frames(&s, 16000) == 101, "center frames");
    /* an empty signal: one frame of zeros, with either padding */
    float out[402], dummy = 0;
    CHECK(ac_stft_frame(&s, &dummy, 0, 0, 0, 0, AC_SPEC_COMPLEX, out) == AC_OK && rel_err(out, (float[402]){0}, 402) == 0,
          "empty");
    ac_stft_free(&s);
    p.pad = AC_PAD_REFLECT;
    CHECK(ac_stft_init(&s, &p) == AC_OK && ac_stft_frame(&s, &dummy, 0, 0, 0, 0, AC_SPEC_COMPLEX, out) == AC_OK &&
              rel_err(out, (float[402]){0}, 402) == 0,
          "empty, reflect");
    ac_stft_free(&s);
    p.layout = AC_STFT_START;
    CHECK(ac_stft_init(&s, &p) == AC_OK, "start");
    CHECK(ac_stft_frames(&s, 399) == 0 && ac_stft_frames(&s, 400) == 1 && ac_stft_frames(&s, 720) == 3, "start frames");
    ac_stft_free(&s);
    p = (ac_stft_params){1920, 480, 1920, NULL, AC_STFT_SAME, AC_PAD_REFLECT};
    CHECK(ac_stft_init(&s, &p) == AC_OK, "same");
    CHECK(ac_stft_frames(&s, 24000) == 50 && ac_stft_frames(&s, 24479) == 50 && ac_istft_length(&s, 50) == 24000,
          "same frames");
    ac_stft_free(&s);
}

static void test_bad_arguments(void)
{
    ac_fft *f = (ac_fft *)1;
    ac_rfft *r = (ac_rfft *)1;
    CHECK(ac_fft_new(0, &f) == AC_ERR_ARG && f == NULL && error_has("FFT size 0"), "fft 0");
    CHECK(ac_fft_new(-5, &f) == AC_ERR_ARG && f == NULL, "fft -5");
    CHECK(ac_rfft_new(-1, &r) == AC_ERR_ARG && r == NULL, "rfft -1");
    static const int bad[][3] = {{0, 160, 0}, {-400, 160, 400}, {400, 0, 400}, {400, -1, 400}, {400, 160, 401},
                                 {400, 160, 0}, {400, 160, -3}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ac_stft s;
        ac_stft_params p = {bad[i][0], bad[i][1], bad[i][2], NULL, AC_STFT_CENTER, AC_PAD_ZERO};
        ac_error_clear();
        CHECK(ac_stft_init(&s, &p) == AC_ERR_ARG && error_has("STFT: n_fft"), "n_fft %d hop %d win %d: %s", bad[i][0],
              bad[i][1], bad[i][2], ac_last_error());
        ac_stft_free(&s); /* safe after a failed init */
    }
    ac_stft s;
    ac_stft_params p = {400, 401, 400, NULL, AC_STFT_SAME, AC_PAD_ZERO};
    CHECK(ac_stft_init(&s, &p) == AC_ERR_ARG, "same with hop > n_fft");
    p.layout = AC_STFT_CENTER;
    CHECK(ac_stft_init(&s, &p) == AC_OK, "hop > n_fft is fine when centred");
    float spec[402] = {0}, y[10];
    CHECK(ac_istft(&s, spec, 0, -1, y) == AC_ERR_ARG, "istft of 0 frames");
    ac_stft_free(&s);
    /* a filterbank for another FFT size */
    float fb[80 * 257] = {0};
    ac_melbank mel;
    ac_logmel lm;
    CHECK(ac_melbank_init(&mel, fb, 80, 257) == AC_OK, "mel");
    p = (ac_stft_params){400, 160, 400, NULL, AC_STFT_CENTER, AC_PAD_ZERO};
    CHECK(ac_logmel_init(&lm, &p, &mel, AC_LOG_ADD, 1e-5f) == AC_ERR_ARG && error_has("257 bins, n_fft 400 gives 201"),
          "logmel bins: %s", ac_last_error());
    ac_melbank_free(&mel);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    snprintf(golden_dir, sizeof golden_dir, "%s/dsp", test_work_dir);
    RUN(test_golden);
    RUN(test_roundtrip);
    RUN(test_streaming);
    RUN(test_edges);
    RUN(test_bad_arguments);
    return test_finish();
}
