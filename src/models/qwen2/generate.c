/* Generation as Hugging Face generate does it for one sequence: the prompt
 * in one pass, then per new token nn/sampler's processors and draw on the
 * last position's logits, and one cached step. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/timing.h"
#include "base/mem.h"
#include "models/qwen2/qwen2.h"

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

static int is_stop(const qwen2_gen_options *o, int id)
{
    for (int i = 0; i < o->n_stop; i++)
        if (o->stop[i] == id) return 1;
    return 0;
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

static ac_status run(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o,
                     ac_arena *a, ac_sampler *smp, qwen2_gen_result *out)
{
    int V = m->cfg.vocab, max_new = o->max_new_tokens, cap = n_prompt + (max_new > 0 ? max_new - 1 : 0);
    qwen2_session *s;
    AC_TRY(qwen2_session_new(m, cap, n_prompt, a, &s));
    int *history = ac_arena_alloc(a, (size_t)(n_prompt + max_new) * sizeof *history);
    float *logits = ac_arena_floats(a, (size_t)V);
    out->ids = ac_malloc((size_t)(max_new > 0 ? max_new : 1) * sizeof *out->ids);
    out->logprobs = ac_malloc((size_t)(max_new > 0 ? max_new : 1) * sizeof *out->logprobs);
    if (!history || !logits || !out->ids || !out->logprobs) return AC_ERR_NOMEM;
    memcpy(history, prompt, (size_t)n_prompt * sizeof *history);
    if (max_new == 0) return AC_OK;
    /* every stop id is barred before min_new_tokens (HF's processor takes
     * the list), so the sampler's single end token is not used */
    ac_sampler_options so = o->sampler;
    so.eos = -1;
    double t0 = ac_now();
    AC_TRY(qwen2_forward(s, prompt, n_prompt, 0, 1, logits));
    double t1 = ac_now();
    out->prefill_s = t1 - t0;
    for (int step = 0; step < max_new; step++) {
        for (int i = 0; i < o->n_stop; i++) ac_bar_eos(logits, o->stop[i], step, o->sampler.min_new_tokens);
        int id;
        float lp;
        AC_TRY(ac_sample(smp, &so, logits, history, n_prompt + step, step, &id, &lp));
        history[n_prompt + step] = out->ids[step] = id;
        out->logprobs[step] = lp;
        out->n = step + 1;
        if (o->progress && o->progress(o->progress_user, step + 1, max_new)) return AC_ERR_CANCELLED;
        if (is_stop(o, id)) {
            out->stopped = 1;
            break;
        }
        if (step + 1 < max_new) AC_TRY(qwen2_forward(s, &id, 1, n_prompt + step, 1, logits));
    }
    out->decode_s = ac_now() - t1;
    return AC_OK;
}

ac_status qwen2_generate(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o,
                         ac_arena *a, qwen2_gen_result *out)
{
    memset(out, 0, sizeof *out);
    AC_TRY(check_options(m, prompt, n_prompt, o));
    ac_sampler smp;
    AC_TRY(ac_sampler_init(&smp, m->cfg.vocab, o->seed));
    smp.uniform = o->uniform;
    smp.uniform_ctx = o->uniform_ctx;
    ac_status st = run(m, prompt, n_prompt, o, a, &smp, out);
    ac_sampler_free(&smp);
    if (st) qwen2_gen_result_free(out);
    return st;
}

void qwen2_gen_result_free(qwen2_gen_result *r)
{
    free(r->ids);
    free(r->logprobs);
    memset(r, 0, sizeof *r);
}
