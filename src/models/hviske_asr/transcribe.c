#include "models/hviske_asr/transcribe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/timing.h"
#include "models/hviske_asr/budget.h"
#include "models/hviske_asr/decoder.h"
#include "models/hviske_asr/frontend.h"

#define MAX_PROMPT 16

ac_status hviske_prompt(const hviske_model *m, const char *language, int punctuation, int dummy_prefix, int *ids,
                        int *n)
{
    if (m->cfg.n_languages && hviske_language(&m->cfg, language) < 0) {
        char list[512] = "";
        for (int i = 0; i < m->cfg.n_languages && strlen(list) < sizeof list - 20; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", m->cfg.languages[i]);
        return ac_error(AC_ERR_ARG, "language '%s' is not supported by this model (%s)", language, list);
    }
    char lang[64];
    snprintf(lang, sizeof lang, "<|%s|>", language);
    const char *pieces[] = {"<|startofcontext|>", "<|startoftranscript|>", "<|emo:undefined|>", lang, lang,
                            punctuation ? "<|pnc|>" : "<|nopnc|>", "<|noitn|>", "<|notimestamp|>", "<|nodiarize|>"};
    int k = 0;
    if (dummy_prefix) ids[k++] = m->cfg.decoder_start;
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        int id = ac_sp_piece_to_id(m->sp, pieces[i]);
        if (id < 0) return ac_error(AC_ERR_MODEL, "tokenizer.model has no piece '%s'", pieces[i]);
        ids[k++] = id;
    }
    *n = k;
    return AC_OK;
}

int64_t hviske_split(const hviske_config *c, const float *buf, int64_t idx, int64_t avail, int at_end)
{
    int64_t chunk = llround(c->max_clip_s * c->sample_rate), context = llround(c->overlap_s * c->sample_rate);
    int64_t win = c->energy_window;
    if (at_end && avail <= chunk) return idx + avail;
    /* the quietest window in the last CONTEXT samples of the chunk */
    int64_t s = chunk - context > 0 ? chunk - context : 0, e = chunk, split;
    if (e - s <= win) {
        split = (s + e) / 2;
    } else {
        double best = INFINITY;
        split = s;
        for (int64_t o = 0; o < e - s - win; o += win) {
            double sum = 0;
            for (int64_t i = 0; i < win; i++) sum += (double)buf[s + o + i] * buf[s + o + i];
            double energy = sqrt(sum / (double)win);
            if (energy < best) best = energy, split = s + o;
        }
    }
    if (split < 1) split = 1;
    return idx + split;
}

/* The decoder behind the generic search. */
typedef struct {
    hviske_decoder *dec;
    int *beam, *pos;
    int beams;
} search_ctx;

static ac_status step(void *ctx, const int *tokens, int n, int pos, float *logprobs)
{
    search_ctx *s = ctx;
    for (int i = 0; i < n; i++) s->beam[i] = i, s->pos[i] = pos;
    return hviske_decoder_forward(s->dec, tokens, s->beam, s->pos, n, n, logprobs);
}

static void reorder(void *ctx, const int *parent, int n, int len)
{
    search_ctx *s = ctx;
    int full[AC_MAX_BEAM_SIZE];
    for (int i = 0; i < s->beams; i++) full[i] = i < n ? parent[i] : i;
    hviske_decoder_reorder(s->dec, full, len);
}

ac_status hviske_transcribe_chunk(const hviske_model *m, const float *x, int64_t n, const hviske_options *o,
                                  ac_arena *a, hviske_chunk_result *out)
{
    const hviske_config *c = &m->cfg;
    memset(out, 0, sizeof *out);
    int prompt[MAX_PROMPT], np;
    AC_TRY(hviske_prompt(m, o->language, o->punctuation, o->dummy_prefix, prompt, &np));
    int beams = o->decode.beam_size;
    /* the decoder has max_seq positions: longer outputs are cut there */
    ac_decode_options dopt = o->decode;
    if (np + dopt.max_new_tokens > c->max_seq) dopt.max_new_tokens = c->max_seq - np;
    if (dopt.min_new_tokens > dopt.max_new_tokens) dopt.min_new_tokens = dopt.max_new_tokens;
    if (dopt.max_new_tokens < 1) return ac_error(AC_ERR_MODEL, "the prompt fills all %d decoder positions", c->max_seq);
    int cap = np + dopt.max_new_tokens;

    if (n / c->hop == 0) { /* not one feature frame: nothing to hear */
        out->text = calloc(1, 1);
        return out->text ? AC_OK : ac_error(AC_ERR_NOMEM, "out of memory");
    }
    AC_TRY(hviske_check_chunk(c, n, beams, cap));
    double t0 = ac_now();
    float *feat;
    int64_t T, Tv;
    AC_TRY(hviske_features(m, x, n, a, &feat, &T, &Tv));
    double t1 = ac_now();
    hviske_encoded enc;
    AC_TRY(hviske_encode(m, feat, T, Tv, &o->trace, a, &enc));
    double t2 = ac_now();

    hviske_decoder *dec;
    AC_TRY(hviske_decoder_new(m, enc.proj, enc.T, enc.T_valid, beams, cap, np > beams ? np : beams, a, &dec));
    int rows_beam[MAX_PROMPT], rows_pos[MAX_PROMPT], beam_idx[AC_MAX_BEAM_SIZE], pos_idx[AC_MAX_BEAM_SIZE];
    for (int i = 0; i < np; i++) rows_beam[i] = 0, rows_pos[i] = i;
    float *first = ac_arena_floats(a, (size_t)c->vocab);
    if (!first) return AC_ERR_NOMEM;
    AC_TRY(hviske_decoder_forward(dec, prompt, rows_beam, rows_pos, np, 1, first));
    double t3 = ac_now();

    search_ctx sc = {dec, beam_idx, pos_idx, beams};
    ac_decode_model dm = {.ctx = &sc, .vocab = c->vocab, .stop = &c->eos, .n_stop = 1, .logprobs = 1,
                          .step = step, .reorder = reorder};
    ac_decode_result r;
    AC_TRY(ac_decode(&dm, &dopt, first, np, &r));
    ac_status s = o->word_timestamps ? hviske_align_words(m, &enc, prompt, np, r.tokens, r.n_tokens, a, &out->words,
                                                          &out->n_words)
                                     : AC_OK;
    double t4 = ac_now();
    if (!s) s = ac_sp_decode(m->sp, r.tokens, (size_t)r.n_tokens, &out->text);
    if (s) {
        ac_decode_result_free(&r);
        hviske_chunk_result_free(out);
        return s;
    }
    out->tokens = r.tokens;
    free(r.logprobs);
    out->n_tokens = r.n_tokens;
    out->logprob = r.logprob;
    out->steps = r.steps;
    out->t_frontend = t1 - t0;
    out->t_encoder = t2 - t1;
    out->t_prefill = t3 - t2;
    out->t_decode = t4 - t3;
    return AC_OK;
}

void hviske_chunk_result_free(hviske_chunk_result *r)
{
    free(r->tokens);
    free(r->text);
    hviske_words_free(r->words, r->n_words);
    memset(r, 0, sizeof *r);
}
