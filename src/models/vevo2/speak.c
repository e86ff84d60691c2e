/* Path A of spec vevo2.md §3 (Amphion inference_ar_and_fm): the prosody
 * and style references' tokens and the text make a chat prompt; the AR
 * model continues it with content-style tokens, which the flow matching
 * and the vocoder turn into audio in the timbre's voice. Long text is
 * spoken chunk by chunk with the same references, their tokens computed
 * once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/timing.h"
#include "models/vevo2/prompt.h"
#include "models/vevo2/vevo2.h"
#include "text/chunk.h"

/* The references' tokens, computed once per request. */
typedef struct {
    int32_t *prosody, *style;
    int n_prosody, n_style;
    vevo2_timbre timbre;
} tokens;

static void trace(const vevo2_options *o, const char *name, const void *data, size_t bytes)
{
    ac_trace_put(&o->trace, name, -1, data, bytes);
}

static ac_status shift_of(vevo2_model *m, const vevo2_clip *x, const vevo2_clip *timbre, const vevo2_options *o,
                          int fixed, int *shift, vevo2_timings *t)
{
    *shift = 0;
    if (!x->n) return AC_OK;
    if (o->pitch_mode == VEVO2_PITCH_FIXED) {
        *shift = fixed;
        return AC_OK;
    }
    double t0 = ac_now();
    /* the same clip needs no shift (upstream compares the paths) */
    ac_status s = x->x == timbre->x && x->n == timbre->n ? AC_OK
                                                         : vevo2_estimate_shift(m, x->x, x->n, timbre->x, timbre->n, shift);
    t->pitch += ac_now() - t0;
    return s;
}

static ac_status reference_tokens(vevo2_model *m, const vevo2_refs *r, const vevo2_options *o, int use_prosody,
                                  int use_pitch, ac_arena *a, ac_arena *sc, tokens *k, vevo2_output *out)
{
    vevo2_timings *t = &out->t;
    const int rate = m->mel.sample_rate;
    if (use_pitch) {
        AC_TRY(shift_of(m, &r->prosody, &r->timbre, o, o->pitch_shift, &out->shift, t));
        AC_TRY(shift_of(m, &r->style, &r->timbre, o, o->style_pitch_shift, &out->style_shift, t));
    }
    if (vevo2_report(o, "tokenizer", 0, 3)) return AC_ERR_CANCELLED;
    if (use_prosody) {
        /* the style reference's prosody first, then the prosody reference's (stretched to the target duration) */
        int32_t *style_p = NULL, *p;
        int n_style_p = 0, n_p;
        if (r->style.n)
            AC_TRY(vevo2_prosody_ids(m, r->style.x, r->style.n, out->style_shift, 1.0, a, sc, &style_p, &n_style_p, t));
        double ratio = o->target_duration > 0 ? o->target_duration / ((double)r->prosody.n / rate) : 1.0;
        AC_TRY(vevo2_prosody_ids(m, r->prosody.x, r->prosody.n, out->shift, ratio, a, sc, &p, &n_p, t));
        k->n_prosody = n_style_p + n_p;
        k->prosody = ac_arena_alloc(a, (size_t)k->n_prosody * sizeof *k->prosody);
        if (!k->prosody) return AC_ERR_NOMEM;
        if (n_style_p) memcpy(k->prosody, style_p, (size_t)n_style_p * sizeof *p);
        memcpy(k->prosody + n_style_p, p, (size_t)n_p * sizeof *p);
        trace(o, "prosody_ids", k->prosody, (size_t)k->n_prosody * sizeof *p);
    }
    if (vevo2_report(o, "tokenizer", 1, 3)) return AC_ERR_CANCELLED;
    AC_TRY(vevo2_timbre_prepare(m, r->timbre.x, r->timbre.n, a, sc, &k->timbre, t));
    trace(o, "timbre_ids", k->timbre.ids, (size_t)k->timbre.n_ids * sizeof *k->timbre.ids);
    if (vevo2_report(o, "tokenizer", 2, 3)) return AC_ERR_CANCELLED;
    if (r->style.n) {
        /* the target voice as its own style (speech from text): the same tokens, computed once */
        if (r->style.x == r->timbre.x && r->style.n == r->timbre.n && out->style_shift == 0) {
            k->style = k->timbre.ids;
            k->n_style = k->timbre.n_ids;
        } else {
            AC_TRY(vevo2_content_style_ids(m, r->style.x, r->style.n, out->style_shift, a, sc, &k->style,
                                           &k->n_style, t));
        }
        trace(o, "style_ids", k->style, (size_t)k->n_style * sizeof *k->style);
    }
    return AC_OK;
}

/* The content-style tokens' rate (contentstyle_fvq16384_12.5hz): 500 tokens are 40 s. */
#define TOKENS_PER_S 12.5

/* The most AR tokens a chunk of TEXT can need: slow speech, half a second
 * a character after a two-second lead, or (when the route follows a
 * prosody reference) that reference's PROSODY_S seconds and the lead. A
 * random or confused model that never ends a chunk stops here, not at the
 * request's max_new_tokens. */
static int chunk_budget(const char *text, double prosody_s)
{
    double chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) chars += (*p & 0xc0) != 0x80;
    double s = 2.0 + fmax(0.5 * chars, prosody_s);
    return (int)ceil(s * TOKENS_PER_S);
}

/* The AR tokens chunk I may make. */
static int chunk_tokens(const ac_text_chunks *c, int i, double prosody_s, const vevo2_options *o)
{
    int b = chunk_budget(c->text[i], prosody_s);
    return o->max_new_tokens < b ? o->max_new_tokens : b;
}

/* The work of the whole text, decided before any of it is done: no chunk
 * asked for more tokens than its text can need, and no more audio than
 * o->max_seconds in all. */
static ac_status check_work(const ac_text_chunks *c, double prosody_s, const vevo2_options *o)
{
    double seconds = 0;
    for (int i = 0; i < c->n; i++) {
        int b = chunk_budget(c->text[i], prosody_s);
        if (o->sampler.min_new_tokens > b)
            return ac_error(AC_ERR_ARG, "min tokens %d: more than the text \"%.40s\" can need (at most %d tokens, "
                            "%.1f s)", o->sampler.min_new_tokens, c->text[i], b, b / TOKENS_PER_S);
        seconds += chunk_tokens(c, i, prosody_s, o) / TOKENS_PER_S;
    }
    seconds /= o->speed;
    if (o->max_seconds > 0 && seconds > o->max_seconds)
        return ac_error(AC_ERR_ARG, "the text could make up to %.0f s of audio in %d chunks, more than the limit of "
                        "%.0f s", seconds, c->n, o->max_seconds);
    return AC_OK;
}

static int on_token(void *user, int done, int max) { return vevo2_report(user, "ar", done, max); }

/* The content-style ids the AR model makes for one chunk of text. */
static ac_status generate(vevo2_model *m, const tokens *k, const char *style_text, const char *text,
                          const vevo2_options *o, int use_prosody, int max_tokens, uint64_t seed, ac_arena *a,
                          int32_t **ids,
                          int *n_ids, vevo2_timings *t)
{
    char *prompt = NULL, *cont = NULL;
    int *prompt_ids = NULL;
    size_t n_prompt = 0;
    qwen2_gen_result g = {0};
    ac_status s = vevo2_prompt_text(use_prosody, style_text, text, k->prosody, k->n_prosody, k->style, k->n_style,
                                    &prompt);
    if (!s) trace(o, "prompt", prompt, strlen(prompt));
    if (!s) s = ac_bpe_encode(m->text, prompt, strlen(prompt), &prompt_ids, &n_prompt);
    if (!s) {
        trace(o, "prompt_ids", prompt_ids, n_prompt * sizeof *prompt_ids);
        qwen2_gen_options go = {.sampler = o->sampler, .n_stop = 1, .max_new_tokens = max_tokens,
                                .seed = seed, .uniform = o->uniform, .uniform_ctx = o->uniform_ctx,
                                .progress = on_token, .progress_user = (void *)o};
        go.stop[0] = m->im_end;
        s = qwen2_generate(m->ar, prompt_ids, (int)n_prompt, &go, a, &g);
    }
    if (!s) {
        trace(o, "generated_ids", g.ids, (size_t)g.n * sizeof *g.ids);
        trace(o, "logprobs", g.logprobs, (size_t)g.n * sizeof *g.logprobs);
        t->ar_prefill += g.prefill_s;
        t->ar_decode += g.decode_s;
        t->ar_tokens += g.n;
        s = ac_bpe_decode(m->text, g.ids, (size_t)g.n, 1, &cont, NULL);
    }
    if (!s) s = vevo2_parse_content_style(cont, m->content_cfg.codebook_size, ids, n_ids);
    if (!s && *n_ids == 0) {
        s = ac_error(AC_ERR_MODEL, "the AR model made no content-style token for \"%.60s\" (%d tokens, %s)", text,
                     g.n, g.stopped ? "ended by <|im_end|>" : "the token limit reached");
    }
    if (!s) trace(o, "ids", *ids, (size_t)*n_ids * sizeof **ids);
    free(prompt);
    free(prompt_ids);
    free(cont);
    qwen2_gen_result_free(&g);
    ac_arena_reset(a);
    return s;
}

static ac_status append(float **wav, int64_t *n, const float *x, int64_t k)
{
    float *w = realloc(*wav, (size_t)(*n + k) * sizeof *w);
    if (!w) return ac_error(AC_ERR_NOMEM, "out of memory");
    memcpy(w + *n, x, (size_t)k * sizeof *x);
    *wav = w;
    *n += k;
    return AC_OK;
}

static ac_status speak(vevo2_model *m, const vevo2_refs *r, const ac_text_chunks *chunks, const char *style_text,
                       const vevo2_options *o, int use_prosody, int use_pitch, ac_arena *a, ac_arena *sc,
                       vevo2_output *out)
{
    /* the speech follows the prosody reference (stretched to the target duration) where the route uses it */
    const double prosody_s = !use_prosody || !r->prosody.n ? 0
                             : o->target_duration > 0 ? o->target_duration
                                                      : (double)r->prosody.n / m->mel.sample_rate;
    AC_TRY(check_work(chunks, prosody_s, o));
    const int rate = m->mel.sample_rate;
    AC_TRY(vevo2_check_clip(r->timbre.x, r->timbre.n, rate, "target voice"));
    if (r->style.n) AC_TRY(vevo2_check_clip(r->style.x, r->style.n, rate, "style reference"));
    if (r->prosody.n) AC_TRY(vevo2_check_clip(r->prosody.x, r->prosody.n, rate, "prosody reference"));
    if (o->noise && chunks->n > 1)
        return ac_error(AC_ERR_ARG, "injected noise is for one text chunk; the text makes %d", chunks->n);
    if (vevo2_report(o, "load", 0, 1)) return AC_ERR_CANCELLED;
    double t0 = ac_now();
    AC_TRY(vevo2_load_conversion(m));
    AC_TRY(vevo2_load_ar(m));
    out->t.parts += ac_now() - t0;
    vevo2_options po = *o;
    if (po.sampler.repetition_penalty < 0) po.sampler.repetition_penalty = m->ar->gen.repetition_penalty;
    o = &po;
    tokens k = {0};
    AC_TRY(reference_tokens(m, r, o, use_prosody, use_pitch, a, sc, &k, out));
    out->t.chunks = chunks->n;
    ac_arena chunk;
    ac_arena_init(&chunk, 1 << 20);
    ac_status s = AC_OK;
    for (int i = 0; i < chunks->n && !s; i++) {
        int32_t *ids = NULL;
        int n_ids = 0;
        float *wav = NULL;
        int64_t n_wav = 0;
        const uint64_t seed = o->seed + (uint64_t)i;
        if (vevo2_report(o, "chunk", i, chunks->n)) s = AC_ERR_CANCELLED;
        if (!s) s = generate(m, &k, style_text, chunks->text[i], o, use_prosody, chunk_tokens(chunks, i, prosody_s, o), seed, sc,
                     &ids, &n_ids, &out->t);
        if (!s) s = vevo2_synthesize(m, &k.timbre, ids, n_ids, o, seed, &chunk, sc, &wav, &n_wav, &out->t);
        if (!s) s = vevo2_pace(o, &wav, &n_wav);
        if (!s && o->on_audio && o->on_audio(o->audio_user, wav, n_wav, i, chunks->n)) s = AC_ERR_CANCELLED;
        if (!s) s = append(&out->wav, &out->n, wav, n_wav);
        free(ids);
        free(wav);
        ac_arena_reset(&chunk);
    }
    ac_arena_free(&chunk);
    return s;
}

ac_status vevo2_speak(vevo2_model *m, const vevo2_refs *r, const char *text, const vevo2_options *o,
                      int use_prosody, int use_pitch, vevo2_output *out)
{
    const char *style_text = r->style_text;
    if (!text) return ac_error(AC_ERR_ARG, "route %s: no text to say", o->route->name);
    ac_text_chunks chunks;
    AC_TRY(ac_text_chunk(text, o->chunk_units, &chunks));
    if (r->style.n && (!style_text || !*style_text))
        ac_warn("the style reference has no transcript: the speech may repeat or garble it");
    ac_arena a, sc;
    ac_arena_init(&a, 1 << 20);
    ac_arena_init(&sc, 1 << 20);
    ac_status s = speak(m, r, &chunks, style_text, o, use_prosody, use_pitch, &a, &sc, out);
    ac_arena_free(&a);
    ac_arena_free(&sc);
    ac_text_chunks_free(&chunks);
    return s;
}
