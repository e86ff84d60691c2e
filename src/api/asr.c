/* The public ASR API: loading a package, and the driver that streams audio
 * through the long-audio splitter chunk by chunk (bounded memory). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/reader.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/progress.h"
#include "models/hviske_asr/transcribe.h"

struct ac_asr {
    hviske_model *model;
    ac_arena arena;
};

void ac_asr_options_default(ac_asr_options *o)
{
    *o = (ac_asr_options){.language = "da", .punctuation = 1, .beam_size = 1, .length_penalty = 1.0f,
                          .temperature = 0, .top_k = 50, .top_p = 1.0f, .seed = 0, .max_new_tokens = 256,
                          .prompt_prefix = 1};
}

ac_status ac_asr_load(const char *path, ac_asr **out)
{
    *out = NULL;
    ac_asr *a = ac_calloc(1, sizeof *a);
    if (!a) return AC_ERR_NOMEM;
    ac_status s = hviske_load(path, &a->model);
    if (s) {
        free(a);
        return s;
    }
    ac_arena_init(&a->arena, 16u << 20);
    *out = a;
    return AC_OK;
}

const char *ac_asr_family(const ac_asr *a) { (void)a; return "hviske_asr"; }

void ac_asr_free(ac_asr *a)
{
    if (!a) return;
    hviske_free(a->model);
    ac_arena_free(&a->arena);
    free(a);
}

void ac_asr_result_free(ac_asr_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_segments; i++) {
        free(r->segments[i].text);
        free(r->segments[i].tokens);
    }
    free(r->segments);
    free(r->text);
    memset(r, 0, sizeof *r);
}

static ac_status add_segment(ac_asr_result *r, double start, double end, hviske_chunk_result *c)
{
    ac_asr_segment *v = realloc(r->segments, (r->n_segments + 1) * sizeof *v);
    if (!v) return ac_error(AC_ERR_NOMEM, "out of memory");
    r->segments = v;
    /* the chunk's text without surrounding white space */
    char *t = c->text, *e = t + strlen(t);
    while (*t && isspace((unsigned char)*t)) t++;
    while (e > t && isspace((unsigned char)e[-1])) e--;
    memmove(c->text, t, (size_t)(e - t));
    c->text[e - t] = 0;
    v[r->n_segments++] = (ac_asr_segment){start, end, c->text, c->tokens, c->n_tokens,
                                          c->n_tokens ? c->logprob / (c->n_tokens + 1) : c->logprob};
    c->text = NULL;
    c->tokens = NULL;
    r->timings.frontend += c->t_frontend;
    r->timings.encoder += c->t_encoder;
    r->timings.prefill += c->t_prefill;
    r->timings.decode += c->t_decode;
    r->timings.decode_steps += c->steps;
    return AC_OK;
}

/* Joins non-empty chunk texts with a space (no space for ja and zh). */
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

static ac_status check_options(const ac_asr_options *o)
{
    if (!o->language || !o->language[0]) return ac_error(AC_ERR_ARG, "no language given");
    if (o->max_new_tokens < 1) return ac_error(AC_ERR_ARG, "max_new_tokens must be at least 1");
    return AC_OK;
}

static ac_status run(ac_asr *a, ac_audio_reader *r, const ac_asr_options *o, ac_asr_result *out)
{
    const hviske_config *c = &a->model->cfg;
    hviske_options ho = {o->language, o->punctuation, o->prompt_prefix,
                         {o->max_new_tokens, o->min_new_tokens, o->beam_size, o->length_penalty, o->temperature,
                          o->top_k, o->top_p, o->seed}};
    int64_t chunk = (int64_t)(c->max_clip_s * c->sample_rate + 0.5);
    size_t cap = (size_t)chunk + 1;
    float *buf = ac_malloc(cap * sizeof *buf);
    if (!buf) return AC_ERR_NOMEM;
    const ac_audio_info *info = ac_audio_reader_info(r);
    ac_progress prog;
    ac_progress_begin(&prog, "transcribe", (double)info->frames / info->sample_rate);
    int64_t idx = 0, avail = 0;
    int at_end = 0;
    ac_status s = AC_OK;
    for (;;) {
        /* fill to one sample past a full chunk: that tells whether the audio ends within it */
        while (!at_end && (size_t)avail < cap) {
            size_t got;
            if ((s = ac_audio_read(r, buf + avail, cap - (size_t)avail, &got))) break;
            if (got == 0) at_end = 1;
            avail += (int64_t)got;
        }
        if (s || (at_end && avail == 0)) break;
        int64_t end = hviske_split(c, buf, idx, avail, at_end), n = end - idx;
        hviske_chunk_result cr;
        ac_arena_reset(&a->arena);
        if ((s = hviske_transcribe_chunk(a->model, buf, n, &ho, &a->arena, &cr))) break;
        s = add_segment(out, (double)idx / c->sample_rate, (double)end / c->sample_rate, &cr);
        hviske_chunk_result_free(&cr);
        if (s) break;
        ac_progress_update(&prog, (double)end / c->sample_rate);
        memmove(buf, buf + n, (size_t)(avail - n) * sizeof *buf);
        avail -= n;
        idx = end;
        if (at_end && avail == 0) break;
    }
    ac_progress_end(&prog);
    free(buf);
    out->duration = (double)idx / c->sample_rate;
    return s ? s : join(out, o->language);
}

/* Runs an opened reader (closed here); a failure leaves OUT empty. */
static ac_status transcribe(ac_asr *a, ac_audio_reader *r, const ac_asr_options *opt, ac_asr_result *out)
{
    ac_asr_options def;
    if (!opt) ac_asr_options_default(&def), opt = &def;
    ac_status s = check_options(opt);
    if (!s) s = run(a, r, opt, out);
    ac_audio_close(r);
    if (s) ac_asr_result_free(out);
    return s;
}

ac_status ac_asr_transcribe_file(ac_asr *a, const char *file, const ac_asr_options *opt, ac_asr_result *out)
{
    memset(out, 0, sizeof *out);
    ac_audio_reader *r;
    AC_TRY(ac_audio_open_file(file, a->model->cfg.sample_rate, &r));
    ac_status s = transcribe(a, r, opt, out);
    return s ? ac_error_prefix(s, "%s", file) : AC_OK;
}

ac_status ac_asr_transcribe_pcm(ac_asr *a, const float *pcm, int64_t frames, int channels, int rate,
                                const ac_asr_options *opt, ac_asr_result *out)
{
    memset(out, 0, sizeof *out);
    ac_audio_reader *r;
    AC_TRY(ac_audio_open_pcm(pcm, frames, channels, rate, a->model->cfg.sample_rate, &r));
    return transcribe(a, r, opt, out);
}
