/* The public API: which family a path holds (ac_model_probe), the audio
 * input kinds giving one answer, versioned structs, task checks, and scratch
 * memory reused between calls and shared safely by threads. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/family.h"
#include "audioc.h"
#include "base/file.h"
#include "test_util.h"

static char silero_file[4200], silero_dir[4200], marble_dir[4200], marble_file[4200], clip[4200];
static const char *tiny_dir = AUDIOC_SOURCE_DIR "/models/hviske-tiny-da";
static const char *tiny_weights = AUDIOC_SOURCE_DIR "/models/hviske-tiny-da/model.safetensors";
static const char *sample = AUDIOC_SOURCE_DIR "/samples/da_04_sentence.flac";

static void expect_probe(const char *path, const char *family, ac_task task)
{
    const char *f = NULL;
    ac_task t = AC_TASK_ANY;
    ac_status s = ac_model_probe(path, &f, &t);
    CHECK(s == AC_OK && f && strcmp(f, family) == 0 && t == task, "%s: %s/%s, want %s/%s (%s)", path,
          f ? f : "-", ac_task_name(t), family, ac_task_name(task), ac_last_error());
}

static int stop_at_3(int done, int total, void *user) { return done == 3; }

/* Whether the work folder holds a temporary file of NAME (".NAME.XXXXXX"). */
static int temp_left(const char *name)
{
    DIR *d = opendir(test_work_dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        found |= e->d_name[0] == '.' && strncmp(e->d_name + 1, name, strlen(name)) == 0;
    if (d) closedir(d);
    return found;
}

static void test_probe(void)
{
    expect_probe(silero_file, "silero_vad", AC_TASK_VAD);
    expect_probe(silero_dir, "silero_vad", AC_TASK_VAD);
    expect_probe(marble_file, "marblenet_vad", AC_TASK_VAD);
    expect_probe(marble_dir, "marblenet_vad", AC_TASK_VAD);
    expect_probe(tiny_dir, "hviske_asr", AC_TASK_ASR);
    expect_probe(tiny_weights, "hviske_asr", AC_TASK_ASR);
    /* a single-file GGUF package written by ac_model_quantize */
    const char *gguf = work_path("api_tiny.gguf");
    if (ac_model_quantize(tiny_dir, gguf, "f16", NULL) == AC_OK) expect_probe(gguf, "hviske_asr", AC_TASK_ASR);
    else CHECK(0, "ac_model_quantize: %s", ac_last_error());
    /* stopped by its progress callback: nothing is left, under OUT's name or a temporary one */
    ac_quantize_options qo;
    ac_quantize_options_default(&qo);
    qo.on_progress = stop_at_3;
    const char *cancelled = work_path("api_cancelled.gguf");
    CHECK(ac_model_quantize(tiny_dir, cancelled, "q8_0", &qo) == AC_ERR_CANCELLED && access(cancelled, F_OK) != 0 &&
              !temp_left("api_cancelled.gguf"),
          "cancelled quantize: %s", ac_last_error());
    /* the bare weights of a package say what they are, and loading them asks for the rest */
    ac_model *m = NULL;
    CHECK(ac_model_load(tiny_weights, NULL, &m) == AC_ERR_MODEL && !m && error_has("config.json"),
          "bare hviske weights: %s", ac_last_error());

    CHECK(ac_model_probe(work_path("no-such-model"), NULL, NULL) == AC_ERR_IO && error_has("no-such-model") &&
              error_has("no such file or folder"),
          "missing path: %s", ac_last_error());
    CHECK(ac_model_probe(clip, NULL, NULL) == AC_ERR_FORMAT && error_has(clip), "an audio file: %s", ac_last_error());
    const char *text = work_path("api_text.txt");
    write_file(text, "not a model\n", 12);
    CHECK(ac_model_probe(text, NULL, NULL) == AC_ERR_FORMAT && error_has("api_text.txt"), "a text file: %s",
          ac_last_error());
    /* valid tensors of no family */
    static const char other[] = "\x40\0\0\0\0\0\0\0{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}"
                                "            \0\0\0\0";
    const char *st = work_path("api_other.safetensors");
    write_file(st, other, sizeof other - 1);
    CHECK(ac_model_probe(st, NULL, NULL) == AC_ERR_MODEL && error_has("no family") && error_has("hviske_asr"),
          "tensors of no family: %s", ac_last_error());
    const char *empty = work_path("api_empty_dir");
    char cmd[8600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", empty);
    CHECK(system(cmd) == 0, "mkdir");
    CHECK(ac_model_probe(empty, NULL, NULL) == AC_ERR_MODEL && error_has("no model"), "empty folder: %s",
          ac_last_error());
    CHECK(ac_model_load(silero_file, "marblenet_vad", &m) != AC_OK && !m, "--family overrides the probe");
    CHECK(ac_model_load(silero_file, "whisper", &m) == AC_ERR_ARG && error_has("unknown family 'whisper'"),
          "unknown family: %s", ac_last_error());
    /* a success after a failure leaves no stale message behind */
    CHECK(ac_model_probe(silero_file, NULL, NULL) == AC_OK && ac_last_error()[0] == 0,
          "the last error after a success: '%s'", ac_last_error());
    CHECK(ac_set_threads(1) == AC_OK && ac_last_error()[0] == 0, "after ac_set_threads");
    const char *const *vads = ac_families(AC_TASK_VAD), *const *all = ac_families(AC_TASK_ANY);
    const char *const *voice = ac_families(AC_TASK_VOICE);
    CHECK(vads[0] && vads[1] && !vads[2] && all[0] && all[1] && all[2] && all[3] && all[4] && !all[5], "family lists");
    CHECK(voice[0] && strcmp(voice[0], "vevo2") == 0 && !voice[1] && strcmp(ac_task_name(AC_TASK_VOICE), "voice") == 0,
          "the voice task");
}

/* A file, its samples as stereo PCM and its bytes in memory give the same result. */
static void test_inputs(void)
{
    ac_model *asr = NULL, *vad = NULL;
    CHECK(ac_model_load(tiny_dir, NULL, &asr) == AC_OK, "load tiny: %s", ac_last_error());
    CHECK(ac_model_load(silero_file, NULL, &vad) == AC_OK, "load silero: %s", ac_last_error());
    if (!asr || !vad) return;
    /* a float WAV at 16 kHz: its samples are exactly what the models read */
    const char *wav = work_path("api_sample.wav");
    CHECK(ac_audio_convert(sample, 16000, wav, NULL) == AC_OK, "convert: %s", ac_last_error());
    char *bytes = NULL;
    size_t n_bytes = 0, n = 0, got = 1;
    CHECK(ac_read_file(wav, 1 << 26, &bytes, &n_bytes) == AC_OK, "read %s", wav);
    float *mono = malloc(n_bytes), *stereo = malloc(2 * n_bytes);
    ac_audio_reader *r;
    if (ac_audio_open_file(wav, 0, &r) == AC_OK) {
        while (got) {
            ac_audio_read(r, mono + n, 4096, &got);
            n += got;
        }
        ac_audio_close(r);
    }
    CHECK(n > 16000, "the sample's samples (%zu)", n);
    for (size_t i = 0; i < n; i++) stereo[2 * i] = stereo[2 * i + 1] = mono[i];
    ac_audio_input file = ac_input_file(wav), mem = ac_input_memory(bytes, n_bytes, "sample");
    ac_vad_options vo;
    ac_vad_options_default(&vo);
    vo.keep_probs = 1;
    ac_vad_result *va = NULL, *vb = NULL, *vc = NULL;
    CHECK(ac_vad_run(vad, &file, &vo, &va) == AC_OK, "vad file: %s", ac_last_error());
    CHECK(ac_vad_run(vad, &mem, &vo, &vb) == AC_OK, "vad memory: %s", ac_last_error());
    if (!va || !vb) return;
    CHECK(va->struct_size == sizeof *va, "result struct_size");
    /* speech: the segments before the padding, each within its padded one by at most speech_pad_ms */
    int64_t pad = (int64_t)vo.speech_pad_ms * 16000 / 1000;
    int within = va->speech != NULL && va->n_segments > 0;
    for (size_t i = 0; within && i < va->n_segments; i++) {
        const ac_vad_segment *p = &va->segments[i], *q = &va->speech[i];
        within = p->start <= q->start && q->start - p->start <= pad && q->end <= p->end && p->end - q->end <= pad &&
                 q->start < q->end;
    }
    CHECK(within, "vad speech lies within the padded segments, at most %lld samples inside", (long long)pad);
    ac_audio_input pcm = ac_input_pcm(stereo, (int64_t)n, 2, 16000);
    CHECK(ac_vad_run(vad, &pcm, &vo, &vc) == AC_OK, "vad pcm: %s", ac_last_error());
    for (int k = 0; k < 2 && vc; k++) {
        const ac_vad_result *x = k ? vc : vb;
        int same = x->n_segments == va->n_segments && x->n_probs == va->n_probs && x->n_samples == va->n_samples;
        for (size_t i = 0; same && i < x->n_segments; i++)
            same = x->segments[i].start == va->segments[i].start && x->segments[i].end == va->segments[i].end;
        CHECK(same && max_rel_diff(x->probs, va->probs, x->n_probs) == 0, "vad %s = file", k ? "pcm" : "memory");
    }
    ac_asr_result *ra = NULL, *rb = NULL, *rc = NULL;
    CHECK(ac_asr_transcribe(asr, &file, NULL, &ra) == AC_OK, "asr file: %s", ac_last_error());
    CHECK(ac_asr_transcribe(asr, &mem, NULL, &rb) == AC_OK, "asr memory: %s", ac_last_error());
    CHECK(ac_asr_transcribe(asr, &pcm, NULL, &rc) == AC_OK, "asr pcm: %s", ac_last_error());
    for (int k = 0; k < 2 && ra && rb && rc; k++) {
        const ac_asr_result *x = k ? rc : rb;
        int same = strcmp(x->text, ra->text) == 0 && x->n_segments == ra->n_segments && x->duration == ra->duration;
        for (size_t i = 0; same && i < x->n_segments; i++)
            same = x->segments[i].n_tokens == ra->segments[i].n_tokens &&
                   memcmp(x->segments[i].tokens, ra->segments[i].tokens, sizeof(int) * ra->segments[i].n_tokens) == 0;
        CHECK(same && ra->text[0], "asr %s = file ('%s' vs '%s')", k ? "pcm" : "memory", x->text, ra->text);
    }
    /* errors: the wrong task, unfilled structs, a missing file named once */
    ac_asr_result *bad = NULL;
    CHECK(ac_asr_transcribe(vad, &file, NULL, &bad) == AC_ERR_ARG && !bad && error_has("silero_vad"),
          "a VAD model cannot transcribe: %s", ac_last_error());
    ac_vad_result *vbad = NULL;
    CHECK(ac_vad_run(asr, &file, NULL, &vbad) == AC_ERR_ARG && !vbad, "an ASR model is no VAD");
    ac_asr_options zero;
    memset(&zero, 0, sizeof zero);
    CHECK(ac_asr_transcribe(asr, &file, &zero, &bad) == AC_ERR_ARG && error_has("struct_size"),
          "options not filled: %s", ac_last_error());
    ac_audio_input unfilled = {0};
    CHECK(ac_asr_transcribe(asr, &unfilled, NULL, &bad) == AC_ERR_ARG && error_has("struct_size"),
          "input not filled: %s", ac_last_error());
    ac_audio_input missing = ac_input_file(work_path("api_missing.wav"));
    CHECK(ac_asr_transcribe(asr, &missing, NULL, &bad) == AC_ERR_IO && error_has("api_missing.wav: cannot open"),
          "missing audio: %s", ac_last_error());
    /* options checked against the model before any audio */
    ac_asr_options lang;
    ac_asr_options_default(&lang);
    CHECK(ac_asr_check_options(asr, NULL) == AC_OK && ac_asr_check_options(asr, &lang) == AC_OK,
          "the default options: %s", ac_last_error());
    lang.language = "fr";
    CHECK(ac_asr_check_options(asr, &lang) == AC_ERR_ARG && error_has("language 'fr' is not supported by this model"),
          "an unsupported language: %s", ac_last_error());
    CHECK(ac_asr_transcribe(asr, &file, &lang, &bad) == AC_ERR_ARG && !bad && error_has("language 'fr'"),
          "transcribing with it: %s", ac_last_error());
    CHECK(ac_asr_check_options(vad, NULL) == AC_ERR_ARG && error_has("silero_vad"), "a VAD model's options");
    /* conversion of an input in memory; a rate the format cannot hold leaves no file */
    const char *flac = work_path("api_memory.flac"), *opus = work_path("api_22k.opus");
    remove(opus);
    CHECK(ac_audio_convert_input(&mem, 0, flac, NULL) == AC_OK, "convert memory: %s", ac_last_error());
    CHECK(ac_audio_convert_input(&mem, 22050, opus, NULL) == AC_ERR_UNSUPPORTED && error_has("Opus holds") &&
              access(opus, F_OK) != 0,
          "Opus at 22.05 kHz refused before the file is made: %s", ac_last_error());
    /* an older caller's smaller options: the fields it lacks keep their defaults */
    ac_asr_options older;
    ac_asr_options_init(&older, offsetof(ac_asr_options, vad));
    ac_asr_result *rd = NULL;
    CHECK(ac_asr_transcribe(asr, &file, &older, &rd) == AC_OK && ra && strcmp(rd->text, ra->text) == 0,
          "options of an older size: %s", ac_last_error());
    ac_asr_result_free(rd);
    ac_asr_result_free(ra);
    ac_asr_result_free(rb);
    ac_asr_result_free(rc);
    ac_vad_result_free(va);
    ac_vad_result_free(vb);
    ac_vad_result_free(vc);
    free(mono);
    free(stereo);
    free(bytes);
    ac_model_free(vad);
    ac_model_free(asr);
}

typedef struct {
    ac_model *m;
    const char *want;
    int ok;
} worker;

static void *transcribe_twice(void *arg)
{
    worker *w = arg;
    ac_audio_input in = ac_input_file(sample);
    w->ok = 1;
    for (int i = 0; i < 2; i++) {
        ac_asr_result *r;
        if (ac_asr_transcribe(w->m, &in, NULL, &r) != AC_OK) {
            w->ok = 0;
            continue;
        }
        w->ok &= strcmp(r->text, w->want) == 0;
        ac_asr_result_free(r);
    }
    return NULL;
}

/* Calls reuse the scratch of their thread; threads sharing one model each
 * get their own, freed when they end. */
static void test_scratch(void)
{
    ac_model *m;
    if (ac_model_load(tiny_dir, NULL, &m) != AC_OK) return;
    ac_audio_input in = ac_input_file(sample);
    ac_asr_result *r;
    CHECK(ac_scratch_pool_capacity(&m->scratch) == 0, "no scratch before a call");
    CHECK(ac_asr_transcribe(m, &in, NULL, &r) == AC_OK, "first call");
    size_t after_one = ac_scratch_pool_capacity(&m->scratch);
    char *want = r ? strdup(r->text) : NULL;
    ac_asr_result_free(r);
    CHECK(ac_asr_transcribe(m, &in, NULL, &r) == AC_OK && strcmp(r->text, want) == 0, "second call");
    ac_asr_result_free(r);
    CHECK(after_one > 0 && ac_scratch_pool_capacity(&m->scratch) == after_one,
          "the scratch is kept and reused (%zu, then %zu bytes)", after_one, ac_scratch_pool_capacity(&m->scratch));
    worker w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (worker){m, want, 0};
        pthread_create(&t[i], NULL, transcribe_twice, &w[i]);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].ok, "thread %d transcribes as one thread does", i);
    }
    CHECK(ac_scratch_pool_capacity(&m->scratch) == after_one,
          "a thread's scratch ends with it: this thread's is left (%zu bytes)", ac_scratch_pool_capacity(&m->scratch));
    free(want);
    ac_model_free(m);
}

/* ac_load_options.weights: the names, a struct of the size before the
 * field (the stored types), q8_0 through the whole API, a bad value. */
static void test_load_options(void)
{
    ac_weight_type t = AC_WEIGHTS_STORED;
    CHECK(ac_weight_type_parse("BF16", &t) == AC_OK && t == AC_WEIGHTS_BF16, "parse BF16");
    CHECK(ac_weight_type_parse("q4", &t) == AC_ERR_ARG && error_has("'q4'") && error_has("q8_0"),
          "an unknown type names itself and the known ones: %s", ac_last_error());
    for (int k = AC_WEIGHTS_STORED; k <= AC_WEIGHTS_Q8_0; k++)
        CHECK(ac_weight_type_parse(ac_weight_type_name((ac_weight_type)k), &t) == AC_OK && (int)t == k,
              "name %d round trip", k);
    ac_load_options old;
    ac_load_options_init(&old, offsetof(ac_load_options, weights));
    ac_load_options q8;
    ac_load_options_default(&q8);
    q8.weights = AC_WEIGHTS_Q8_0;
    ac_model *a = NULL, *b = NULL, *bad = NULL;
    CHECK(ac_model_load_with(tiny_dir, NULL, &old, &a) == AC_OK, "an older struct: %s", ac_last_error());
    CHECK(ac_model_load_with(tiny_dir, NULL, &q8, &b) == AC_OK, "q8_0: %s", ac_last_error());
    q8.weights = (ac_weight_type)99;
    CHECK(ac_model_load_with(tiny_dir, NULL, &q8, &bad) == AC_ERR_ARG && !bad && error_has("weights"),
          "a weight type out of range: %s", ac_last_error());
    ac_audio_input in = ac_input_file(sample);
    ac_asr_result *ra = NULL, *rb = NULL;
    if (a && b) {
        CHECK(ac_asr_transcribe(a, &in, NULL, &ra) == AC_OK && ac_asr_transcribe(b, &in, NULL, &rb) == AC_OK,
              "transcribe: %s", ac_last_error());
        CHECK(ra && rb && ra->text[0] && rb->text[0], "both hear something");
    }
    ac_asr_result_free(ra);
    ac_asr_result_free(rb);
    ac_model_free(a);
    ac_model_free(b);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    snprintf(silero_dir, sizeof silero_dir, "%s/framework/models/silero_vad", test_data_dir);
    snprintf(silero_file, sizeof silero_file, "%s/silero_vad_16k.safetensors", silero_dir);
    snprintf(marble_dir, sizeof marble_dir, "%s/framework/models/marblenet_vad", test_data_dir);
    snprintf(marble_file, sizeof marble_file, "%s/marblenet_vad.safetensors", marble_dir);
    snprintf(clip, sizeof clip, "%s/asr_validation/librispeech/librispeech_test_other_7902-96591-0000.wav",
             test_data_dir);
    FILE *f = fopen(silero_file, "rb");
    if (!f) {
        fprintf(stderr, "real weights not found: API tests skipped\n");
        return test_finish();
    }
    fclose(f);
    RUN(test_probe);
    RUN(test_inputs);
    RUN(test_scratch);
    RUN(test_load_options);
    return test_finish();
}
