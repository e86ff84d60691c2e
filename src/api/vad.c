/* The public VAD API: family detection, and the driver that streams
 * decoded audio through a family's model and turns probabilities into
 * segments at the input's sample rate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audio/reader.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/progress.h"
#include "io/tensor_file.h"
#include "models/marblenet_vad/marblenet_vad.h"
#include "models/silero_vad/silero_vad.h"

typedef enum { FAMILY_SILERO, FAMILY_MARBLENET } family_id;

static const char *const family_names[] = {"silero_vad", "marblenet_vad", NULL};

struct ac_vad {
    family_id family;
    ac_silero *silero;
    ac_marblenet *marblenet;
};

const char *const *ac_vad_families(void) { return family_names; }

void ac_vad_options_default(ac_vad_options *o)
{
    *o = (ac_vad_options){
        .threshold = 0.5f,
        .neg_threshold = -1.0f,
        .min_speech_ms = 250,
        .min_silence_ms = 100,
        .speech_pad_ms = 30,
        .max_speech_s = 1e9,
        .min_silence_at_max_speech_ms = 98,
        .use_max_poss_sil_at_max_speech = 1,
        .keep_probs = 0,
    };
}

static int file_exists(const char *dir, const char *name)
{
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

/* Reads the weights' tensor names to tell the families apart. */
static ac_status detect(const char *path, family_id *out)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return ac_error(AC_ERR_IO, "%s: no such file or folder", path);
    if (S_ISDIR(sb.st_mode)) {
        if (file_exists(path, "silero_vad_16k.safetensors")) *out = FAMILY_SILERO;
        else if (file_exists(path, "marblenet_vad.safetensors")) *out = FAMILY_MARBLENET;
        else
            return ac_error(AC_ERR_MODEL, "%s: no VAD weights in this folder (silero_vad_16k.safetensors "
                            "or marblenet_vad.safetensors)", path);
        return AC_OK;
    }
    ac_tensor_file *st;
    AC_TRY(ac_tensor_file_open(path, &st));
    ac_status s = AC_OK;
    if (ac_tensor_file_find(st, "stft_conv.weight") && ac_tensor_file_find(st, "lstm_cell.weight_ih")) *out = FAMILY_SILERO;
    else if (ac_tensor_file_find(st, "preprocessor.featurizer.fb")) *out = FAMILY_MARBLENET;
    else s = ac_error(AC_ERR_MODEL, "%s: not a known VAD model (give --family: silero_vad, marblenet_vad)", path);
    ac_tensor_file_close(st);
    return s;
}

ac_status ac_vad_load(const char *path, const char *family, ac_vad **out)
{
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "no model path given");
    family_id id = FAMILY_SILERO;
    if (family) {
        if (strcmp(family, "silero_vad") == 0) id = FAMILY_SILERO;
        else if (strcmp(family, "marblenet_vad") == 0) id = FAMILY_MARBLENET;
        else return ac_error(AC_ERR_ARG, "unknown VAD family '%s' (silero_vad, marblenet_vad)", family);
    } else {
        AC_TRY(detect(path, &id));
    }
    ac_vad *v = ac_calloc(1, sizeof *v);
    if (!v) return AC_ERR_NOMEM;
    v->family = id;
    ac_status s = id == FAMILY_SILERO ? ac_silero_load(path, &v->silero)
                                      : ac_marblenet_load(path, &v->marblenet);
    if (s) {
        free(v);
        return s;
    }
    *out = v;
    return AC_OK;
}

const char *ac_vad_family(const ac_vad *v) { return family_names[v->family]; }

void ac_vad_free(ac_vad *v)
{
    if (!v) return;
    ac_silero_free(v->silero);
    ac_marblenet_free(v->marblenet);
    free(v);
}

void ac_vad_result_free(ac_vad_result *r)
{
    if (!r) return;
    free(r->segments);
    free(r->probs);
    memset(r, 0, sizeof *r);
}

static ac_status check_options(const ac_vad_options *o)
{
    if (!(o->threshold >= 0 && o->threshold <= 1))
        return ac_error(AC_ERR_ARG, "threshold %g must be in [0, 1]", o->threshold);
    if (!(o->neg_threshold <= 1)) return ac_error(AC_ERR_ARG, "neg_threshold %g must be <= 1", o->neg_threshold);
    if (o->min_speech_ms < 0 || o->min_silence_ms < 0 || o->speech_pad_ms < 0 ||
        o->min_silence_at_max_speech_ms < 0)
        return ac_error(AC_ERR_ARG, "durations must not be negative");
    if (o->min_speech_ms > 86400000 || o->min_silence_ms > 86400000 || o->speech_pad_ms > 86400000 ||
        o->min_silence_at_max_speech_ms > 86400000)
        return ac_error(AC_ERR_ARG, "durations must be at most a day");
    if (!(o->max_speech_s > 0)) return ac_error(AC_ERR_ARG, "max_speech_s must be positive");
    return AC_OK;
}

/* Streams the reader through the model; probabilities land in PROBS. */
static ac_status run_stream(ac_vad *v, ac_audio_reader *r, ac_floatvec *probs, int64_t *n_model)
{
    enum { BLOCK = 16384 };
    float *buf = ac_malloc(BLOCK * sizeof *buf);
    if (!buf) return AC_ERR_NOMEM;
    ac_silero_stream *ss = NULL;
    ac_marblenet_stream *ms = NULL;
    ac_status s = v->family == FAMILY_SILERO ? ac_silero_stream_new(v->silero, &ss)
                                             : ac_marblenet_stream_new(v->marblenet, &ms);
    const ac_audio_info *info = ac_audio_reader_info(r);
    ac_progress prog;
    ac_progress_begin(&prog, "vad", (double)info->frames);
    *n_model = 0;
    while (!s) {
        size_t got;
        s = ac_audio_read(r, buf, BLOCK, &got);
        if (s || got == 0) break;
        *n_model += (int64_t)got;
        s = ss ? ac_silero_stream_feed(ss, buf, got, probs) : ac_marblenet_stream_feed(ms, buf, got, probs);
        ac_progress_update(&prog, (double)ac_audio_reader_source_pos(r));
    }
    if (!s) s = ss ? ac_silero_stream_finish(ss, probs) : ac_marblenet_stream_finish(ms, probs);
    ac_progress_end(&prog);
    ac_silero_stream_free(ss);
    ac_marblenet_stream_free(ms);
    free(buf);
    return s;
}

static ac_status run_reader(ac_vad *v, ac_audio_reader *r, const ac_vad_options *opt, ac_vad_result *out)
{
    ac_floatvec probs = {0};
    int64_t n_model = 0;
    ac_status s = run_stream(v, r, &probs, &n_model);
    const ac_audio_info *info = ac_audio_reader_info(r);
    int model_rate = ac_audio_reader_rate(r);
    if (!s) {
        if (v->family == FAMILY_SILERO)
            s = ac_silero_segments(probs.data, probs.n, n_model, opt, &out->segments, &out->n_segments);
        else
            s = ac_marblenet_segments(v->marblenet, probs.data, probs.n, n_model, opt->threshold,
                                      &out->segments, &out->n_segments);
    }
    if (s) {
        ac_floatvec_free(&probs);
        return s;
    }
    int in_rate = info->sample_rate;
    /* the input's own length: the source frame count when known */
    out->n_samples = ac_audio_reader_source_pos(r);
    for (size_t i = 0; i < out->n_segments; i++) {
        ac_vad_segment *g = &out->segments[i];
        int to_end = g->end >= n_model;
        g->start = g->start * in_rate / model_rate;
        g->end = to_end ? out->n_samples : g->end * in_rate / model_rate;
        if (g->end > out->n_samples) g->end = out->n_samples;
    }
    out->sample_rate = in_rate;
    out->channels = info->channels;
    out->hop_seconds = (double)(v->family == FAMILY_SILERO ? AC_SILERO_CHUNK : ac_marblenet_hop(v->marblenet)) /
                       model_rate;
    if (opt->keep_probs) {
        out->probs = probs.data;
        out->n_probs = probs.n;
    } else {
        ac_floatvec_free(&probs);
    }
    return AC_OK;
}

static int model_rate(const ac_vad *v)
{
    return v->family == FAMILY_SILERO ? AC_SILERO_RATE : ac_marblenet_rate(v->marblenet);
}

/* Runs an opened reader (closed here); a failure leaves OUT empty. */
static ac_status run_opened(ac_vad *v, ac_audio_reader *r, const ac_vad_options *opt, ac_vad_result *out)
{
    ac_vad_options def;
    if (!opt) ac_vad_options_default(&def), opt = &def;
    ac_status s = check_options(opt);
    if (!s) s = run_reader(v, r, opt, out);
    ac_audio_close(r);
    if (s) ac_vad_result_free(out);
    return s;
}

ac_status ac_vad_run_file(ac_vad *v, const char *file, const ac_vad_options *opt, ac_vad_result *out)
{
    memset(out, 0, sizeof *out);
    ac_audio_reader *r;
    AC_TRY(ac_audio_open_file(file, model_rate(v), &r));
    ac_status s = run_opened(v, r, opt, out);
    return s ? ac_error_prefix(s, "%s", file) : AC_OK;
}

ac_status ac_vad_run_pcm(ac_vad *v, const float *pcm, int64_t frames, int channels, int rate,
                         const ac_vad_options *opt, ac_vad_result *out)
{
    memset(out, 0, sizeof *out);
    ac_audio_reader *r;
    AC_TRY(ac_audio_open_pcm(pcm, frames, channels, rate, model_rate(v), &r));
    return run_opened(v, r, opt, out);
}

ac_status ac_vad_run_memory(ac_vad *v, const void *data, size_t size, const ac_vad_options *opt,
                            ac_vad_result *out)
{
    memset(out, 0, sizeof *out);
    ac_audio_reader *r;
    AC_TRY(ac_audio_open_memory(data, size, "upload", model_rate(v), &r));
    return run_opened(v, r, opt, out);
}
