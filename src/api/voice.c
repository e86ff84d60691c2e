/* The public voice-conversion call: decodes both clips whole at the model's
 * rate (mono, soxr as librosa loads them) and hands them to the family. */
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

void ac_voice_options_init(ac_voice_options *o, size_t size)
{
    ac_voice_options d = {
        .struct_size = size,
        .target_voice = NULL,
        .pitch_mode = AC_PITCH_ESTIMATE,
        .pitch_shift = 0,
        .steps = 32,
        .seed = 0,
    };
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

void ac_voice_result_free(ac_voice_result *r)
{
    if (!r) return;
    free(r->samples);
    free(r);
}

static ac_status check_options(const ac_voice_options *o)
{
    if (!o->target_voice) return ac_error(AC_ERR_ARG, "no target voice given");
    if (o->pitch_mode != AC_PITCH_ESTIMATE && o->pitch_mode != AC_PITCH_FIXED && o->pitch_mode != AC_PITCH_NONE)
        return ac_error(AC_ERR_ARG, "pitch_mode %d is not one of estimate, fixed, none", (int)o->pitch_mode);
    if (o->pitch_mode == AC_PITCH_FIXED && (o->pitch_shift < -24 || o->pitch_shift > 24))
        return ac_error(AC_ERR_ARG, "pitch shift %d semitones: must be in [-24, 24]", o->pitch_shift);
    if (o->steps < 1 || o->steps > 1000) return ac_error(AC_ERR_ARG, "steps %d: must be in [1, 1000]", o->steps);
    if (o->noise && !o->n_noise) return ac_error(AC_ERR_ARG, "the injected noise is empty");
    return AC_OK;
}

/* The whole of IN as mono at RATE, at most MAX_S seconds; WHAT names it. */
static ac_status read_all(const ac_audio_input *in, int rate, double max_s, const char *what, float **out,
                          int64_t *n)
{
    *out = NULL;
    *n = 0;
    ac_audio_reader *r;
    ac_status s = ac_input_open(in, rate, &r);
    if (s) return ac_error_prefix(ac_input_error(in, s), "%s", what);
    ac_floatvec v = {0};
    const int64_t max_n = (int64_t)(max_s * rate);
    enum { BLOCK = 16384 };
    float buf[BLOCK];
    for (;;) {
        size_t got;
        if ((s = ac_audio_read(r, buf, BLOCK, &got)) || got == 0) break;
        if ((int64_t)(v.n + got) > max_n) {
            s = ac_error(AC_ERR_ARG, "longer than %.0f s, the most this model converts at once", max_s);
            break;
        }
        if (ac_floatvec_push(&v, buf, got)) {
            s = AC_ERR_NOMEM;
            break;
        }
    }
    ac_audio_close(r);
    if (!s && v.n == 0) s = ac_error(AC_ERR_ARG, "no audio samples");
    if (s) {
        ac_floatvec_free(&v);
        return ac_error_prefix(ac_input_error(in, s), "%s", what);
    }
    *out = v.data;
    *n = (int64_t)v.n;
    return AC_OK;
}

static ac_status run(ac_model *m, const ac_audio_input *source, const ac_voice_options *user, ac_voice_result **out)
{
    AC_TRY(ac_model_check_task(m, AC_TASK_VOICE, "ac_voice_convert"));
    ac_voice_options o;
    ac_voice_options_default(&o);
    if (user) AC_TRY(ac_struct_take(&o, sizeof o, user, "ac_voice_options"));
    AC_TRY(check_options(&o));
    const int rate = m->family->rate(m->impl);
    double t0 = ac_now();
    float *src = NULL, *tgt = NULL;
    int64_t n_src = 0, n_tgt = 0;
    ac_status s = read_all(source, rate, MAX_SOURCE_S, "source", &src, &n_src);
    if (!s) s = read_all(o.target_voice, rate, MAX_TARGET_S, "target voice", &tgt, &n_tgt);
    ac_voice_result *res = s ? NULL : ac_calloc(1, sizeof *res);
    if (!s && !res) s = AC_ERR_NOMEM;
    if (!s) {
        double decode = ac_now() - t0;
        s = m->family->voice->convert(m->impl, src, n_src, tgt, n_tgt, &o, res);
        res->timings.decode = decode;
        res->sample_rate = rate;
    }
    free(src);
    free(tgt);
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
    *out = NULL;
    return run(m, source, opt, out);
}
