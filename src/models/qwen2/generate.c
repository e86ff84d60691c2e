/* Generation as Hugging Face generate does it for one sequence: the prompt
 * in one pass, then nn/decode's loop (per new token nn/sampler's processors
 * and draw on the last position's logits, and one cached step). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/timing.h"
#include "base/mem.h"
#include "models/qwen2/qwen2.h"
#include "nn/decode.h"

qwen2_gen_options qwen2_gen_defaults(const qwen2_model *m, int prompt_len)
{
    const qwen2_generation *g = &m->gen;
    qwen2_gen_options o = {.sampler = ac_sampler_defaults(), .n_stop = g->n_eos};
    o.sampler.repetition_penalty = g->repetition_penalty;
    o.sampler.min_new_tokens = g->min_new_tokens;
    if (g->do_sample) {
        o.sampler.temperature = g->temperature;
        o.sampler.top_k = g->top_k;
        o.sampler.top_p = g->top_p;
    }
    memcpy(o.stop, g->eos, sizeof o.stop);
    o.max_new_tokens = g->max_new_tokens >= 0 ? g->max_new_tokens : g->max_length - prompt_len;
    if (o.max_new_tokens < 0) o.max_new_tokens = 0;
    return o;
}

static ac_status check_options(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o)
{
    const qwen2_config *c = &m->cfg;
    if (n_prompt < 1) return ac_error(AC_ERR_ARG, "qwen2: the prompt is empty");
    if (o->max_new_tokens < 0) return ac_error(AC_ERR_ARG, "qwen2: max_new_tokens %d must be >= 0", o->max_new_tokens);
    if (o->n_stop < 0 || o->n_stop > QWEN2_MAX_STOP)
        return ac_error(AC_ERR_ARG, "qwen2: %d stop ids (0 to %d)", o->n_stop, QWEN2_MAX_STOP);
    for (int i = 0; i < o->n_stop; i++)
        if (o->stop[i] < 0 || o->stop[i] >= c->vocab)
            return ac_error(AC_ERR_ARG, "qwen2: stop id %d is outside the vocabulary of %d ids", o->stop[i], c->vocab);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= c->vocab)
            return ac_error(AC_ERR_ARG, "qwen2: prompt id %d (at %d) is outside the vocabulary of %d ids", prompt[i], i,
                            c->vocab);
    /* the last new token is never fed back: its position is not needed */
    long need = (long)n_prompt + (o->max_new_tokens > 0 ? o->max_new_tokens - 1 : 0);
    if (need > c->max_positions)
        return ac_error(AC_ERR_ARG, "qwen2: a prompt of %d ids and %d new tokens need %ld positions, more than "
                        "max_position_embeddings %d", n_prompt, o->max_new_tokens, need, c->max_positions);
    return ac_sampler_check(&o->sampler, c->vocab);
}

static ac_status step(void *ctx, const int *tokens, int n, int pos, float *logits)
{
    return qwen2_forward(ctx, tokens, n, pos, 1, logits);
}

/* The prompt in one pass, then nn/decode's loop; the result keeps the stop
 * id that ended the run, as HF's output does. */
static ac_status run(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o,
                     ac_arena *a, qwen2_gen_result *out)
{
    int max_new = o->max_new_tokens, cap = n_prompt + (max_new > 0 ? max_new - 1 : 0);
    qwen2_session *s;
    AC_TRY(qwen2_session_new(m, cap, n_prompt, a, &s));
    float *logits = ac_arena_floats(a, (size_t)m->cfg.vocab);
    if (!logits) return AC_ERR_NOMEM;
    if (max_new == 0) { /* nothing to generate: empty arrays, as for any result */
        out->ids = ac_malloc(sizeof *out->ids);
        out->logprobs = ac_malloc(sizeof *out->logprobs);
        return out->ids && out->logprobs ? AC_OK : AC_ERR_NOMEM;
    }
    double t0 = ac_now();
    AC_TRY(qwen2_forward(s, prompt, n_prompt, 0, 1, logits));
    double t1 = ac_now();
    out->prefill_s = t1 - t0;
    const ac_sampler_options *so = &o->sampler;
    ac_decode_model dm = {.ctx = s, .vocab = m->cfg.vocab, .stop = o->stop, .n_stop = o->n_stop, .step = step};
    ac_decode_options d = {
        .max_new_tokens = max_new,
        /* HF bars the stop ids for min_new_tokens steps, however many are allowed */
        .min_new_tokens = so->min_new_tokens < max_new ? so->min_new_tokens : max_new,
        .beam_size = 1,
        .temperature = so->temperature,
        .top_k = so->top_k,
        .top_p = so->top_p,
        .repetition_penalty = so->repetition_penalty,
        .prompt = prompt,
        .n_prompt = n_prompt,
        .seed = o->seed,
        .uniform = o->uniform,
        .uniform_ctx = o->uniform_ctx,
        .progress = o->progress,
        .progress_user = o->progress_user,
    };
    ac_decode_result r;
    AC_TRY(ac_decode(&dm, &d, logits, n_prompt, &r));
    out->decode_s = ac_now() - t1;
    out->stopped = r.stop >= 0;
    if (out->stopped) r.tokens[r.n_tokens] = r.stop;
    out->ids = r.tokens;
    out->logprobs = r.logprobs;
    out->n = r.n_tokens + out->stopped;
    return AC_OK;
}

ac_status qwen2_generate(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o,
                         ac_arena *a, qwen2_gen_result *out)
{
    memset(out, 0, sizeof *out);
    AC_TRY(check_options(m, prompt, n_prompt, o));
    ac_status st = run(m, prompt, n_prompt, o, a, out);
    if (st) qwen2_gen_result_free(out);
    return st;
}

void qwen2_gen_result_free(qwen2_gen_result *r)
{
    free(r->ids);
    free(r->logprobs);
    memset(r, 0, sizeof *r);
}
