/* What a language binding relies on (audioc.h): the version and status
 * names, the log callback, the exported input constructors, cancelling a
 * VAD run, and timings reached through the results. Runs on the bundled
 * models only. */
#include <stdio.h>
#include <string.h>

#include "audioc.h"
#include "base/log.h"
#include "test_util.h"

static const char *tiny_dir = AUDIOC_SOURCE_DIR "/models/hviske-tiny-da";
static const char *silero = AUDIOC_SOURCE_DIR "/models/silero-vad/silero_vad_16k.safetensors";
static const char *sample = AUDIOC_SOURCE_DIR "/samples/da_04_sentence.flac";

static void test_version_and_status(void)
{
    int major = -1, minor = -1, patch = -1;
    const char *v = ac_version(&major, &minor, &patch);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", major, minor, patch);
    CHECK(strcmp(v, AUDIOC_VERSION) == 0 && strcmp(v, want) == 0, "ac_version %s (%s), header %s", v, want,
          AUDIOC_VERSION);
    CHECK(major == AUDIOC_VERSION_MAJOR && minor == AUDIOC_VERSION_MINOR && patch == AUDIOC_VERSION_PATCH,
          "version numbers");
    CHECK(ac_version(NULL, NULL, NULL) == v, "numbers may be NULL");
    CHECK(strcmp(ac_status_name(AC_OK), "ok") == 0 && strcmp(ac_status_name(AC_ERR_IO), "io") == 0 &&
              strcmp(ac_status_name(AC_ERR_CANCELLED), "cancelled") == 0 &&
              strcmp(ac_status_name((ac_status)99), "unknown") == 0 &&
              strcmp(ac_status_name((ac_status)-1), "unknown") == 0,
          "status names");
}

typedef struct {
    int calls, level;
    char message[256];
} heard;

static void listen(int level, const char *message, void *user)
{
    heard *h = user;
    h->calls++;
    h->level = level;
    snprintf(h->message, sizeof h->message, "%s", message);
}

static void test_log_callback(void)
{
    heard h = {0};
    ac_set_log_level(AC_LOG_WARN);   /* the default (the harness sets 0) */
    ac_set_log_callback(listen, &h);
    ac_warn("a warning with %d", 42);
    CHECK(h.calls == 1 && h.level == AC_LOG_WARN && strcmp(h.message, "a warning with 42") == 0,
          "the callback hears the warning (%d calls, level %d, '%s')", h.calls, h.level, h.message);
    ac_info("not at the default level");
    CHECK(h.calls == 1, "the log level filters what the callback hears");
    ac_set_log_level(AC_LOG_INFO);
    ac_info("now at info");
    CHECK(h.calls == 2 && h.level == AC_LOG_INFO, "info at level 2");
    ac_set_log_level(AC_LOG_WARN);
    ac_set_log_callback(NULL, NULL);
    ac_warn("to stderr (expected in this test's output)");
    CHECK(h.calls == 2, "NULL restores stderr");
    ac_set_log_level(AC_LOG_ERROR);
}

static void test_input_init(void)
{
    float pcm[4] = {0};
    ac_audio_input a = ac_input_pcm(pcm, 2, 2, 8000), b;
    memset(&b, 0xff, sizeof b);
    ac_input_pcm_init(&b, sizeof b, pcm, 2, 2, 8000);
    CHECK(a.struct_size == sizeof a && memcmp(&a, &b, sizeof a) == 0, "ac_input_pcm_init fills as ac_input_pcm");
    ac_input_file_init(&b, sizeof b, sample);
    CHECK(b.kind == AC_INPUT_FILE && b.path == sample && !b.pcm && !b.data && b.struct_size == sizeof b,
          "ac_input_file_init");
    ac_input_memory_init(&b, sizeof b, pcm, sizeof pcm, "x");
    CHECK(b.kind == AC_INPUT_MEMORY && b.data == pcm && b.size == sizeof pcm && !b.path, "ac_input_memory_init");
    /* a binding's older, shorter struct: only its bytes are written */
    unsigned char shorter[sizeof(ac_audio_input) + 8];
    memset(shorter, 0xab, sizeof shorter);
    size_t old = offsetof(ac_audio_input, data);
    ac_input_file_init((ac_audio_input *)shorter, old, sample);
    CHECK(shorter[old] == 0xab && ((ac_audio_input *)shorter)->struct_size == old, "a shorter struct");
}

static int stop_at(double done, double total, void *user)
{
    int *calls = user;
    (*calls)++;
    return done > 0 && total > 0;
}

static void test_vad_cancel(void)
{
    ac_model *vad = NULL;
    CHECK(ac_model_load(silero, NULL, &vad) == AC_OK, "load %s: %s", silero, ac_last_error());
    if (!vad) return;
    ac_vad_options o;
    ac_vad_options_default(&o);
    int calls = 0;
    o.on_progress = stop_at;
    o.user = &calls;
    ac_audio_input in = ac_input_file(sample);
    ac_vad_result *r = NULL;
    ac_status s = ac_vad_run(vad, &in, &o, &r);
    CHECK(s == AC_ERR_CANCELLED && !r && calls == 1 && strstr(ac_last_error(), "stopped by the caller"),
          "a VAD run cancelled (%s, %d calls: %s)", ac_status_name(s), calls, ac_last_error());
    o.on_progress = NULL;
    CHECK(ac_vad_run(vad, &in, &o, &r) == AC_OK && r && r->n_segments > 0, "runs without it");
    ac_vad_result_free(r);
    ac_model_free(vad);
}

static void test_timings(void)
{
    ac_model *asr = NULL;
    CHECK(ac_model_load(tiny_dir, NULL, &asr) == AC_OK, "load %s: %s", tiny_dir, ac_last_error());
    if (!asr) return;
    ac_audio_input in = ac_input_file(sample);
    ac_asr_result *r = NULL;
    CHECK(ac_asr_transcribe(asr, &in, NULL, &r) == AC_OK && r, "transcribe: %s", ac_last_error());
    if (r)
        CHECK(r->timings && r->timings->struct_size == sizeof *r->timings && r->timings->encoder > 0 &&
                  r->timings->decode_steps > 0,
              "timings through the result");
    ac_asr_result_free(r);
    ac_model_free(asr);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_version_and_status);
    RUN(test_log_callback);
    RUN(test_input_init);
    RUN(test_vad_cancel);
    RUN(test_timings);
    return test_finish();
}
