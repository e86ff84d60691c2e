/* The public voice calls: decode every clip whole at the model's rate
 * (mono, soxr as librosa loads them) and hand them to the family. */
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/input.h"
#include "base/error.h"
#include "base/timing.h"

/* Whisper sees 30 s; longer clips are converted as upstream does (its
 * features past 30 s repeat the last frame), up to this bound on memory. */
#define MAX_SOURCE_S 120.0
#define MAX_TARGET_S 60.0
/* A text past this is no single request (OpenAI's speech endpoint takes 4096 characters). */
#define MAX_TEXT_BYTES (64 * 1024)

void ac_voice_options_init(ac_voice_options *o, size_t size)
{
    ac_voice_options d = {
        .struct_size = size,
        .target_voice = NULL,
        .pitch_mode = AC_PITCH_ESTIMATE,
        .pitch_shift = 0,
        .steps = 32,
        .seed = 0,
        .use_prosody_code = -1,
        .use_pitch_shift = -1,
        .temperature = -1,
        .top_k = -1,
        .top_p = -1,
        .repetition_penalty = -1,
        .min_new_tokens = -1,
        .max_new_tokens = -1,
        .speed = 1.0,
    };
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

/* A result and its timings, allocated (and freed) as one block. */
typedef struct {
    ac_voice_result r;
    ac_voice_timings t;
} result_block;

void ac_voice_result_free(ac_voice_result *r)
{
    if (!r) return;
    free(r->samples);
    free(r);
}

static ac_status check_options(const ac_voice_options *o)
{
    if (o->pitch_mode != AC_PITCH_ESTIMATE && o->pitch_mode != AC_PITCH_FIXED && o->pitch_mode != AC_PITCH_NONE)
        return ac_error(AC_ERR_ARG, "pitch_mode %d is not one of estimate, fixed, none", (int)o->pitch_mode);
    if (o->pitch_mode == AC_PITCH_FIXED && (o->pitch_shift < -24 || o->pitch_shift > 24 ||
                                            o->style_pitch_shift < -24 || o->style_pitch_shift > 24))
        return ac_error(AC_ERR_ARG, "pitch shift %d semitones: must be in [-24, 24]",
                        o->pitch_shift < -24 || o->pitch_shift > 24 ? o->pitch_shift : o->style_pitch_shift);
    if (o->steps < 1 || o->steps > 1000) return ac_error(AC_ERR_ARG, "steps %d: must be in [1, 1000]", o->steps);
    if (o->noise && !o->n_noise) return ac_error(AC_ERR_ARG, "the injected noise is empty");
    if (o->use_prosody_code < -1 || o->use_prosody_code > 1 || o->use_pitch_shift < -1 || o->use_pitch_shift > 1)
        return ac_error(AC_ERR_ARG, "use_prosody_code and use_pitch_shift are -1, 0 or 1");
    if (!(o->target_duration >= 0 && o->target_duration <= MAX_SOURCE_S))
        return ac_error(AC_ERR_ARG, "target duration %g s: must be in [0, %.0f]", o->target_duration, MAX_SOURCE_S);
    if (!(o->max_seconds >= 0 && o->max_seconds <= 1e9))
        return ac_error(AC_ERR_ARG, "max seconds %g: must be 0 (no limit) or positive", o->max_seconds);
    if (!(o->reference_duration >= 0 && o->reference_duration <= 1e6))
        return ac_error(AC_ERR_ARG, "reference duration %g s: must be 0 (all) or positive", o->reference_duration);
    if (o->temperature > 100 || o->temperature != o->temperature)
        return ac_error(AC_ERR_ARG, "temperature %g: must be in [0, 100]", o->temperature);
    if (o->top_p == 0 || o->top_p > 1 || o->top_p != o->top_p)
        return ac_error(AC_ERR_ARG, "top_p %g: must be in (0, 1]", o->top_p);
    if (o->repetition_penalty == 0 || o->repetition_penalty > 100 || o->repetition_penalty != o->repetition_penalty)
        return ac_error(AC_ERR_ARG, "repetition penalty %g: must be in (0, 100]", o->repetition_penalty);
    if (o->max_new_tokens == 0 || o->max_new_tokens > 4096)
        return ac_error(AC_ERR_ARG, "max new tokens %d: must be in [1, 4096]", o->max_new_tokens);
    if (!(o->speed >= 0.25 && o->speed <= 4.0))
        return ac_error(AC_ERR_ARG, "speed %g: must be in [0.25, 4]", o->speed);
    if (o->text && strlen(o->text) > MAX_TEXT_BYTES)
        return ac_error(AC_ERR_ARG, "the text has %zu bytes, more than the %d one request takes", strlen(o->text),
                        MAX_TEXT_BYTES);
    return AC_OK;
}

/* IN as mono at RATE, its first KEEP_S seconds (0: all), at most MAX_S seconds; WHAT names it. */
static ac_status read_all(const ac_audio_input *in, int rate, double max_s, double keep_s, const char *what,
                          float **out, int64_t *n)
{
    ac_status s = ac_input_read_all(in, rate, max_s, keep_s, out, n, NULL);
    if (!s && *n == 0) {
        free(*out);
        *out = NULL;
        s = ac_error(AC_ERR_ARG, "no audio samples");
    }
    return s ? ac_error_prefix(ac_input_error(in, s), "%s", what) : AC_OK;
}

/* IN (may be NULL) decoded into C; WHAT names it in messages. */
static ac_status read_clip(const ac_audio_input *in, int rate, double max_s, double keep_s, const char *what,
                           ac_voice_clip *c)
{
    if (!in) return AC_OK;
    float *x;
    AC_TRY(read_all(in, rate, max_s, keep_s, what, &x, &c->n));
    c->x = x;
    return AC_OK;
}

static ac_status run(ac_model *m, const ac_audio_input *source, const char *text, const ac_voice_options *user,
                     ac_voice_result **out)
{
    AC_TRY(ac_model_check_task(m, AC_TASK_VOICE, text ? "ac_voice_speak" : "ac_voice_convert"));
    ac_voice_options o;
    ac_voice_options_default(&o);
    if (user) AC_TRY(ac_struct_take(&o, sizeof o, user, "ac_voice_options"));
    if (text) {
        o.text = text;
        if (!o.route) o.route = "zero_shot_tts";
    }
    AC_TRY(check_options(&o));
    const int rate = m->family->rate(m->impl);
    double t0 = ac_now();
    ac_voice_clips c = {0};
    ac_status s = read_clip(source, rate, MAX_SOURCE_S, 0, "source", &c.source);
    /* reference_duration cuts the target voice as it is read: a longer clip is not refused for its length */
    if (!s) s = read_clip(o.target_voice, rate, MAX_TARGET_S, o.reference_duration, "target voice", &c.voice);
    if (!s) s = read_clip(o.style_ref, rate, MAX_TARGET_S, 0, "style reference", &c.style);
    if (!s) s = read_clip(o.prosody_ref, rate, MAX_SOURCE_S, 0, "prosody reference", &c.prosody);
    result_block *b = s ? NULL : ac_calloc(1, sizeof *b);
    ac_voice_result *res = b ? &b->r : NULL;
    if (!s && !res) s = AC_ERR_NOMEM;
    if (!s) {
        double decode = ac_now() - t0;
        s = m->family->voice->run(m->impl, &c, &o, res, &b->t);
        b->t.struct_size = sizeof b->t;
        b->t.decode = decode;
        res->timings = &b->t;
        res->sample_rate = rate;
    }
    free((void *)c.source.x);
    free((void *)c.voice.x);
    free((void *)c.style.x);
    free((void *)c.prosody.x);
    if (s) {
        ac_voice_result_free(res);
        return s;
    }
    res->struct_size = sizeof *res;
    *out = res;
    return AC_OK;
}

ac_status ac_voice_convert(ac_model *m, const ac_audio_input *source, const ac_voice_options *opt,
                           ac_voice_result **out)
{
    ac_error_clear();
    *out = NULL;
    return run(m, source, NULL, opt, out);
}

ac_status ac_voice_speak(ac_model *m, const char *text, const ac_voice_options *opt, ac_voice_result **out)
{
    ac_error_clear();
    *out = NULL;
    if (!text) return ac_error(AC_ERR_ARG, "ac_voice_speak: no text");
    return run(m, NULL, text, opt, out);
}

const char *const *ac_voice_routes(const ac_model *m)
{
    return m && m->family->voice ? m->family->voice->routes() : NULL;
}

ac_status ac_voice_check_reference(ac_model *m, const ac_audio_input *clip)
{
    ac_error_clear();
    AC_TRY(ac_model_check_task(m, AC_TASK_VOICE, "ac_voice_check_reference"));
    float *x;
    int64_t n;
    ac_audio_info info;
    ac_status s = ac_input_read_all(clip, m->family->rate(m->impl), MAX_TARGET_S, 0, &x, &n, &info);
    if (s) return ac_error_prefix(ac_input_error(clip, s), "target voice");
    ac_voice_clip c = {x, n};
    s = m->family->voice->check_voice(m->impl, &c);
    free(x);
    if (!s && info.sample_rate < AC_VOICE_MIN_RATE)
        s = ac_error(AC_ERR_ARG, "target voice: recorded at %d Hz, below the %d Hz a voice needs", info.sample_rate,
                     AC_VOICE_MIN_RATE);
    return s;
}
