/* src/audio: WAV write/read, mixdown, resampling, block sizes, memory
 * input, other codecs (sox and libsndfile write them), FFT power, mel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "audio/fft.h"
#include "audio/mel.h"
#include "audio/reader.h"
#include "audio/silence.h"
#include "audio/writer.h"
#include "audioc.h"
#include "base/error.h"
#include "test_util.h"

#define PI 3.14159265358979323846

static uint32_t seed = 777;

static void write_wav(const char *path, int rate, int channels, int pcm16, const float *pcm, size_t frames)
{
    ac_audio_writer *w = NULL;
    ac_status s = ac_audio_writer_open(path, rate, channels, pcm16, &w);
    CHECK(s == AC_OK && w, "wav open %s: %s", path, ac_last_error());
    if (!w) return;
    /* in two pieces, so that streaming writes are exercised */
    size_t half = frames / 2;
    CHECK(ac_audio_write(w, pcm, half) == AC_OK, "write");
    CHECK(ac_audio_write(w, pcm + half * (size_t)channels, frames - half) == AC_OK, "write");
    CHECK(ac_audio_writer_close(w) == AC_OK, "close: %s", ac_last_error());
}

/* All output of R, read BLOCK samples at a time; closes R. */
static float *read_all(ac_audio_reader *r, size_t block, size_t *n)
{
    size_t cap = 1024, len = 0;
    float *out = malloc(cap * sizeof *out), *buf = malloc(block * sizeof *buf);
    ac_status s = AC_OK;
    size_t got = 0;
    for (;;) {
        s = ac_audio_read(r, buf, block, &got);
        if (s || got == 0 || got > block) break;
        if (len + got > cap) {
            while (len + got > cap) cap *= 2;
            out = realloc(out, cap * sizeof *out);
        }
        memcpy(out + len, buf, got * sizeof *buf);
        len += got;
    }
    CHECK(s == AC_OK && got <= block, "read: %s", ac_last_error());
    free(buf);
    ac_audio_close(r);
    *n = len;
    return out;
}

static float *read_file(const char *path, int rate, size_t block, size_t *n)
{
    ac_audio_reader *r = NULL;
    ac_status s = ac_audio_open_file(path, rate, &r);
    CHECK(s == AC_OK && r, "open %s: %s", path, ac_last_error());
    *n = 0;
    return r ? read_all(r, block, n) : NULL;
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m)) m = d;
    }
    return m;
}

static float *sine(size_t n, int rate, double freq, double amp)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (float)(amp * sin(2 * PI * freq * (double)i / rate));
    return x;
}

static void test_wav_roundtrip(void)
{
    const size_t n = 5000;
    float *x = malloc(n * sizeof *x);
    fill_random(x, n, -1, 1, &seed);
    const char *fpath = work_path("float.wav"), *ipath = work_path("pcm16.wav");
    write_wav(fpath, 16000, 1, 0, x, n);
    write_wav(ipath, 22050, 1, 1, x, n);
    size_t got;
    ac_audio_reader *r = NULL;
    CHECK(ac_audio_open_file(fpath, 0, &r) == AC_OK && r, "open float wav: %s", ac_last_error());
    if (r) {
        const ac_audio_info *info = ac_audio_reader_info(r);
        CHECK(info->sample_rate == 16000 && info->channels == 1 && info->frames == (int64_t)n, "info %d %d %lld",
              info->sample_rate, info->channels, (long long)info->frames);
        CHECK(strncasecmp(info->format, "wav", 3) == 0, "format '%s'", info->format);
        CHECK(ac_audio_reader_rate(r) == 16000, "rate 0 keeps the source rate");
        float *y = read_all(r, 4096, &got);
        CHECK(got == n && max_abs_diff(y, x, n) == 0, "float wav exact: %zu samples", got);
        free(y);
    }
    float *y = read_file(ipath, 0, 4096, &got);
    double d = got == n ? max_abs_diff(y, x, n) : 1;
    CHECK(got == n && d <= 1.0 / 32768, "pcm16 within 1/32768: %g (%zu samples)", d * 32768, got);
    free(y);
    /* out-of-range floats clip in pcm16 instead of wrapping */
    const float loud[4] = {1.5f, -1.5f, 0.5f, -3.0f};
    write_wav(ipath, 16000, 1, 1, loud, 4);
    y = read_file(ipath, 0, 16, &got);
    CHECK(got == 4 && y[0] > 0.999f && y[1] < -0.999f && fabsf(y[2] - 0.5f) < 1e-4f && y[3] < -0.999f,
          "clipping: %g %g %g %g", y[0], y[1], y[2], y[3]);
    free(y);
    /* bad arguments and paths */
    ac_audio_writer *w = (ac_audio_writer *)1;
    ac_error_clear();
    CHECK(ac_audio_writer_open(fpath, 0, 1, 0, &w) == AC_ERR_ARG && w == NULL && error_has("bad rate"), "rate 0: %s",
          ac_last_error());
    CHECK(ac_audio_writer_open(work_path("no/such/dir/x.wav"), 16000, 1, 0, &w) == AC_ERR_IO && w == NULL &&
              error_has("x.wav: cannot write"),
          "unwritable: %s", ac_last_error());
    CHECK(ac_audio_writer_close(NULL) == AC_OK, "close NULL");
    free(x);
}

static void test_mixdown(void)
{
    const size_t n = 3000;
    for (int ch = 2; ch <= 3; ch++) {
        float *x = malloc(n * ch * sizeof *x), *want = malloc(n * sizeof *want);
        fill_random(x, n * ch, -1, 1, &seed);
        for (size_t i = 0; i < n; i++) {
            double acc = 0;
            for (int c = 0; c < ch; c++) acc += x[i * ch + c];
            want[i] = (float)(acc / ch);
        }
        const char *path = work_path("multi.wav");
        write_wav(path, 16000, ch, 0, x, n);
        ac_audio_reader *r = NULL;
        CHECK(ac_audio_open_file(path, 0, &r) == AC_OK, "open: %s", ac_last_error());
        if (!r) continue;
        CHECK(ac_audio_reader_info(r)->channels == ch, "channels");
        size_t got;
        float *y = read_all(r, 1000, &got);
        CHECK(got == n && max_abs_diff(y, want, n) < 1e-6, "%d-channel mixdown is the average", ch);
        free(x), free(want), free(y);
    }
}

/* A 1 kHz sine at RATE, resampled to 16 kHz, is the 1 kHz sine at 16 kHz. */
static void check_resampled_sine(int rate)
{
    size_t n = (size_t)rate; /* one second */
    float *x = sine(n, rate, 1000, 0.5);
    const char *path = work_path("sine.wav");
    write_wav(path, rate, 1, 0, x, n);
    size_t got;
    ac_audio_reader *r = NULL;
    CHECK(ac_audio_open_file(path, 16000, &r) == AC_OK && r, "open: %s", ac_last_error());
    if (!r) return;
    CHECK(ac_audio_reader_rate(r) == 16000, "output rate");
    float *y = read_all(r, 4096, &got);
    long want = lround((double)n * 16000 / rate);
    CHECK(labs((long)got - want) <= 2, "%d Hz: %zu samples, want %ld", rate, got, want);
    double err = 0;
    for (size_t i = 100; i + 100 < got; i++) {
        double e = fabs(y[i] - 0.5 * sin(2 * PI * 1000 * (double)i / 16000));
        if (e > err) err = e;
    }
    CHECK(err < 1e-3, "%d Hz -> 16 kHz: max error %g against the analytic sine", rate, err);
    fprintf(stderr, "  %d Hz -> 16 kHz: %zu samples (want %ld), max error %.2g\n", rate, got, want, err);
    free(x), free(y);
}

static void test_resample(void)
{
    check_resampled_sine(44100);
    check_resampled_sine(8000);
    check_resampled_sine(16000); /* no resampling */
}

/* The block size of the reader's caller does not change the output. */
static void test_block_sizes(void)
{
    size_t n = 30000;
    float *x = malloc(n * sizeof *x);
    fill_random(x, n, -0.9f, 0.9f, &seed);
    const char *path = work_path("blocks.wav");
    write_wav(path, 22050, 1, 0, x, n);
    for (int rate = 0; rate <= 16000; rate += 16000) {
        size_t n0;
        float *ref = read_file(path, rate, 4096, &n0);
        const size_t blocks[] = {1, 7, 100000};
        for (int b = 0; b < 3; b++) {
            size_t nb;
            float *y = read_file(path, rate, blocks[b], &nb);
            CHECK(nb == n0 && n0 > 0 && memcmp(y, ref, n0 * sizeof *y) == 0, "rate %d block %zu: %zu vs %zu samples",
                  rate, blocks[b], nb, n0);
            free(y);
        }
        free(ref);
    }
    free(x);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len + 1);
    *n = fread(buf, 1, (size_t)len, f);
    fclose(f);
    return buf;
}

static void test_memory(void)
{
    size_t n = 9000;
    float *x = malloc(2 * n * sizeof *x);
    fill_random(x, 2 * n, -1, 1, &seed);
    const char *path = work_path("mem.wav");
    write_wav(path, 44100, 2, 1, x, n);
    size_t size;
    unsigned char *img = slurp(path, &size);
    for (int rate = 0; rate <= 16000; rate += 16000) {
        size_t nf, nm;
        float *a = read_file(path, rate, 4096, &nf);
        ac_audio_reader *r = NULL;
        CHECK(ac_audio_open_memory(img, size, "upload.wav", rate, &r) == AC_OK && r, "open memory: %s",
              ac_last_error());
        if (!r) continue;
        CHECK(ac_audio_reader_info(r)->channels == 2 && ac_audio_reader_info(r)->frames == (int64_t)n, "memory info");
        float *b = read_all(r, 4096, &nm);
        CHECK(nf == nm && nf > 0 && memcmp(a, b, nf * sizeof *a) == 0, "memory = file at rate %d", rate);
        free(a), free(b);
    }
    /* PCM input goes through the same path */
    ac_audio_reader *r = NULL;
    CHECK(ac_audio_open_pcm(x, (int64_t)n, 2, 44100, 0, &r) == AC_OK, "open pcm");
    size_t np;
    float *p = read_all(r, 333, &np);
    int ok = np == n;
    for (size_t i = 0; ok && i < n; i++) ok = p[i] == (x[2 * i] + x[2 * i + 1]) / 2;
    CHECK(ok, "pcm input mixdown");
    free(p), free(img), free(x);
}

static void test_bad_input(void)
{
    const char *text = work_path("notes.txt");
    const char *msg = "This is not audio, only a few words of text.\n";
    write_file(text, msg, strlen(msg));
    ac_audio_reader *r = (ac_audio_reader *)1;
    ac_error_clear();
    CHECK(ac_audio_open_file(text, 16000, &r) == AC_ERR_FORMAT && r == NULL && error_has("notes.txt") &&
              error_has("not a readable audio file"),
          "text file: %s", ac_last_error());
    CHECK(ac_audio_open_memory(msg, strlen(msg), "text-upload", 16000, &r) == AC_ERR_FORMAT && r == NULL &&
              error_has("text-upload: not a readable audio file"),
          "text in memory: %s", ac_last_error());
    CHECK(ac_audio_open_memory("", 0, "empty-upload", 0, &r) == AC_ERR_FORMAT && error_has("empty-upload"),
          "empty memory: %s", ac_last_error());
    CHECK(ac_audio_open_file(work_path("missing.wav"), 0, &r) == AC_ERR_IO && r == NULL && error_has("missing.wav"),
          "missing file: %s", ac_last_error());
    CHECK(ac_audio_open_file(test_work_dir, 0, &r) != AC_OK && r == NULL, "a directory: %s", ac_last_error());
    /* a WAV cut inside its header */
    float x[100] = {0};
    const char *path = work_path("cut.wav");
    write_wav(path, 16000, 1, 1, x, 100);
    size_t size;
    unsigned char *img = slurp(path, &size);
    CHECK(ac_audio_open_memory(img, 20, "cut.wav", 0, &r) == AC_ERR_FORMAT && error_has("cut.wav"), "cut header: %s",
          ac_last_error());
    free(img);
    /* rates and channels out of range */
    const float pcm[4] = {0};
    CHECK(ac_audio_open_pcm(pcm, 2, 2, 16000, 500, &r) == AC_ERR_ARG && error_has("output rate 500 Hz"),
          "target rate: %s", ac_last_error());
    CHECK(ac_audio_open_pcm(pcm, 2, 2, 100, 0, &r) == AC_ERR_UNSUPPORTED && error_has("sample rate 100 Hz"),
          "source rate: %s", ac_last_error());
    CHECK(ac_audio_open_pcm(pcm, 2, 0, 16000, 0, &r) == AC_ERR_UNSUPPORTED && error_has("0 channels"),
          "channels: %s", ac_last_error());
    CHECK(ac_audio_open_pcm(NULL, 2, 1, 16000, 0, &r) == AC_ERR_ARG, "NULL pcm");
}

static void test_empty_wav(void)
{
    const char *path = work_path("empty.wav");
    ac_audio_writer *w = NULL;
    CHECK(ac_audio_writer_open(path, 16000, 1, 1, &w) == AC_OK, "open");
    CHECK(ac_audio_writer_close(w) == AC_OK, "close");
    for (int rate = 0; rate <= 8000; rate += 8000) {
        ac_audio_reader *r = NULL;
        CHECK(ac_audio_open_file(path, rate, &r) == AC_OK && r, "open empty wav: %s", ac_last_error());
        if (!r) continue;
        CHECK(ac_audio_reader_info(r)->frames == 0, "0 frames");
        size_t n;
        float *y = read_all(r, 100, &n);
        CHECK(n == 0, "read %zu samples from an empty wav (rate %d)", n, rate);
        free(y);
    }
}

/* Pearson correlation of A and B shifted by LAG (b[i + lag] ~ a[i]). */
static double correlation(const float *a, size_t na, const float *b, size_t nb, long lag)
{
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    size_t m = 0;
    for (size_t i = 0; i < na; i++) {
        long j = (long)i + lag;
        if (j < 0 || (size_t)j >= nb) continue;
        sa += a[i], sb += b[j], sab += (double)a[i] * b[j], saa += (double)a[i] * a[i], sbb += (double)b[j] * b[j];
        m++;
    }
    if (m < 2) return 0;
    double cov = sab - sa * sb / m, va = saa - sa * sa / m, vb = sbb - sb * sb / m;
    return va > 0 && vb > 0 ? cov / sqrt(va * vb) : 0;
}

/* A test signal with some structure: two tones and a sweep. */
static float *music(size_t n, int rate)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / rate;
        x[i] = (float)(0.3 * sin(2 * PI * 440 * t) + 0.2 * sin(2 * PI * 1234 * t) + 0.2 * sin(2 * PI * (200 + 300 * t) * t));
    }
    return x;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc == 0 ? 0 : -1;
}

/* Lossy codecs may add a delay; LAG is searched in [-maxlag, maxlag]. */
static void check_lossy(const char *what, const char *path, const float *x, size_t n, long maxlag)
{
    size_t got;
    float *y = read_file(path, 0, 4096, &got);
    double best = -1;
    long best_lag = 0;
    /* find the lag on a short window (fast), then score the whole signal */
    size_t win = n < 4800 ? n : 4800, off = (n - win) / 2;
    for (long lag = -maxlag; lag <= maxlag && got > off; lag++) {
        double c = correlation(x + off, win, y + off, got - off, lag);
        if (c > best) best = c, best_lag = lag;
    }
    best = correlation(x, n, y, got, best_lag);
    CHECK(best > 0.99, "%s: correlation %g at lag %ld", what, best, best_lag);
    CHECK(got + 2000 > n && got < n + 3000, "%s: %zu samples for %zu", what, got, n);
    fprintf(stderr, "  %s: %zu samples, correlation %.5f at lag %ld\n", what, got, best, best_lag);
    free(y);
}

static void test_sox_codecs(void)
{
    if (run("sox --version >/dev/null 2>&1")) {
        fprintf(stderr, "skip test_sox_codecs: sox not found\n");
        return;
    }
    size_t n = 16000;
    float *x = music(n, 16000);
    const char *wav = work_path("music.wav"), *flac = work_path("music.flac"), *ogg = work_path("music.ogg");
    write_wav(wav, 16000, 1, 1, x, n);
    char cmd[3 * 4096];
    snprintf(cmd, sizeof cmd, "sox '%s' '%s' && sox '%s' '%s'", wav, flac, wav, ogg);
    CHECK(run(cmd) == 0, "sox failed: %s", cmd);
    size_t nw, nf;
    float *a = read_file(wav, 0, 4096, &nw), *b = read_file(flac, 0, 4096, &nf);
    CHECK(nw == n && nf == n && memcmp(a, b, n * sizeof *a) == 0, "FLAC decodes to the WAV samples (%zu)", nf);
    check_lossy("OGG (sox)", ogg, a, nw, 0);
    /* resampled FLAC = resampled WAV */
    free(a), free(b);
    a = read_file(wav, 8000, 4096, &nw), b = read_file(flac, 8000, 4096, &nf);
    CHECK(nw == nf && nw > 0 && memcmp(a, b, nw * sizeof *a) == 0, "FLAC resampled = WAV resampled");
    free(a), free(b), free(x);
}

/* sox here has no MP3/Opus writer; our writer (libsndfile) has, when
 * libsndfile was built with them. Also FLAC from our writer. */
static void test_writer_codecs(void)
{
    size_t n = 48000;
    float *x = music(n, 48000);
    const char *wav = work_path("music48.wav");
    write_wav(wav, 48000, 1, 1, x, n);
    size_t nw, nf;
    float *a = read_file(wav, 0, 4096, &nw);
    /* libsndfile scales floats to 16 bits by 32767 for WAV and 32768 for
     * FLAC, so both are only within 1/32768 of the input */
    write_wav(work_path("music48.flac"), 48000, 1, 0, x, n);
    float *b = read_file(work_path("music48.flac"), 0, 4096, &nf);
    CHECK(nf == n && max_abs_diff(b, x, n) <= 1.0 / 32768, "our FLAC within 1/32768 of the input (%zu)", nf);
    ac_audio_reader *r = NULL;
    if (ac_audio_open_file(work_path("music48.flac"), 0, &r) == AC_OK) {
        CHECK(strncasecmp(ac_audio_reader_info(r)->format, "flac", 4) == 0, "format '%s'",
              ac_audio_reader_info(r)->format);
        ac_audio_close(r);
    }
    const char *names[] = {"music48.mp3", "music48.opus", "music48.ogg"};
    for (int i = 0; i < 3; i++) {
        const char *path = work_path(names[i]);
        ac_audio_writer *w = NULL;
        ac_status s = ac_audio_writer_open(path, 48000, 1, 0, &w);
        if (s == AC_ERR_UNSUPPORTED) {
            fprintf(stderr, "skip %s: %s\n", names[i], ac_last_error());
            continue;
        }
        CHECK(s == AC_OK && w, "open %s: %s", names[i], ac_last_error());
        if (!w) continue;
        CHECK(ac_audio_write(w, x, n) == AC_OK && ac_audio_writer_close(w) == AC_OK, "write %s", names[i]);
        check_lossy(names[i], path, a, nw, 1500);
    }
    ac_audio_writer *w = (ac_audio_writer *)1;
    ac_error_clear();
    CHECK(ac_audio_writer_open(work_path("x.aiff"), 16000, 1, 0, &w) == AC_ERR_ARG && w == NULL &&
              error_has("x.aiff: unknown output format"),
          "unknown extension: %s", ac_last_error());
    free(a), free(b), free(x);
}

/* The public convert call: stereo 44.1 kHz in, mono 16 kHz float WAV out. */
static void test_convert(void)
{
    size_t n = 4410;
    float *x = malloc(2 * n * sizeof *x);
    fill_random(x, 2 * n, -1, 1, &seed);
    const char *in = work_path("conv_in.wav"), *out = work_path("conv_out.wav");
    write_wav(in, 44100, 2, 0, x, n);
    ac_audio_info info;
    CHECK(ac_audio_convert(in, 16000, out, &info) == AC_OK, "convert: %s", ac_last_error());
    CHECK(info.sample_rate == 44100 && info.channels == 2, "source info");
    size_t na, nb;
    float *a = read_file(in, 16000, 4096, &na), *b = read_file(out, 0, 4096, &nb);
    CHECK(na == nb && na == 1600 && memcmp(a, b, na * sizeof *a) == 0, "convert = reader (%zu, %zu)", na, nb);
    CHECK(ac_audio_convert(work_path("missing.wav"), 16000, out, NULL) == AC_ERR_IO, "convert missing");
    free(a), free(b), free(x);
}

/* Encoding to memory gives the bytes ac_audio_save writes to a file, and
 * ac_audio_decode of them what the reader reads from that file. */
static void test_encode(void)
{
    size_t n = 24000;
    float *x = music(n, 24000);
    const char *formats[] = {"wav", "flac", "pcm", "mp3"};
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "enc.%s", formats[i]);
        const char *path = work_path(name);
        ac_status s = ac_audio_save(path, x, (int64_t)n, 1, 24000, 1);
        if (s == AC_ERR_UNSUPPORTED) {
            fprintf(stderr, "skip %s: %s\n", name, ac_last_error());
            continue;
        }
        void *data = NULL;
        size_t size = 0;
        CHECK(s == AC_OK && ac_audio_encode(formats[i], x, (int64_t)n, 1, 24000, 1, &data, &size) == AC_OK,
              "%s: %s", name, ac_last_error());
        FILE *f = fopen(path, "rb");
        char *file = malloc(size + 1);
        size_t got = f ? fread(file, 1, size + 1, f) : 0;
        if (f) fclose(f);
        CHECK(got == size && memcmp(file, data, size) == 0, "%s: %zu bytes in memory, %zu in the file", name, size,
              got);
        if (i == 2) CHECK(size == 2 * n, "pcm: 16 bits a sample, no header (%zu bytes)", size);
        if (i != 2) {
            size_t nf;
            float *a = read_file(path, 0, 4096, &nf), *b = NULL;
            int64_t nb = 0;
            ac_audio_input in = ac_input_memory(data, size, name);
            CHECK(ac_audio_decode(&in, 0, &b, &nb, NULL) == AC_OK && (size_t)nb == nf &&
                      memcmp(a, b, nf * sizeof *a) == 0,
                  "%s: decoded from memory as from the file (%lld, %zu)", name, (long long)nb, nf);
            free(a);
            ac_free(b);
        }
        free(file);
        ac_free(data);
    }
    void *data = (void *)1;
    size_t size = 1;
    CHECK(ac_audio_encode("aiff", x, (int64_t)n, 1, 24000, 1, &data, &size) == AC_ERR_ARG && !data && !size &&
              error_has("unknown output format"),
          "unknown format: %s", ac_last_error());
    free(x);
}

/* ---- DSP --------------------------------------------------------------- */

static void test_rfft(void)
{
    const int sizes[] = {16, 400, 512};
    for (int s = 0; s < 3; s++) {
        int n = sizes[s], nb = n / 2 + 1;
        ac_rfft *f = NULL;
        CHECK(ac_rfft_new(n, &f) == AC_OK && f, "new %d", n);
        if (!f) continue;
        float *x = calloc((size_t)n, sizeof *x), *p = calloc((size_t)nb, sizeof *p);
        /* an impulse anywhere has a flat unit spectrum */
        x[3] = 1;
        ac_rfft_power(f, x, p);
        double err = 0;
        for (int k = 0; k < nb; k++) err = fmax(err, fabs(p[k] - 1));
        CHECK(err < 1e-5, "n=%d impulse: error %g", n, err);
        /* a cosine at bin k: |X[k]| = n/2 (n at 0 and n/2), zero elsewhere */
        const int bins[] = {0, 1, 5, n / 2};
        for (int b = 0; b < 4; b++) {
            int kk = bins[b];
            for (int i = 0; i < n; i++) x[i] = (float)cos(2 * PI * kk * i / n);
            ac_rfft_power(f, x, p);
            double peak = (kk == 0 || kk == n / 2) ? (double)n * n : (double)n * n / 4;
            err = 0;
            for (int k = 0; k < nb; k++) err = fmax(err, fabs(p[k] - (k == kk ? peak : 0)) / peak);
            CHECK(err < 1e-5, "n=%d cosine at bin %d: relative error %g", n, kk, err);
        }
        /* random input against a direct DFT in double */
        fill_random(x, (size_t)n, -1, 1, &seed);
        ac_rfft_power(f, x, p);
        err = 0;
        for (int k = 0; k < nb; k++) {
            double re = 0, im = 0;
            for (int i = 0; i < n; i++) {
                re += x[i] * cos(2 * PI * (double)k * i / n);
                im -= x[i] * sin(2 * PI * (double)k * i / n);
            }
            err = fmax(err, fabs(p[k] - (re * re + im * im)) / (1 + re * re + im * im));
        }
        CHECK(err < 1e-4, "n=%d random vs DFT: %g", n, err);
        free(x), free(p);
        ac_rfft_free(f);
    }
    /* odd sizes work (tests/unit/test_dsp.c); sizes below 1 do not */
    ac_rfft *f = (ac_rfft *)1;
    ac_error_clear();
    CHECK(ac_rfft_new(0, &f) == AC_ERR_ARG && f == NULL && error_has("FFT size 0 must be >= 1"), "size 0: %s",
          ac_last_error());
    CHECK(ac_rfft_new(-2, &f) == AC_ERR_ARG && f == NULL, "size -2");
    ac_rfft_free(NULL);
}

static void test_melbank(void)
{
    enum { M = 12, B = 65 };
    static float fb[M * B];
    /* triangles of varying width, plus rows that touch the edges or are empty */
    for (int m = 0; m < M; m++) {
        int c = 2 + m * 5, w = 1 + m % 4;
        for (int k = c - w; k <= c + w; k++)
            if (k >= 0 && k < B) fb[m * B + k] = 1.0f - (float)abs(k - c) / (float)(w + 1);
    }
    fb[0 * B + 0] = 0.5f;          /* starts at bin 0 */
    fb[(M - 1) * B + B - 1] = 0.25f; /* ends at the last bin */
    for (int k = 0; k < B; k++) fb[5 * B + k] = 0; /* an empty filter */
    ac_melbank mb;
    CHECK(ac_melbank_init(&mb, fb, M, B) == AC_OK, "init");
    CHECK(mb.lo[0] == 0 && mb.hi[M - 1] == B && mb.lo[5] == mb.hi[5], "spans %d %d %d %d", mb.lo[0], mb.hi[M - 1],
          mb.lo[5], mb.hi[5]);
    float power[B], mel[M];
    for (int trial = 0; trial < 3; trial++) {
        fill_random(power, B, 0, 10, &seed);
        ac_melbank_apply(&mb, power, mel);
        double err = 0;
        for (int m = 0; m < M; m++) {
            double ref = 0;
            for (int k = 0; k < B; k++) ref += (double)fb[m * B + k] * power[k];
            err = fmax(err, fabs(mel[m] - ref) / (1 + fabs(ref)));
        }
        CHECK(err < 1e-5 && mel[5] == 0, "mel vs dense product: %g", err);
    }
    ac_melbank_free(&mb);
    CHECK(mb.lo == NULL && mb.hi == NULL, "free");
}

/* Chunks of long audio at silences: a cut at the middle of the last gap that
 * fits, hard cuts where no gap does, one chunk for short audio. */
static void test_silence_chunks(void)
{
    const int64_t sr = 16000, n = 70 * sr, max = 28 * sr;
    float *x = calloc((size_t)n, sizeof *x);
    CHECK(x != NULL, "alloc");
    if (!x) return;
    /* a tone everywhere but two silent seconds from 20 s and from 45 s */
    for (int64_t i = 0; i < n; i++) {
        int in_gap = (i >= 20 * sr && i < 22 * sr) || (i >= 45 * sr && i < 47 * sr);
        x[i] = in_gap ? 0 : 0.3f * sinf(0.05f * (float)i);
    }
    int64_t *ends;
    size_t k;
    CHECK(ac_silence_chunks(x, n, max, &ends, &k) == AC_OK, "%s", ac_last_error());
    CHECK(k == 3 && ends[2] == n, "%zu chunks", k);
    /* the voiced stretches end and start on 512-sample frames near the gaps */
    CHECK(k == 3 && llabs(ends[0] - 21 * sr) < 1100 && llabs(ends[1] - 46 * sr) < 1100, "cuts at %lld, %lld",
          (long long)ends[0], (long long)(k > 1 ? ends[1] : 0));
    free(ends);
    for (int64_t i = 0; i < n; i++) x[i] = 0.3f * sinf(0.05f * (float)i); /* no gap: hard cuts */
    CHECK(ac_silence_chunks(x, n, max, &ends, &k) == AC_OK && k == 3 && ends[0] == max && ends[1] == 2 * max &&
              ends[2] == n, "hard cuts: %zu chunks", k);
    free(ends);
    CHECK(ac_silence_chunks(x, max, max, &ends, &k) == AC_OK && k == 1 && ends[0] == max, "one chunk");
    free(ends);
    CHECK(ac_silence_chunks(x, 0, max, &ends, &k) == AC_ERR_ARG, "no samples");
    free(x);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_silence_chunks);
    RUN(test_wav_roundtrip);
    RUN(test_mixdown);
    RUN(test_resample);
    RUN(test_block_sizes);
    RUN(test_memory);
    RUN(test_bad_input);
    RUN(test_empty_wav);
    RUN(test_sox_codecs);
    RUN(test_writer_codecs);
    RUN(test_convert);
    RUN(test_encode);
    RUN(test_rfft);
    RUN(test_melbank);
    return test_finish();
}
