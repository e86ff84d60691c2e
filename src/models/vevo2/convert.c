/* Style-preserved voice and singing conversion (spec vevo2.md §3 path S,
 * Amphion inference_fm with use_pitch_shift). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/chroma.h"
#include "audio/f0.h"
#include "audio/pitch_shift.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/timing.h"
#include "models/vevo2/vevo2.h"

/* Shorter clips leave the STFTs' reflect padding and the pitch tracker
 * without a frame; a clip this short is no voice to convert or copy. */
#define MIN_SECONDS 0.5
/* Peak amplitude below which a clip is taken for silence. */
#define SILENCE_PEAK 1e-4f

static ac_status check_clip(const float *x, int64_t n, int rate, const char *what)
{
    if (n < (int64_t)(MIN_SECONDS * rate))
        return ac_error(AC_ERR_ARG, "%s: %.3f s of audio is too short to convert (at least %.1f s)", what,
                        (double)n / rate, MIN_SECONDS);
    float peak = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return ac_error(AC_ERR_ARG, "%s: sample %lld is not a finite number", what, (long long)i);
        float a = fabsf(x[i]);
        if (a > peak) peak = a;
    }
    if (peak < SILENCE_PEAK) return ac_error(AC_ERR_ARG, "%s: the audio is silent (peak %.2g)", what, peak);
    return AC_OK;
}

static int report(const vevo2_convert_options *o, const char *stage, int done, int total)
{
    return o->progress && o->progress(o->progress_user, stage, done, total);
}

ac_status vevo2_content_style_ids(vevo2_model *m, const float *x, int64_t n, int shift, ac_arena *out,
                                  ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t)
{
    const int T = (int)(n / m->mel.hop);
    const whisper_config *wc = &m->whisper->cfg;
    double t0 = ac_now();
    /* Whisper hears the unshifted audio at 16 kHz */
    int64_t n16 = ac_sinc_resampled_len(&m->to_whisper, n);
    float *x16 = n16 > 0 ? ac_arena_floats(a, (size_t)n16) : NULL;
    float *enc = ac_arena_floats(a, (size_t)wc->n_ctx * wc->d);
    float *feat = ac_arena_floats(a, (size_t)T * wc->d);
    if (!x16 || !enc || !feat) return AC_ERR_NOMEM;
    AC_TRY(ac_sinc_resample(&m->to_whisper, x, n, a, x16));
    AC_TRY(whisper_encode_audio(m->whisper, x16, (size_t)n16, a, enc));
    AC_TRY(whisper_features(wc, enc, T, m->stats, feat));
    double t1 = ac_now();
    t->whisper += t1 - t0;

    /* the chromagram of the shifted audio, over the unshifted frame count */
    const float *y = x;
    if (shift) {
        float *shifted = ac_arena_floats(a, (size_t)n);
        if (!shifted) return AC_ERR_NOMEM;
        AC_TRY(ac_pitch_shift(x, n, m->mel.sample_rate, shift, shifted));
        y = shifted;
    }
    double t2 = ac_now();
    t->pitch += t2 - t1;
    const int C = m->content_cfg.chroma_dim;
    float *chroma = ac_arena_floats(a, (size_t)T * C);
    if (!chroma) return AC_ERR_NOMEM;
    ac_chroma ch;
    AC_TRY(ac_chroma_init(&ch, m->mel.sample_rate, m->mel.n_fft, m->mel.hop, C));
    ac_status s = ac_chroma_stft(&ch, y, n, T, a, chroma, NULL);
    ac_chroma_free(&ch);
    AC_TRY(s);
    double t3 = ac_now();
    t->chroma += t3 - t2;

    size_t k = vevo2_coco_tokens(&m->content_cfg, (size_t)T);
    int32_t *res = ac_arena_alloc(out, k * sizeof *res);
    float *lat = ac_arena_floats(a, k * (size_t)m->content_cfg.codebook_dim);
    if (!res || !lat) return AC_ERR_NOMEM;
    AC_TRY(vevo2_coco_encode(m->content, feat, chroma, (size_t)T, a, lat, res, NULL));
    t->tokenizer += ac_now() - t3;
    ac_arena_reset(a);
    *ids = res;
    *n_ids = (int)k;
    return AC_OK;
}

/* Semitones from the source's median F0 to the target's (0 when either
 * has no voiced frame). */
static ac_status estimate_shift(const vevo2_model *m, const float *src, int64_t n, const float *tgt, int64_t nt,
                                int *shift)
{
    double f_src, f_tgt;
    AC_TRY(ac_f0_median(src, n, m->mel.sample_rate, &f_src, NULL));
    AC_TRY(ac_f0_median(tgt, nt, m->mel.sample_rate, &f_tgt, NULL));
    *shift = ac_semitone_shift(f_tgt, f_src);
    return AC_OK;
}

static int on_step(void *user, int step, int steps) { return report(user, "fm", step, steps); }

/* Results that outlive a stage come from A, each stage's scratch from S,
 * reset after it: the peak is the largest stage, not their sum. */
static ac_status convert(vevo2_model *m, const float *src, int64_t n, const float *tgt, int64_t nt,
                         const vevo2_convert_options *o, ac_arena *a, ac_arena *sc, float **wav, int64_t *n_wav,
                         int *shift, vevo2_timings *t)
{
    const int rate = m->mel.sample_rate, mel = m->mel.n_mels;
    AC_TRY(check_clip(src, n, rate, "source"));
    AC_TRY(check_clip(tgt, nt, rate, "target voice"));
    if (o->steps < 1) return ac_error(AC_ERR_ARG, "steps %d: the flow matching needs at least one", o->steps);
    if (report(o, "load", 0, 1)) return AC_ERR_CANCELLED;
    AC_TRY(vevo2_load_conversion(m));

    double t0 = ac_now();
    *shift = o->pitch_mode == VEVO2_PITCH_FIXED ? o->pitch_shift : 0;
    if (o->pitch_mode == VEVO2_PITCH_ESTIMATE) AC_TRY(estimate_shift(m, src, n, tgt, nt, shift));
    t->pitch += ac_now() - t0;

    if (report(o, "tokenizer", 0, 2)) return AC_ERR_CANCELLED;
    int32_t *src_ids, *tgt_ids;
    int n_src, n_tgt;
    AC_TRY(vevo2_content_style_ids(m, src, n, *shift, a, sc, &src_ids, &n_src, t));
    if (report(o, "tokenizer", 1, 2)) return AC_ERR_CANCELLED;
    AC_TRY(vevo2_content_style_ids(m, tgt, nt, 0, a, sc, &tgt_ids, &n_tgt, t));

    double t1 = ac_now();
    const int Tt = (int)vevo2_timbre_mel_frames(&m->timbre, nt);
    float *prompt = ac_arena_floats(a, (size_t)Tt * mel);
    if (!prompt) return AC_ERR_NOMEM;
    AC_TRY(vevo2_timbre_mel_compute(&m->timbre, tgt, nt, prompt));
    double t2 = ac_now();
    t->timbre_mel += t2 - t1;

    /* the condition: the target's tokens, then the source's */
    const int n_ids = n_tgt + n_src, Lc = n_ids * m->fm_cfg.cond_scale_factor;
    const int F = vevo2_fm_frames(Lc, Tt);
    int *ids = ac_arena_alloc(a, (size_t)n_ids * sizeof *ids);
    float *cond = ac_arena_floats(a, (size_t)Lc * m->fm_cfg.hidden);
    float *out_mel = F > 0 ? ac_arena_floats(a, (size_t)F * mel) : NULL;
    if (F <= 0) return ac_error(AC_ERR_ARG, "source: too short: the conversion would make %d frames", F);
    if (!ids || !cond || !out_mel) return AC_ERR_NOMEM;
    for (int i = 0; i < n_tgt; i++) ids[i] = tgt_ids[i];
    for (int i = 0; i < n_src; i++) ids[n_tgt + i] = src_ids[i];
    if (o->noise && o->n_noise != (size_t)F * mel)
        return ac_error(AC_ERR_ARG,
                        "the injected noise has %zu values; this conversion needs %d frames x %d mels = %zu "
                        "(%zu bytes of float32)",
                        o->n_noise, F, mel, (size_t)F * mel, (size_t)F * mel * 4);
    AC_TRY(vevo2_fm_cond(m->fm, ids, n_ids, cond, sc));
    ac_arena_reset(sc);
    vevo2_fm_options fo = vevo2_fm_defaults();
    fo.steps = o->steps;
    fo.seed = o->seed;
    fo.noise = o->noise;
    fo.progress = on_step;
    fo.progress_user = (void *)o;
    AC_TRY(vevo2_fm_sample(m->fm, cond, Lc, prompt, Tt, &fo, out_mel, sc));
    ac_arena_reset(sc);
    double t3 = ac_now();
    t->fm += t3 - t2;
    t->fm_steps = o->steps;

    if (report(o, "vocoder", 0, 1)) return AC_ERR_CANCELLED;
    const int64_t len = (int64_t)F * m->vocoder_cfg.hop;
    float *y = ac_malloc((size_t)len * sizeof *y);
    if (!y) return AC_ERR_NOMEM;
    ac_status s = vevo2_vocoder_forward(m->vocoder, out_mel, (size_t)F, sc, y);
    if (s) {
        free(y);
        return s;
    }
    t->vocoder += ac_now() - t3;
    *wav = y;
    *n_wav = len;
    return AC_OK;
}

ac_status vevo2_convert(vevo2_model *m, const float *source, int64_t n, const float *target, int64_t n_target,
                        const vevo2_convert_options *o, float **wav, int64_t *n_wav, int *shift, vevo2_timings *t)
{
    *wav = NULL;
    *n_wav = 0;
    *shift = 0;
    memset(t, 0, sizeof *t);
    ac_arena a, sc;
    ac_arena_init(&a, 1 << 20);
    ac_arena_init(&sc, 1 << 20);
    ac_status s = convert(m, source, n, target, n_target, o, &a, &sc, wav, n_wav, shift, t);
    ac_arena_free(&a);
    ac_arena_free(&sc);
    return s;
}
