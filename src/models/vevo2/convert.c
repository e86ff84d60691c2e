/* The stages every Vevo2 route shares (tokens of a clip, the timbre
 * prompt, FM and vocoder) and path S, the style-preserved voice and
 * singing conversion (spec vevo2.md §3, Amphion inference_fm). */
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

ac_status vevo2_check_clip(const float *x, int64_t n, int rate, const char *what)
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

int vevo2_report(const vevo2_options *o, const char *stage, int done, int total)
{
    return o->progress && o->progress(o->progress_user, stage, done, total);
}

/* The chromagram [T][C] of X[n] shifted by SHIFT semitones, over the unshifted frame count T. */
static ac_status chroma_of(vevo2_model *m, const float *x, int64_t n, int shift, int T, int C, ac_arena *a,
                           float **out, vevo2_timings *t)
{
    double t0 = ac_now();
    const float *y = x;
    if (shift) {
        float *shifted = ac_arena_floats(a, (size_t)n);
        if (!shifted) return AC_ERR_NOMEM;
        AC_TRY(ac_pitch_shift(x, n, m->mel.sample_rate, shift, shifted));
        y = shifted;
    }
    double t1 = ac_now();
    t->pitch += t1 - t0;
    float *chroma = ac_arena_floats(a, (size_t)T * C);
    if (!chroma) return AC_ERR_NOMEM;
    ac_chroma ch;
    AC_TRY(ac_chroma_init(&ch, m->mel.sample_rate, m->mel.n_fft, m->mel.hop, C));
    ac_status s = ac_chroma_stft(&ch, y, n, T, a, chroma, NULL);
    ac_chroma_free(&ch);
    t->chroma += ac_now() - t1;
    *out = chroma;
    return s;
}

/* The ids of T frames through tokenizer C (WHISPER NULL for the prosody one)
 * into OUT; A is reset after. */
static ac_status encode(const vevo2_coco *c, const float *whisper, const float *chroma, int T, ac_arena *out,
                        ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t)
{
    double t0 = ac_now();
    size_t k = vevo2_coco_tokens(&c->cfg, (size_t)T);
    int32_t *res = ac_arena_alloc(out, k * sizeof *res);
    float *lat = ac_arena_floats(a, k * (size_t)c->cfg.codebook_dim);
    if (!res || !lat) return AC_ERR_NOMEM;
    AC_TRY(vevo2_coco_encode(c, whisper, chroma, (size_t)T, a, lat, res, NULL));
    t->tokenizer += ac_now() - t0;
    ac_arena_reset(a);
    *ids = res;
    *n_ids = (int)k;
    return AC_OK;
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
    AC_TRY(whisper_encode_audio(m->whisper, x16, (size_t)n16, NULL, a, enc));
    AC_TRY(whisper_features(wc, enc, T, m->stats, feat));
    double t1 = ac_now();
    t->whisper += t1 - t0;

    /* the chromagram of the shifted audio, over the unshifted frame count */
    float *chroma;
    AC_TRY(chroma_of(m, x, n, shift, T, m->content_cfg.chroma_dim, a, &chroma, t));
    return encode(m->content, feat, chroma, T, out, a, ids, n_ids, t);
}

ac_status vevo2_prosody_ids(vevo2_model *m, const float *x, int64_t n, int shift, double ratio, ac_arena *out,
                            ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t)
{
    const int T = (int)(n / m->mel.hop), C = m->prosody_cfg.chroma_dim;
    float *chroma;
    AC_TRY(chroma_of(m, x, n, shift, T, C, a, &chroma, t));
    double t0 = ac_now();
    int Tr = T;
    if (ratio != 1.0) {
        /* upstream: F.interpolate(size=int(T * ratio), mode="linear") */
        double want = (double)T * ratio;
        if (!(want >= 1.0) || want > 1e7)
            return ac_error(AC_ERR_ARG, "target duration: %.4g times the prosody reference's %d frames is no frame",
                            ratio, T);
        Tr = (int)want;
        float *stretched = ac_arena_floats(a, (size_t)Tr * C);
        if (!stretched) return AC_ERR_NOMEM;
        AC_TRY(ac_frames_interp_linear(chroma, T, C, Tr, stretched));
        chroma = stretched;
    }
    t->chroma += ac_now() - t0;
    return encode(m->prosody, NULL, chroma, Tr, out, a, ids, n_ids, t);
}

ac_status vevo2_estimate_shift(const vevo2_model *m, const float *x, int64_t n, const float *timbre, int64_t nt,
                               int *shift)
{
    double f_x, f_t;
    AC_TRY(ac_f0_median(x, n, m->mel.sample_rate, &f_x, NULL));
    AC_TRY(ac_f0_median(timbre, nt, m->mel.sample_rate, &f_t, NULL));
    *shift = ac_semitone_shift(f_t, f_x);
    return AC_OK;
}

static int on_step(void *user, int step, int steps) { return vevo2_report(user, "fm", step, steps); }

ac_status vevo2_timbre_prepare(vevo2_model *m, const float *x, int64_t n, ac_arena *out, ac_arena *a,
                               vevo2_timbre *tb, vevo2_timings *t)
{
    AC_TRY(vevo2_content_style_ids(m, x, n, 0, out, a, &tb->ids, &tb->n_ids, t));
    double t0 = ac_now();
    tb->frames = (int)vevo2_timbre_mel_frames(&m->timbre, n);
    tb->mel = ac_arena_floats(out, (size_t)tb->frames * m->mel.n_mels);
    if (!tb->mel) return AC_ERR_NOMEM;
    AC_TRY(vevo2_timbre_mel_compute(&m->timbre, x, n, tb->mel));
    t->timbre_mel += ac_now() - t0;
    return AC_OK;
}

ac_status vevo2_synthesize(vevo2_model *m, const vevo2_timbre *tb, const int32_t *gen, int n_gen,
                           const vevo2_options *o, uint64_t seed, ac_arena *keep, ac_arena *a, float **wav,
                           int64_t *n_wav, vevo2_timings *t)
{
    const int mel = m->mel.n_mels;
    double t0 = ac_now();
    /* The stages before took more scratch than the flow matching and the
     * vocoder need (Whisper over its 1,500 frames: 77 MB at full size); its
     * pages go back rather than stay resident beside the vocoder's weights. */
    ac_arena_free(a);
    /* the condition: the timbre's tokens, then the generated or converted ones */
    const int n_ids = tb->n_ids + n_gen, Lc = n_ids * m->fm_cfg.cond_scale_factor;
    const int F = vevo2_fm_frames(Lc, tb->frames);
    if (F <= 0) return ac_error(AC_ERR_ARG, "too short: the flow matching would make %d frames", F);
    int *ids = ac_arena_alloc(keep, (size_t)n_ids * sizeof *ids);
    float *cond = ac_arena_floats(keep, (size_t)Lc * m->fm_cfg.hidden);
    float *out_mel = ac_arena_floats(keep, (size_t)F * mel);
    if (!ids || !cond || !out_mel) return AC_ERR_NOMEM;
    for (int i = 0; i < tb->n_ids; i++) ids[i] = tb->ids[i];
    for (int i = 0; i < n_gen; i++) ids[tb->n_ids + i] = gen[i];
    if (o->noise && o->n_noise != (size_t)F * mel)
        return ac_error(AC_ERR_ARG,
                        "the injected noise has %zu values; this request needs %d frames x %d mels = %zu "
                        "(%zu bytes of float32)",
                        o->n_noise, F, mel, (size_t)F * mel, (size_t)F * mel * 4);
    AC_TRY(vevo2_fm_cond(m->fm, ids, n_ids, cond, a));
    ac_arena_reset(a);
    vevo2_fm_options fo = vevo2_fm_defaults();
    fo.steps = o->steps;
    fo.seed = seed;
    fo.noise = o->noise;
    fo.progress = on_step;
    fo.progress_user = (void *)o;
    AC_TRY(vevo2_fm_sample(m->fm, cond, Lc, tb->mel, tb->frames, &fo, out_mel, a));
    ac_arena_reset(a);
    ac_trace_put(&o->trace, "fm_mel", -1, out_mel, (size_t)F * mel * sizeof *out_mel);
    double t1 = ac_now();
    t->fm += t1 - t0;
    t->fm_steps += o->steps;

    if (vevo2_report(o, "vocoder", 0, 1)) return AC_ERR_CANCELLED;
    const int64_t len = (int64_t)F * m->vocoder_cfg.hop;
    float *y = ac_malloc((size_t)len * sizeof *y);
    if (!y) return AC_ERR_NOMEM;
    ac_status s = vevo2_vocoder_forward(m->vocoder, out_mel, (size_t)F, a, y);
    ac_arena_reset(a);
    if (s) {
        free(y);
        return s;
    }
    t->vocoder += ac_now() - t1;
    *wav = y;
    *n_wav = len;
    return AC_OK;
}

ac_status vevo2_pace(const vevo2_options *o, float **wav, int64_t *n)
{
    if (o->speed == 1.0) return AC_OK;
    int64_t len = ac_time_stretch_length(*n, o->speed);
    float *y = ac_malloc((size_t)(len > 0 ? len : 1) * sizeof *y);
    if (!y) return AC_ERR_NOMEM;
    ac_status s = ac_time_stretch(*wav, *n, o->speed, y);
    if (s) {
        free(y);
        return s;
    }
    free(*wav);
    *wav = y;
    *n = len;
    return AC_OK;
}

static void trace_ids(const vevo2_options *o, const char *name, const int32_t *ids, int n)
{
    ac_trace_put(&o->trace, name, -1, ids, (size_t)n * sizeof *ids);
}

/* Path S. Results that outlive a stage come from A, each stage's scratch
 * from S, reset after it: the peak is the largest stage, not their sum. */
static ac_status convert(vevo2_model *m, const vevo2_refs *r, const vevo2_options *o, int use_pitch, ac_arena *a,
                         ac_arena *sc, vevo2_output *out)
{
    const vevo2_clip *src = &r->source, *tgt = &r->timbre;
    const int rate = m->mel.sample_rate;
    AC_TRY(vevo2_check_clip(src->x, src->n, rate, "source"));
    AC_TRY(vevo2_check_clip(tgt->x, tgt->n, rate, "target voice"));
    if (vevo2_report(o, "load", 0, 1)) return AC_ERR_CANCELLED;
    double t0 = ac_now();
    AC_TRY(vevo2_load_conversion(m));
    out->t.parts += ac_now() - t0;

    t0 = ac_now();
    if (use_pitch && o->pitch_mode == VEVO2_PITCH_FIXED) out->shift = o->pitch_shift;
    else if (use_pitch) AC_TRY(vevo2_estimate_shift(m, src->x, src->n, tgt->x, tgt->n, &out->shift));
    out->t.pitch += ac_now() - t0;

    if (vevo2_report(o, "tokenizer", 0, 2)) return AC_ERR_CANCELLED;
    int32_t *src_ids;
    int n_src;
    AC_TRY(vevo2_content_style_ids(m, src->x, src->n, out->shift, a, sc, &src_ids, &n_src, &out->t));
    trace_ids(o, "source_ids", src_ids, n_src);
    if (vevo2_report(o, "tokenizer", 1, 2)) return AC_ERR_CANCELLED;
    vevo2_timbre tb;
    AC_TRY(vevo2_timbre_prepare(m, tgt->x, tgt->n, a, sc, &tb, &out->t));
    trace_ids(o, "timbre_ids", tb.ids, tb.n_ids);
    out->t.chunks = 1;
    AC_TRY(vevo2_synthesize(m, &tb, src_ids, n_src, o, o->seed, a, sc, &out->wav, &out->n, &out->t));
    return vevo2_pace(o, &out->wav, &out->n);
}

ac_status vevo2_convert(vevo2_model *m, const vevo2_refs *r, const vevo2_options *o, int use_pitch,
                        vevo2_output *out)
{
    ac_arena a, sc;
    ac_arena_init(&a, 1 << 20);
    ac_arena_init(&sc, 1 << 20);
    ac_status s = convert(m, r, o, use_pitch, &a, &sc, out);
    ac_arena_free(&a);
    ac_arena_free(&sc);
    return s;
}
