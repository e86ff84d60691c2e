/* The public ASR call: opens the audio, asks the VAD (when given) for the
 * speech spans, lets the family transcribe the stream chunk by chunk
 * (family.h), and gathers the chunks into segments and one text. Knows no
 * family. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/input.h"
#include "base/error.h"
#include "base/progress.h"

void ac_asr_options_init(ac_asr_options *o, size_t size)
{
    ac_asr_options d = {.struct_size = size, .language = "da", .punctuation = 1, .beam_size = 0,
                        .length_penalty = 1.0f, .temperature = 0, .top_k = 50, .top_p = 1.0f, .seed = 0,
                        .max_new_tokens = 256, .prompt_prefix = 1};
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

/* A result and its timings, allocated (and freed) as one block. */
typedef struct {
    ac_asr_result r;
    ac_asr_timings t;
} result_block;

void ac_asr_result_free(ac_asr_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_segments; i++) {
        free(r->segments[i].text);
        free(r->segments[i].tokens);
    }
    for (size_t i = 0; i < r->n_words; i++) free(r->words[i].text);
    free(r->words);
    free(r->segments);
    free(r->text);
    free(r);
}

/* O as a whole struct of this build (defaults filled in), against M. */
static ac_status check_options(const ac_model *m, const ac_asr_options *o)
{
    if (!o->language || !o->language[0]) return ac_error(AC_ERR_ARG, "no language given");
    if (o->max_new_tokens < 1) return ac_error(AC_ERR_ARG, "max_new_tokens must be at least 1");
    if (o->vad) AC_TRY(ac_model_check_task(o->vad, AC_TASK_VAD, "ac_asr_options.vad"));
    return m->family->asr->check ? m->family->asr->check(m->impl, o) : AC_OK;
}

/* The caller's OPT (NULL: the defaults) as a whole struct in *O, checked. */
static ac_status take_options(const ac_model *m, const ac_asr_options *user, ac_asr_options *o, const char *what)
{
    AC_TRY(ac_model_check_task(m, AC_TASK_ASR, what));
    ac_asr_options_default(o);
    if (user) AC_TRY(ac_struct_take(o, sizeof *o, user, "ac_asr_options"));
    return check_options(m, o);
}

ac_status ac_asr_check_options(const ac_model *m, const ac_asr_options *opt)
{
    ac_error_clear();
    ac_asr_options o;
    return take_options(m, opt, &o, "ac_asr_check_options");
}

/* One transcription being gathered. With a VAD, SPANS are its padded
 * segments at the model's rate and SPEECH the same segments unpadded. */
typedef struct {
    const ac_asr_options *o;
    int rate;
    ac_progress prog;
    ac_asr_result *out;
    ac_asr_timings *timings;   /* OUT's */
    const int64_t *spans, *speech;
    size_t n_spans, at;   /* AT: the span the last chunk was in */
    double margin;        /* seconds kept around the speech */
} gather;

/* The times a chunk starting at sample START may have: the padding is for
 * the recognizer, not the listener (DTW puts a chunk's first word at its
 * first frame), so with a VAD they are its speech with the VAD's own default
 * margin; [0, inf) without one. */
static void speech_bounds(gather *g, int64_t start, double *lo, double *hi)
{
    *lo = 0, *hi = 1e300;
    if (!g->n_spans) return;
    while (g->at + 1 < g->n_spans && g->spans[2 * (g->at + 1)] <= start) g->at++;
    *lo = (double)g->speech[2 * g->at] / g->rate - g->margin;
    *hi = (double)g->speech[2 * g->at + 1] / g->rate + g->margin;
}

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* The chunk's words appended to R's, at times in the input within [LO, HI].
 * Takes their texts. */
static ac_status take_words(ac_asr_result *r, const ac_asr_chunk *c, double offset, double lo, double hi)
{
    ac_asr_word *w = c->n_words ? realloc(r->words, (r->n_words + (size_t)c->n_words) * sizeof *w) : r->words;
    if (c->n_words && !w) {
        for (int i = 0; i < c->n_words; i++) free(c->words[i].text);
        return ac_error(AC_ERR_NOMEM, "out of memory");
    }
    r->words = w;
    for (int i = 0; i < c->n_words; i++)
        w[r->n_words++] = (ac_asr_word){clamp(offset + c->words[i].start, lo, hi),
                                        clamp(offset + c->words[i].end, lo, hi), c->words[i].text, r->n_segments};
    return AC_OK;
}

/* The chunk as the next segment (its text without surrounding white space). */
static ac_status on_chunk(void *user, ac_asr_chunk *c)
{
    gather *g = user;
    ac_asr_result *r = g->out;
    double lo, hi, start = (double)c->start / g->rate, end = (double)c->end / g->rate;
    speech_bounds(g, c->start, &lo, &hi);
    if (lo < start) lo = start;
    if (hi > end) hi = end;
    if (hi < lo) hi = lo;
    ac_status ws = take_words(r, c, start, lo, hi);
    ac_asr_segment *v = ws ? NULL : realloc(r->segments, (r->n_segments + 1) * sizeof *v);
    if (!v) {
        free(c->text);
        free(c->tokens);
        return ws ? ws : ac_error(AC_ERR_NOMEM, "out of memory");
    }
    r->segments = v;
    char *t = c->text, *e = t + strlen(t);
    while (*t && isspace((unsigned char)*t)) t++;
    while (e > t && isspace((unsigned char)e[-1])) e--;
    memmove(c->text, t, (size_t)(e - t));
    c->text[e - t] = 0;
    v[r->n_segments++] = (ac_asr_segment){lo, hi, c->text, c->tokens, c->n_tokens, c->avg_logprob};
    g->timings->frontend += c->timings.frontend;
    g->timings->encoder += c->timings.encoder;
    g->timings->prefill += c->timings.prefill;
    g->timings->decode += c->timings.decode;
    g->timings->decode_steps += c->timings.decode_steps;
    ac_progress_update(&g->prog, (double)c->end / g->rate);
    if (g->o->on_segment && g->o->on_segment(&v[r->n_segments - 1], g->o->user))
        return ac_error(AC_ERR_CANCELLED, "transcription stopped by the caller");
    return AC_OK;
}

/* Joins non-empty segment texts with a space (no space for ja and zh). */
static ac_status join(ac_asr_result *r, const char *language)
{
    const char *sep = strcmp(language, "ja") == 0 || strcmp(language, "zh") == 0 ? "" : " ";
    size_t n = 1;
    for (size_t i = 0; i < r->n_segments; i++) n += strlen(r->segments[i].text) + 1;
    r->text = ac_malloc(n);
    if (!r->text) return AC_ERR_NOMEM;
    r->text[0] = 0;
    for (size_t i = 0; i < r->n_segments; i++) {
        if (!r->segments[i].text[0]) continue;
        if (r->text[0]) strcat(r->text, sep);
        strcat(r->text, r->segments[i].text);
    }
    return AC_OK;
}

void ac_asr_vad_options_init(ac_vad_options *o, size_t size)
{
    ac_vad_options d;
    ac_vad_options_default(&d);
    /* Silero's onset lags the speech by a chunk or two and its 30 ms padding
     * cuts first and last phonemes: the recognizer needs the margins it was
     * trained with (faster-whisper pads 400 ms). Pauses of half a second end
     * a segment, so segments follow utterances; longer speech is split at its
     * longest pause before the family's own chunk length. A one-word answer
     * can be under Silero's 250 ms minimum: no minimum (faster-whisper's). */
    d.speech_pad_ms = 400;
    d.min_silence_ms = 500;
    d.min_speech_ms = 0;
    d.max_speech_s = 30;
    d.struct_size = size;
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

/* The VAD's padded segments of IN as spans at RATE in *SPANS, followed by
 * the same unpadded; *DURATION from the VAD. */
static ac_status vad_spans(const ac_audio_input *in, const ac_asr_options *o, int rate, int64_t **spans,
                           size_t *n, double *duration)
{
    ac_vad_result *vr;
    ac_vad_options vo;
    ac_asr_vad_options_default(&vo);
    AC_TRY(ac_vad_run(o->vad, in, o->vad_options ? o->vad_options : &vo, &vr));
    size_t k = vr->n_segments;
    *n = k;
    *spans = ac_malloc((4 * k + 1) * sizeof **spans);
    for (size_t i = 0; *spans && i < k; i++) {
        (*spans)[2 * i] = vr->segments[i].start * rate / vr->sample_rate;
        (*spans)[2 * i + 1] = vr->segments[i].end * rate / vr->sample_rate;
        (*spans)[2 * (k + i)] = vr->speech[i].start * rate / vr->sample_rate;
        (*spans)[2 * (k + i) + 1] = vr->speech[i].end * rate / vr->sample_rate;
    }
    *duration = vr->sample_rate ? (double)vr->n_samples / vr->sample_rate : 0;
    ac_vad_result_free(vr);
    return *spans ? AC_OK : AC_ERR_NOMEM;
}

static ac_status transcribe(ac_model *m, const ac_audio_input *in, const ac_asr_options *o, ac_asr_result *out,
                            ac_asr_timings *timings)
{
    int rate = m->family->rate(m->impl);
    ac_audio_reader *r;
    AC_TRY(ac_input_open(in, rate, &r));
    gather g = {.o = o, .rate = rate, .out = out, .timings = timings};
    int64_t *spans = NULL, n_read = 0;
    size_t n_spans = 0;
    ac_status s = AC_OK;
    if (o->vad) {
        s = vad_spans(in, o, rate, &spans, &n_spans, &out->duration);
        if (!s && n_spans == 0) {   /* no speech: nothing to transcribe */
            ac_audio_close(r);
            free(spans);
            return join(out, o->language);
        }
        ac_vad_options d;
        ac_vad_options_default(&d);
        g.spans = spans, g.speech = spans + 2 * n_spans, g.n_spans = n_spans;
        g.margin = d.speech_pad_ms / 1000.0;
    }
    ac_scratch *scratch = s ? NULL : ac_scratch_take(&m->scratch);
    if (!s && !scratch) s = AC_ERR_NOMEM;
    if (!s) {
        const ac_audio_info *info = ac_audio_reader_info(r);
        ac_progress_begin(&g.prog, "transcribe", (double)info->frames / info->sample_rate);
        s = m->family->asr->transcribe(m->impl, r, spans, n_spans, o, scratch, on_chunk, &g, &n_read);
        ac_progress_end(&g.prog);
        if (!o->vad) out->duration = (double)n_read / rate;
    }
    ac_scratch_give(scratch);
    free(spans);
    ac_audio_close(r);
    return s ? s : join(out, o->language);
}

static ac_status run(ac_model *m, const ac_audio_input *in, const ac_asr_options *user, ac_asr_result **out)
{
    ac_asr_options o;
    AC_TRY(take_options(m, user, &o, "ac_asr_transcribe"));
    result_block *b = ac_calloc(1, sizeof *b);
    if (!b) return AC_ERR_NOMEM;
    ac_asr_result *res = &b->r;
    res->struct_size = sizeof *res;
    b->t.struct_size = sizeof b->t;
    res->timings = &b->t;
    ac_status s = transcribe(m, in, &o, res, &b->t);
    if (s) {
        ac_asr_result_free(res);
        return s;
    }
    *out = res;
    return AC_OK;
}

ac_status ac_asr_transcribe(ac_model *m, const ac_audio_input *in, const ac_asr_options *opt, ac_asr_result **out)
{
    ac_error_clear();
    *out = NULL;
    return ac_input_error(in, run(m, in, opt, out));
}
