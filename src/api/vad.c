/* The public VAD call: streams decoded audio through a VAD family's model
 * (family.h) and turns probabilities into segments at the input's rate. */
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/input.h"
#include "base/error.h"
#include "base/progress.h"

void ac_vad_options_init(ac_vad_options *o, size_t size)
{
    ac_vad_options d = {
        .struct_size = size,
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
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

void ac_vad_result_free(ac_vad_result *r)
{
    if (!r) return;
    free(r->segments);
    free(r->speech);
    free(r->probs);
    free(r);
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

/* Streams the reader through the model; probabilities land in PROBS. OPT's
 * on_progress hears of each block and may cancel. */
static ac_status run_stream(const ac_model *v, ac_audio_reader *r, const ac_vad_options *opt, ac_floatvec *probs,
                            int64_t *n_model)
{
    const ac_vad_ops *ops = v->family->vad;
    enum { BLOCK = 16384 };
    float *buf = ac_malloc(BLOCK * sizeof *buf);
    if (!buf) return AC_ERR_NOMEM;
    void *st = NULL;
    ac_status s = ops->stream_new(v->impl, &st);
    const ac_audio_info *info = ac_audio_reader_info(r);
    ac_progress prog;
    ac_progress_begin(&prog, "vad", (double)info->frames);
    *n_model = 0;
    while (!s) {
        size_t got;
        s = ac_audio_read(r, buf, BLOCK, &got);
        if (s || got == 0) break;
        *n_model += (int64_t)got;
        s = ops->feed(st, buf, got, probs);
        ac_progress_update(&prog, (double)ac_audio_reader_source_pos(r));
        if (!s && opt->on_progress &&
            opt->on_progress((double)ac_audio_reader_source_pos(r) / info->sample_rate,
                             info->frames > 0 ? (double)info->frames / info->sample_rate : 0, opt->user))
            s = ac_error(AC_ERR_CANCELLED, "VAD stopped by the caller");
    }
    if (!s) s = ops->finish(st, probs);
    ac_progress_end(&prog);
    if (st) ops->stream_free(st);
    free(buf);
    return s;
}

/* V's N segments from samples at MODEL_RATE (N_MODEL of them) to the
 * input's IN_RATE and length N_IN. */
static void to_input_rate(ac_vad_segment *v, size_t n, int64_t n_model, int model_rate, int in_rate, int64_t n_in)
{
    for (size_t i = 0; i < n; i++) {
        ac_vad_segment *g = &v[i];
        int to_end = g->end >= n_model;
        g->start = g->start * in_rate / model_rate;
        g->end = to_end ? n_in : g->end * in_rate / model_rate;
        if (g->end > n_in) g->end = n_in;
    }
}

/* The speech segments, a copy of them padded as OPT asks. */
static ac_status find_segments(const ac_model *v, const ac_floatvec *probs, int64_t n_model,
                               const ac_vad_options *opt, ac_vad_result *out)
{
    const ac_vad_ops *ops = v->family->vad;
    AC_TRY(ops->speech(v->impl, probs->data, probs->n, n_model, opt, &out->speech, &out->n_segments));
    size_t bytes = out->n_segments * sizeof *out->segments;
    out->segments = ac_malloc(bytes ? bytes : 1);
    if (!out->segments) return AC_ERR_NOMEM;
    if (bytes) memcpy(out->segments, out->speech, bytes);
    if (ops->pad) ops->pad(out->segments, out->n_segments, opt, n_model);
    return AC_OK;
}

static ac_status run_reader(const ac_model *v, ac_audio_reader *r, const ac_vad_options *opt, ac_vad_result *out)
{
    ac_floatvec probs = {0};
    int64_t n_model = 0;
    ac_status s = run_stream(v, r, opt, &probs, &n_model);
    if (!s) s = find_segments(v, &probs, n_model, opt, out);
    if (s) {
        ac_floatvec_free(&probs);
        return s;
    }
    const ac_audio_info *info = ac_audio_reader_info(r);
    int in_rate = info->sample_rate, model_rate = ac_audio_reader_rate(r);
    /* the input's own length: the source frame count when known */
    out->n_samples = ac_audio_reader_source_pos(r);
    to_input_rate(out->segments, out->n_segments, n_model, model_rate, in_rate, out->n_samples);
    to_input_rate(out->speech, out->n_segments, n_model, model_rate, in_rate, out->n_samples);
    out->sample_rate = in_rate;
    out->channels = info->channels;
    out->hop_seconds = (double)v->family->vad->hop(v->impl) / model_rate;
    if (opt->keep_probs) {
        out->probs = probs.data;
        out->n_probs = probs.n;
    } else {
        ac_floatvec_free(&probs);
    }
    return AC_OK;
}

static ac_status run(ac_model *v, const ac_audio_input *in, const ac_vad_options *user, ac_vad_result **out)
{
    AC_TRY(ac_model_check_task(v, AC_TASK_VAD, "ac_vad_run"));
    ac_vad_options opt;
    ac_vad_options_default(&opt);
    if (user) AC_TRY(ac_struct_take(&opt, sizeof opt, user, "ac_vad_options"));
    AC_TRY(check_options(&opt));
    ac_audio_reader *r;
    AC_TRY(ac_input_open(in, v->family->rate(v->impl), &r));
    ac_vad_result *res = ac_calloc(1, sizeof *res);
    ac_status s = res ? run_reader(v, r, &opt, res) : AC_ERR_NOMEM;
    ac_audio_close(r);
    if (s) {
        ac_vad_result_free(res);
        return s;
    }
    res->struct_size = sizeof *res;
    *out = res;
    return AC_OK;
}

ac_status ac_vad_run(ac_model *v, const ac_audio_input *in, const ac_vad_options *opt, ac_vad_result **out)
{
    ac_error_clear();
    *out = NULL;
    return ac_input_error(in, run(v, in, opt, out));
}
