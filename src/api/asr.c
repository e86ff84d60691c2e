/* The public ASR API: loading a package, and the driver that streams audio
 * through the long-audio splitter chunk by chunk (bounded memory), optionally
 * only the speech segments a VAD finds. */
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
    hviske_model *model;   /* read-only once loaded */
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
    *out = a;
    return AC_OK;
}

const char *ac_asr_family(const ac_asr *a) { (void)a; return "hviske_asr"; }

void ac_asr_free(ac_asr *a)
{
    if (!a) return;
    hviske_free(a->model);
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

/* Where the audio comes from. The VAD cut reads it twice, so it is opened
 * once per pass. */
typedef struct {
    const char *file;
    const void *data;
    size_t size;
    const float *pcm;
    int64_t frames;
    int channels, rate;
} source;

static ac_status source_open(const source *src, int rate, ac_audio_reader **r)
{
    if (src->file) return ac_audio_open_file(src->file, rate, r);
    if (src->data) return ac_audio_open_memory(src->data, src->size, "upload", rate, r);
    return ac_audio_open_pcm(src->pcm, src->frames, src->channels, src->rate, rate, r);
}

static ac_status source_vad(const source *src, ac_vad *v, const ac_vad_options *o, ac_vad_result *res)
{
    if (src->file) return ac_vad_run_file(v, src->file, o, res);
    if (src->data) return ac_vad_run_memory(v, src->data, src->size, o, res);
    return ac_vad_run_pcm(v, src->pcm, src->frames, src->channels, src->rate, o, res);
}

/* One transcription: its options, scratch memory and the stream position. */
typedef struct {
    const hviske_model *m;
    const ac_asr_options *o;
    hviske_options ho;
    ac_arena arena;
    float *buf;         /* one chunk plus one sample */
    int64_t cap;
    int64_t pos;        /* samples read from the stream */
    ac_progress prog;
    ac_asr_result *out;
} job;

static ac_status read_some(job *j, ac_audio_reader *r, float *dst, int64_t want, size_t *got)
{
    AC_TRY(ac_audio_read(r, dst, (size_t)want, got));
    j->pos += (int64_t)*got;
    return AC_OK;
}

static ac_status finish_chunk(job *j, int64_t from, int64_t to, hviske_chunk_result *cr)
{
    int rate = j->m->cfg.sample_rate;
    AC_TRY(add_segment(j->out, (double)from / rate, (double)to / rate, cr));
    ac_progress_update(&j->prog, (double)to / rate);
    if (j->o->on_segment && j->o->on_segment(&j->out->segments[j->out->n_segments - 1], j->o->user))
        return ac_error(AC_ERR_CANCELLED, "transcription stopped by the caller");
    return AC_OK;
}

/* Transcribes samples [start, end) of the stream (end < 0: to its end),
 * split into chunks as spec §5 says. The stream must not be past START. */
static ac_status span(job *j, ac_audio_reader *r, int64_t start, int64_t end)
{
    size_t got = 1;
    while (j->pos < start && got) {   /* skip to the span */
        int64_t want = start - j->pos < j->cap ? start - j->pos : j->cap;
        AC_TRY(read_some(j, r, j->buf, want, &got));
    }
    int64_t idx = j->pos, avail = 0;
    int at_end = got == 0;
    for (;;) {
        /* fill to one sample past a full chunk: that tells whether the span ends within it */
        while (!at_end && avail < j->cap) {
            int64_t want = j->cap - avail;
            if (end >= 0 && end - j->pos < want) want = end - j->pos;
            if (want <= 0) {
                at_end = 1;
                break;
            }
            AC_TRY(read_some(j, r, j->buf + avail, want, &got));
            if (got == 0) at_end = 1;
            avail += (int64_t)got;
        }
        if (at_end && avail == 0) return AC_OK;
        int64_t to = hviske_split(&j->m->cfg, j->buf, idx, avail, at_end), n = to - idx;
        hviske_chunk_result cr;
        ac_arena_reset(&j->arena);
        AC_TRY(hviske_transcribe_chunk(j->m, j->buf, n, &j->ho, &j->arena, &cr));
        ac_status s = finish_chunk(j, idx, to, &cr);
        hviske_chunk_result_free(&cr);
        if (s) return s;
        memmove(j->buf, j->buf + n, (size_t)(avail - n) * sizeof *j->buf);
        avail -= n;
        idx = to;
        if (at_end && avail == 0) return AC_OK;
    }
}

/* With a VAD: its speech segments, each transcribed as a span. */
static ac_status vad_spans(job *j, const source *src, ac_audio_reader *r)
{
    ac_vad_result vr;
    AC_TRY(source_vad(src, j->o->vad, j->o->vad_options, &vr));
    int rate = j->m->cfg.sample_rate;
    ac_status s = AC_OK;
    for (size_t i = 0; i < vr.n_segments && !s; i++) {
        int64_t a = vr.segments[i].start * rate / vr.sample_rate, b = vr.segments[i].end * rate / vr.sample_rate;
        if (a < j->pos) a = j->pos;
        if (b > a) s = span(j, r, a, b);
    }
    j->out->duration = vr.sample_rate ? (double)vr.n_samples / vr.sample_rate : 0;
    ac_vad_result_free(&vr);
    return s;
}

/* A failure leaves OUT empty. */
static ac_status transcribe(ac_asr *a, const source *src, const ac_asr_options *opt, ac_asr_result *out)
{
    memset(out, 0, sizeof *out);
    ac_asr_options def;
    if (!opt) ac_asr_options_default(&def), opt = &def;
    AC_TRY(check_options(opt));
    const hviske_config *c = &a->model->cfg;
    ac_audio_reader *r;
    AC_TRY(source_open(src, c->sample_rate, &r));
    ac_decode_options d = ac_decode_defaults();
    d.max_new_tokens = opt->max_new_tokens, d.min_new_tokens = opt->min_new_tokens;
    d.beam_size = opt->beam_size, d.length_penalty = opt->length_penalty;
    d.temperature = opt->temperature, d.top_k = opt->top_k, d.top_p = opt->top_p, d.seed = opt->seed;
    job j = {.m = a->model, .o = opt, .out = out,
             .ho = {.language = opt->language, .punctuation = opt->punctuation, .dummy_prefix = opt->prompt_prefix,
                    .decode = d}};
    j.cap = (int64_t)(c->max_clip_s * c->sample_rate + 0.5) + 1;
    ac_status s = (j.buf = ac_malloc((size_t)j.cap * sizeof *j.buf)) ? AC_OK : AC_ERR_NOMEM;
    ac_arena_init(&j.arena, 16u << 20);
    const ac_audio_info *info = ac_audio_reader_info(r);
    ac_progress_begin(&j.prog, "transcribe", (double)info->frames / info->sample_rate);
    if (!s && opt->vad) {
        s = vad_spans(&j, src, r);
    } else if (!s) {
        s = span(&j, r, 0, -1);
        out->duration = (double)j.pos / c->sample_rate;
    }
    ac_progress_end(&j.prog);
    ac_arena_free(&j.arena);
    free(j.buf);
    ac_audio_close(r);
    if (!s) s = join(out, opt->language);
    if (s) ac_asr_result_free(out);
    return s;
}

ac_status ac_asr_transcribe_file(ac_asr *a, const char *file, const ac_asr_options *opt, ac_asr_result *out)
{
    source src = {.file = file};
    ac_status s = transcribe(a, &src, opt, out);
    return s && s != AC_ERR_CANCELLED ? ac_error_prefix(s, "%s", file) : s;
}

ac_status ac_asr_transcribe_pcm(ac_asr *a, const float *pcm, int64_t frames, int channels, int rate,
                                const ac_asr_options *opt, ac_asr_result *out)
{
    source src = {.pcm = pcm, .frames = frames, .channels = channels, .rate = rate};
    return transcribe(a, &src, opt, out);
}

ac_status ac_asr_transcribe_memory(ac_asr *a, const void *data, size_t size, const ac_asr_options *opt,
                                   ac_asr_result *out)
{
    source src = {.data = data, .size = size};
    return transcribe(a, &src, opt, out);
}
