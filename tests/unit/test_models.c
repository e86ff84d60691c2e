/* The VAD families at the C level: results independent of how the audio
 * is fed, the segmenters on hand-made probabilities, and the public API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/mel.h"
#include "audio/reader.h"
#include "io/weights.h"
#include "audioc.h"
#include "models/marblenet_vad/marblenet_vad.h"
#include "models/silero_vad/silero_vad.h"
#include "test_util.h"

static char silero_path[4096], marble_path[4096], clip_path[4096];

static float *read_clip(size_t *n)
{
    ac_audio_reader *r;
    if (ac_audio_open_file(clip_path, 16000, &r)) return NULL;
    size_t cap = 1 << 20;
    float *x = malloc(cap * sizeof *x);
    ac_audio_read(r, x, cap, n);
    ac_audio_close(r);
    return x;
}

/* Probabilities of X fed in pieces of STEP samples. */
static ac_floatvec run_silero(const ac_silero *m, const float *x, size_t n, size_t step)
{
    ac_floatvec p = {0};
    ac_silero_stream *s;
    CHECK(ac_silero_stream_new(m, &s) == AC_OK, "stream");
    for (size_t i = 0; i < n; i += step) ac_silero_stream_feed(s, x + i, n - i < step ? n - i : step, &p);
    ac_silero_stream_finish(s, &p);
    ac_silero_stream_free(s);
    return p;
}

static ac_floatvec run_marblenet(const ac_marblenet *m, const float *x, size_t n, size_t step)
{
    ac_floatvec p = {0};
    ac_marblenet_stream *s;
    CHECK(ac_marblenet_stream_new(m, &s) == AC_OK, "stream");
    for (size_t i = 0; i < n; i += step) ac_marblenet_stream_feed(s, x + i, n - i < step ? n - i : step, &p);
    ac_marblenet_stream_finish(s, &p);
    ac_marblenet_stream_free(s);
    return p;
}

static void test_feed_sizes(void)
{
    size_t n;
    float *x = read_clip(&n);
    CHECK(x && n == 33520, "clip read: %zu samples", n);
    if (!x) return;
    ac_silero *sm;
    ac_marblenet *mm;
    CHECK(ac_silero_load(silero_path, &sm) == AC_OK, "silero load: %s", ac_last_error());
    CHECK(ac_marblenet_load(marble_path, &mm) == AC_OK, "marblenet load: %s", ac_last_error());
    const size_t steps[] = {1, 511, 513, 4096, 1 << 20};
    ac_floatvec s0 = run_silero(sm, x, n, steps[0]), m0 = run_marblenet(mm, x, n, steps[0]);
    CHECK(s0.n == 66 && m0.n == 105, "prob counts %zu %zu", s0.n, m0.n);
    for (size_t i = 1; i < sizeof steps / sizeof *steps; i++) {
        ac_floatvec s = run_silero(sm, x, n, steps[i]), m = run_marblenet(mm, x, n, steps[i]);
        CHECK(s.n == s0.n && memcmp(s.data, s0.data, s.n * sizeof(float)) == 0, "silero step %zu", steps[i]);
        CHECK(m.n == m0.n && memcmp(m.data, m0.data, m.n * sizeof(float)) == 0, "marblenet step %zu", steps[i]);
        ac_floatvec_free(&s);
        ac_floatvec_free(&m);
    }
    /* empty input: Silero scores nothing, MarbleNet one (padded) frame */
    ac_floatvec se = run_silero(sm, x, 0, 1), me = run_marblenet(mm, x, 0, 1);
    CHECK(se.n == 0 && me.n == 1, "empty input: %zu %zu probs", se.n, me.n);
    ac_floatvec_free(&s0), ac_floatvec_free(&m0), ac_floatvec_free(&se), ac_floatvec_free(&me);
    ac_silero_free(sm);
    ac_marblenet_free(mm);
    free(x);
}

/* probabilities: P in chunks [a, b), 0 elsewhere */
static void fill(float *p, size_t n, size_t a, size_t b, float v)
{
    for (size_t i = 0; i < n; i++)
        if (i >= a && i < b) p[i] = v;
}

static void test_silero_segments(void)
{
    ac_vad_options o;
    ac_vad_options_default(&o);
    float p[100] = {0};
    ac_vad_segment *seg;
    size_t n;
    int64_t N = 100 * 512;
    CHECK(ac_silero_segments(p, 100, N, &o, &seg, &n) == AC_OK && n == 0, "silence: %zu segments", n);
    free(seg);
    /* speech in chunks 10..40: ends at the first silent chunk once 100 ms passed */
    fill(p, 100, 10, 41, 0.9f);
    ac_silero_segments(p, 100, N, &o, &seg, &n);
    CHECK(n == 1 && seg[0].start == 10 * 512 - 480 && seg[0].end == 41 * 512 + 480,
          "one segment: %zu [%lld, %lld)", n, n ? (long long)seg[0].start : -1, n ? (long long)seg[0].end : -1);
    free(seg);
    /* a dip to 0.4 (between neg 0.35 and 0.5) does not end speech */
    fill(p, 100, 20, 30, 0.4f);
    ac_silero_segments(p, 100, N, &o, &seg, &n);
    CHECK(n == 1, "hysteresis keeps one segment (%zu)", n);
    free(seg);
    /* a dip to 0.1 for 10 chunks (> 100 ms) splits it */
    fill(p, 100, 20, 30, 0.1f);
    ac_silero_segments(p, 100, N, &o, &seg, &n);
    CHECK(n == 2, "silence splits (%zu)", n);
    free(seg);
    /* speech shorter than 250 ms is dropped */
    memset(p, 0, sizeof p);
    fill(p, 100, 10, 15, 0.9f);
    ac_silero_segments(p, 100, N, &o, &seg, &n);
    CHECK(n == 0, "short speech dropped (%zu)", n);
    free(seg);
    /* speech to the end of the audio ends at N, never past it */
    memset(p, 0, sizeof p);
    fill(p, 100, 50, 100, 0.9f);
    ac_silero_segments(p, 100, N - 100, &o, &seg, &n);
    CHECK(n == 1 && seg[0].end == N - 100, "end clamps to N");
    free(seg);
    /* max speech: 3 s of speech split into pieces of at most 1 s */
    memset(p, 0, sizeof p);
    fill(p, 100, 0, 100, 0.9f);
    o.max_speech_s = 1.0;
    ac_silero_segments(p, 100, N, &o, &seg, &n);
    int ok = n >= 3;
    for (size_t i = 0; i < n; i++) ok &= seg[i].end - seg[i].start <= 16000 + 2 * 480;
    CHECK(ok, "max speech splits into %zu pieces", n);
    free(seg);
}

static void test_marblenet_segments(void)
{
    ac_marblenet *m;
    if (ac_marblenet_load(marble_path, &m)) return;
    float p[10] = {0.1f, 0.6f, 0.8f, 0.2f, 0.5f, 0.1f, 0.1f, 0.1f, 0.9f, 0.9f};
    ac_vad_segment *seg;
    size_t n;
    /* the last run reaches frame 10 (3200 samples) but the audio ends at 2600 */
    ac_marblenet_segments(m, p, 10, 2600, 0.5f, &seg, &n);
    CHECK(n == 3, "three runs (%zu)", n);
    if (n == 3) {
        CHECK(seg[0].start == 320 && seg[0].end == 960 && fabsf(seg[0].confidence - 0.7f) < 1e-6f, "run 1");
        CHECK(seg[1].start == 1280 && seg[1].end == 1600, "run 2 (p == threshold is speech)");
        CHECK(seg[2].start == 2560 && seg[2].end == 2600, "run 3 clamped to N");
    }
    free(seg);
    /* a run that starts at or after N is dropped */
    ac_marblenet_segments(m, p, 10, 2560, 0.5f, &seg, &n);
    CHECK(n == 2, "run past N dropped (%zu)", n);
    free(seg);
    ac_marblenet_free(m);
}

/* Our Slaney filterbank and Hann window equal the tensors stored in the
 * MarbleNet checkpoint (NeMo computed them with librosa and torch). */
static void test_frontend_tensors(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/marblenet_vad.safetensors", marble_path);
    ac_weights *w;
    if (ac_weights_open(path, &w)) return;
    const float *fb, *win;
    CHECK(ac_weights_f32(w, AC_SHAPE(1, 80, 257), &fb, "preprocessor.featurizer.fb") == AC_OK, "fb");
    CHECK(ac_weights_f32(w, AC_SHAPE(400), &win, "preprocessor.featurizer.window") == AC_OK, "window");
    float *ours = malloc(80 * 257 * sizeof *ours), hann[400];
    ac_mel_slaney(80, 512, 16000, 0, 8000, ours);
    double d = 0;
    for (int i = 0; i < 80 * 257; i++) d = fmax(d, fabs(ours[i] - fb[i]));
    CHECK(d < 1e-7, "Slaney filterbank differs by %g", d);
    ac_hann(400, 0, hann);
    d = 0;
    for (int i = 0; i < 400; i++) d = fmax(d, fabs(hann[i] - win[i]));
    CHECK(d < 1e-6, "symmetric Hann differs by %g", d);
    free(ours);
    ac_weights_free(w);
}

static void test_api(void)
{
    ac_model *v;
    CHECK(ac_model_load(silero_path, NULL, &v) == AC_OK, "load: %s", ac_last_error());
    if (!v) return;
    CHECK(strcmp(ac_model_family(v), "silero_vad") == 0 && ac_model_task(v) == AC_TASK_VAD, "family");
    ac_vad_result *a = NULL, *b = NULL;
    ac_vad_options o;
    ac_vad_options_default(&o);
    o.keep_probs = 1;
    ac_audio_input file = ac_input_file(clip_path);
    CHECK(ac_vad_run(v, &file, &o, &a) == AC_OK, "run file");
    /* the same audio as interleaved stereo PCM */
    size_t n;
    float *x = read_clip(&n), *st = malloc(2 * n * sizeof *st);
    for (size_t i = 0; i < n; i++) st[2 * i] = st[2 * i + 1] = x[i];
    ac_audio_input pcm = ac_input_pcm(st, (int64_t)n, 2, 16000);
    CHECK(ac_vad_run(v, &pcm, &o, &b) == AC_OK, "run pcm");
    CHECK(a && b && a->n_segments == 1 && b->n_segments == 1 && a->segments[0].start == b->segments[0].start &&
              a->segments[0].end == b->segments[0].end && b->channels == 2,
          "pcm and file agree");
    CHECK(a && b && a->n_probs == 66 && b->n_probs == 66 && max_rel_diff(a->probs, b->probs, 66) < 1e-6,
          "probs agree");
    ac_vad_result_free(a);
    ac_vad_result_free(b);
    o.threshold = 2;
    CHECK(ac_vad_run(v, &pcm, &o, &b) == AC_ERR_ARG && error_has("threshold") && !b, "bad threshold rejected");
    ac_vad_options_default(&o);
    pcm.sample_rate = 10;
    CHECK(ac_vad_run(v, &pcm, &o, &b) == AC_ERR_UNSUPPORTED && error_has("10 Hz"), "absurd rate rejected: %s",
          ac_last_error());
    ac_audio_input none = ac_input_pcm(NULL, 0, 1, 16000);
    CHECK(ac_vad_run(v, &none, &o, &b) == AC_OK && b->n_segments == 0, "empty PCM");
    ac_vad_result_free(b);
    ac_model_free(v);
    CHECK(ac_model_load(silero_path, "whisper", &v) == AC_ERR_ARG && error_has("unknown family"), "family name");
    CHECK(ac_model_load(test_work_dir, NULL, &v) == AC_ERR_MODEL && error_has("no model"), "empty folder");
    free(x);
    free(st);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    snprintf(silero_path, sizeof silero_path, "%s/framework/models/silero_vad/silero_vad_16k.safetensors",
             test_data_dir);
    snprintf(marble_path, sizeof marble_path, "%s/framework/models/marblenet_vad", test_data_dir);
    snprintf(clip_path, sizeof clip_path, "%s/asr_validation/librispeech/librispeech_test_other_7902-96591-0000.wav",
             test_data_dir);
    RUN(test_silero_segments);
    FILE *f = fopen(silero_path, "rb");
    if (!f) {
        fprintf(stderr, "real weights not found: model tests skipped\n");
        return test_finish();
    }
    fclose(f);
    RUN(test_feed_sizes);
    RUN(test_marblenet_segments);
    RUN(test_api);
    RUN(test_frontend_tensors);
    return test_finish();
}
