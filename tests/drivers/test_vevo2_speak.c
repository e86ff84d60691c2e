/* Vevo2's AR routes (path A) through src/models/vevo2, for
 * tests/ref/test_vevo2_speak.py, which compares what this writes with the
 * PyTorch route:
 *   test_vevo2_speak PKG ROUTE OUT_DIR [KEY=VALUE ...]
 * Keys: text, style_text, voice_text, source_text (strings); source, voice, style, prosody (raw
 * float32 mono 24 kHz files); noise (raw float32 [F][mel]); shift,
 * style_shift (semitones: the pitch is shifted by these fixed steps, or
 * "est" estimated); prosody_code, pitch (0/1: override the route);
 * target_duration, reference_duration (s); temperature, top_k, top_p,
 * penalty, min_tokens, max_tokens, seed, chunk_units, steps, threads;
 * weights (stored, f32, f16, bf16, q8_0: the type the parts' matrices are
 * held in, as ac_load_options.weights).
 * Writes OUT_DIR/NAME (NAME.K for text chunk K > 0) for every traced
 * intermediate (vevo2.h) and wav.f32; prints "shift S style_shift T
 * chunks C tokens N". Exit 3 with the error on stderr when anything fails.
 *   test_vevo2_speak api PKG VOICE.wav VOICE.f32
 * The public API (ac_voice_speak): 70 words in two chunks, each given to
 * on_audio as it is made and together the result; the voice as a file and
 * as PCM (VOICE.f32 its 24 kHz mono samples) alike; progress over the AR
 * tokens; a nonzero return cancels; the route list. Prints "api ok".
 *   test_vevo2_speak parse
 * The continuation parser and the prompt builder on fixed texts (spec
 * §4.6): tags in order, broken ones skipped, a code past the codebook an
 * error, none at all zero ids. Prints "parse ok". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "models/vevo2/prompt.h"
#include "models/vevo2/vevo2.h"
#include "test_util.h"

static int write_raw(const char *dir, const char *name, const void *x, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return write_file(path, x, bytes);
}

/* Traced names seen so far, to number the chunks' files. */
typedef struct {
    const char *dir;
    char names[64][32];
    int counts[64], n;
} tracer;

static void on_trace(void *user, const char *name, int layer, const void *data, size_t bytes)
{
    (void)layer;
    tracer *t = user;
    int i = 0;
    while (i < t->n && strcmp(t->names[i], name)) i++;
    if (i == t->n && t->n < 64) snprintf(t->names[t->n++], sizeof t->names[0], "%s", name);
    char file[64];
    if (t->counts[i]) snprintf(file, sizeof file, "%s.%d", name, t->counts[i]);
    else snprintf(file, sizeof file, "%s", name);
    t->counts[i]++;
    write_raw(t->dir, file, data, bytes);
}

typedef struct {
    float *wav;
    int64_t n;
    int chunks, last_chunk, n_chunks, tokens, cancel_at;
} api_seen;

static int api_audio(const float *x, int64_t n, int chunk, int n_chunks, void *user)
{
    api_seen *s = user;
    s->wav = realloc(s->wav, (size_t)(s->n + n) * sizeof *x);
    memcpy(s->wav + s->n, x, (size_t)n * sizeof *x);
    s->n += n;
    s->chunks++;
    s->last_chunk = chunk;
    s->n_chunks = n_chunks;
    return 0;
}

static int api_progress(const char *stage, int done, int total, void *user)
{
    api_seen *s = user;
    if (strcmp(stage, "ar") == 0) s->tokens++;
    return s->cancel_at && s->tokens == s->cancel_at;
}

static int api(const char *pkg, const char *voice_wav, const char *voice_raw)
{
    ac_model *m;
    API_CHECK(ac_model_load(pkg, NULL, &m) == AC_OK, "load %s", pkg);
    const char *const *routes = ac_voice_routes(m);
    int n_routes = 0;
    while (routes && routes[n_routes]) n_routes++;
    API_CHECK(n_routes == 11 && strcmp(routes[0], "zero_shot_tts") == 0, "%d routes", n_routes);
    char text[1024] = "";
    for (int i = 0; i < 70; i++) strcat(text, i % 10 == 9 ? "word. " : "word ");
    ac_audio_input voice = ac_input_file(voice_wav);
    api_seen seen = {0};
    ac_voice_options o;
    ac_voice_options_default(&o);
    o.target_voice = &voice;
    o.target_voice_text = "Hello there";
    o.max_new_tokens = 20;
    o.steps = 2;
    o.seed = 3;
    o.on_audio = api_audio;
    o.on_progress = api_progress;
    o.user = &seen;
    ac_voice_result *a, *b;
    API_CHECK(ac_voice_speak(m, text, &o, &a) == AC_OK, "speak");
    API_CHECK(seen.chunks == 2 && seen.n_chunks == 2 && seen.last_chunk == 1 && a->timings->chunks == 2,
              "on_audio saw %d chunks of %d", seen.chunks, seen.n_chunks);
    API_CHECK(seen.n == a->n_samples && memcmp(seen.wav, a->samples, (size_t)seen.n * 4) == 0,
              "the chunks joined are not the result");
    API_CHECK(seen.tokens == a->timings->ar_tokens && seen.tokens > 0, "progress saw %d AR tokens of %d",
              seen.tokens, a->timings->ar_tokens);
    size_t n_pcm = 0;
    float *pcm = read_f32_file(voice_raw, &n_pcm);
    ac_audio_input in = ac_input_pcm(pcm, (int64_t)n_pcm, 1, 24000);
    o.target_voice = &in;
    o.on_audio = NULL;
    API_CHECK(ac_voice_speak(m, text, &o, &b) == AC_OK && b->n_samples == a->n_samples &&
                  memcmp(a->samples, b->samples, (size_t)a->n_samples * 4) == 0, "PCM voice input");
    ac_voice_result_free(b);
    seen.tokens = 0;
    seen.cancel_at = 5;
    API_CHECK(ac_voice_speak(m, text, &o, &b) == AC_ERR_CANCELLED && !b, "cancel at token 5");
    API_CHECK(ac_voice_speak(m, NULL, &o, &b) == AC_ERR_ARG, "no text");
    ac_voice_result_free(a);
    free(seen.wav);
    free(pcm);
    ac_model_free(m);
    printf("api ok\n");
    return 0;
}

static int parse_check(void)
{
    int32_t *ids;
    int n;
    const char *text = "<|content_style_start|><|content_style_3|>x<|content_style_12|><|content_style_|>"
                       "<|content_style_7|<|content_style_5|><|prosody_2|><|content_style_0|><|im_end|>";
    API_CHECK(vevo2_parse_content_style(text, 64, &ids, &n) == AC_OK && n == 4 && ids[0] == 3 && ids[1] == 12 &&
                  ids[2] == 5 && ids[3] == 0, "tags in order, broken ones skipped (%d ids)", n);
    free(ids);
    API_CHECK(vevo2_parse_content_style("<|content_style_64|>", 64, &ids, &n) == AC_ERR_MODEL &&
                  strstr(ac_last_error(), "64"), "a code past the codebook");
    API_CHECK(vevo2_parse_content_style("<|prosody_1|> text <|im_end|>", 64, &ids, &n) == AC_OK && n == 0 && !ids,
              "no tag: zero ids");
    char *p;
    const int32_t pr[] = {4, 1}, st[] = {9};
    API_CHECK(vevo2_prompt_text(1, "Hi", "there", pr, 2, st, 1, &p) == AC_OK &&
                  strcmp(p, "<|im_start|>system\nUser will provide you with a text. Please first generate a good "
                            "prosodic instruction, then vocalize the text based on it.<|im_end|>\n<|im_start|>user\n"
                            "Hi there<|im_end|>\n<|im_start|>assistant\n<|prosody_start|><|prosody_4|>"
                            "<|prosody_1|><|prosody_end|><|content_style_start|><|content_style_9|>") == 0,
              "the prompt with prosody");
    free(p);
    API_CHECK(vevo2_prompt_text(0, NULL, "there", NULL, 0, NULL, 0, &p) == AC_OK &&
                  strstr(p, "user\n there<|im_end|>") && strstr(p, "assistant\n<|content_style_start|>") &&
                  !strstr(p, "prosody_start"), "the prompt without prosody or style: the space stays");
    free(p);
    printf("parse ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "parse") == 0) return parse_check();
    if (argc == 5 && strcmp(argv[1], "api") == 0) return api(argv[2], argv[3], argv[4]);
    if (argc < 4) {
        fprintf(stderr, "usage: test_vevo2_speak PKG ROUTE OUT_DIR [KEY=VALUE ...]\n");
        return 2;
    }
    const vevo2_route *route = vevo2_route_find(argv[2]);
    if (!route) return fprintf(stderr, "%s\n", ac_last_error()), 2;
    vevo2_options o = vevo2_defaults(route);
    vevo2_inputs in = {0};
    vevo2_clip *clips[] = {&in.source, &in.voice, &in.style, &in.prosody};
    const char *clip_keys[] = {"source", "voice", "style", "prosody"};
    float *noise = NULL;
    size_t n_noise = 0;
    ac_weight_type weights = AC_WEIGHTS_STORED;
    for (int i = 4; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) return fprintf(stderr, "not KEY=VALUE: %s\n", argv[i]), 2;
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        int done = 0;
        for (int c = 0; c < 4; c++)
            if (strcmp(k, clip_keys[c]) == 0) {
                size_t len;
                if (!(clips[c]->x = read_f32_file(v, &len))) return 2;
                clips[c]->n = (int64_t)len;
                done = 1;
            }
        if (done) continue;
        if (strcmp(k, "text") == 0) in.text = v;
        else if (strcmp(k, "style_text") == 0) in.style_text = v;
        else if (strcmp(k, "voice_text") == 0) in.voice_text = v;
        else if (strcmp(k, "source_text") == 0) in.source_text = v;
        else if (strcmp(k, "noise") == 0) {
            if (!(noise = read_f32_file(v, &n_noise))) return 2;
            o.noise = noise;
            o.n_noise = n_noise;
        } else if (strcmp(k, "shift") == 0 || strcmp(k, "style_shift") == 0) {
            if (strcmp(v, "est")) o.pitch_mode = VEVO2_PITCH_FIXED;
            *(k[0] == 's' && k[1] == 'h' ? &o.pitch_shift : &o.style_pitch_shift) = atoi(v);
        } else if (strcmp(k, "prosody_code") == 0) o.use_prosody_code = atoi(v);
        else if (strcmp(k, "pitch") == 0) o.use_pitch_shift = atoi(v);
        else if (strcmp(k, "target_duration") == 0) o.target_duration = atof(v);
        else if (strcmp(k, "reference_duration") == 0) o.reference_duration = atof(v);
        else if (strcmp(k, "temperature") == 0) o.sampler.temperature = (float)atof(v);
        else if (strcmp(k, "top_k") == 0) o.sampler.top_k = atoi(v);
        else if (strcmp(k, "top_p") == 0) o.sampler.top_p = (float)atof(v);
        else if (strcmp(k, "penalty") == 0) o.sampler.repetition_penalty = (float)atof(v);
        else if (strcmp(k, "min_tokens") == 0) o.sampler.min_new_tokens = atoi(v);
        else if (strcmp(k, "max_tokens") == 0) o.max_new_tokens = atoi(v);
        else if (strcmp(k, "seed") == 0) o.seed = strtoull(v, NULL, 10);
        else if (strcmp(k, "chunk_units") == 0) o.chunk_units = atoi(v);
        else if (strcmp(k, "steps") == 0) o.steps = atoi(v);
        else if (strcmp(k, "threads") == 0) ac_set_threads(atoi(v));
        else if (strcmp(k, "weights") == 0) {
            if (ac_weight_type_parse(v, &weights)) return fprintf(stderr, "%s\n", ac_last_error()), 2;
        }
        else return fprintf(stderr, "unknown key %s\n", k), 2;
    }
    tracer tr = {.dir = argv[3]};
    o.trace = (ac_trace){.fn = on_trace, .user = &tr};
    vevo2_model *m;
    int rc = 0;
    if (vevo2_load(argv[1], NULL, &m)) {
        fprintf(stderr, "load: %s\n", ac_last_error());
        rc = 3;
    } else {
        m->weights = weights;
        vevo2_output out;
        if (vevo2_run(m, &in, &o, &out)) {
            fprintf(stderr, "run: %s\n", ac_last_error());
            rc = 3;
        } else {
            printf("shift %d style_shift %d chunks %d tokens %d\n", out.shift, out.style_shift, out.t.chunks,
                   out.t.ar_tokens);
            if (write_raw(argv[3], "wav.f32", out.wav, (size_t)out.n * 4)) rc = 2;
            free(out.wav);
        }
        vevo2_free(m);
    }
    for (int c = 0; c < 4; c++) free((void *)clips[c]->x);
    free(noise);
    return rc;
}
