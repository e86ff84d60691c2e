/* The Qwen2 decoder (Hugging Face Qwen2ForCausalLM) over token ids: a
 * model module that families call (Vevo2's AR model, spec vevo2.md §4.7,
 * §4.8). Pre-norm layers of grouped-query attention with rotate-half RoPE
 * and a SwiGLU MLP, RMSNorm, the head tied to the embeddings or not.
 *
 * A request prefills its prompt in one pass and then runs one cached step
 * per token against a KV cache allocated once for prompt + max new tokens.
 * Generation follows HF generate (nn/sampler): defaults come from
 * generation_config.json, as HF merges them, and the caller overrides what
 * its upstream passes explicitly. */
#ifndef AC_MODELS_QWEN2_H
#define AC_MODELS_QWEN2_H

#include <stdint.h>

#include "audioc.h"
#include "base/arena.h"
#include "base/trace.h"
#include "io/config.h"
#include "io/weights.h"
#include "nn/kv_cache.h"
#include "nn/sampler.h"
#include "tensor/mat.h"

#define QWEN2_MAX_STOP 8

typedef struct qwen2_config {
    int hidden, intermediate, layers, heads, kv_heads, head_dim, max_positions, vocab;
    float rope_theta, rms_eps;
    int tied;                       /* tie_word_embeddings: the head is the embedding matrix */
    int attn_bias;                  /* q/k/v biases (Qwen2; Qwen3's attention_bias, false by default) */
    int qk_norm;                    /* Qwen3: RMSNorm of each head of q and k before RoPE */
} qwen2_config;

/* generation_config.json, with HF's defaults for what it leaves out. */
typedef struct qwen2_generation {
    int eos[QWEN2_MAX_STOP], n_eos; /* eos_token_id, a number or a list (else config.json's) */
    int pad;                        /* pad_token_id, -1 when absent */
    int do_sample;                  /* false */
    int top_k;                      /* 50 */
    float top_p, temperature;       /* 1, 1 */
    float repetition_penalty;       /* 1 */
    int min_new_tokens;             /* 0 */
    int max_new_tokens;             /* -1 when absent: then max_length (20) counts the prompt too */
    int max_length;
} qwen2_generation;

typedef struct qwen2_layer {
    const float *ln_in, *ln_post, *bq, *bk, *bv;
    const float *q_norm, *k_norm;   /* [head_dim], Qwen3 */
    ac_mat wq, wk, wv, wo, gate, up, down;
} qwen2_layer;

typedef struct qwen2_model {
    qwen2_config cfg;
    qwen2_generation gen;
    ac_weights *weights;
    ac_mat embed;                   /* [vocab][hidden], in its stored type */
    ac_mat head;                    /* the embedding matrix when tied, else lm_head.weight */
    qwen2_layer *layer;
    const float *norm;
    int owns_weights;
} qwen2_model;

/* config.json and (optional) generation_config.json of DIR; WHERE names
 * the folder in messages. Texts are the files' contents. */
ac_status qwen2_config_parse(const char *text, size_t len, const char *gen_text, size_t gen_len,
                             const char *where, qwen2_config *cfg, qwen2_generation *gen);

/* The decoder's config from the object OBJ of config C (NULL: its root),
 * named WHERE in messages; DEF_TYPE is the model_type when it has none
 * ("qwen2" or "qwen3"). Generation defaults are not read. */
ac_status qwen2_config_parse_obj(const ac_config *c, const cJSON *obj, const char *where, const char *def_type,
                                 qwen2_config *cfg);

/* A Hugging Face Qwen2 or Qwen3 folder: config.json, generation_config.json
 * (optional) and model.safetensors; weights stay in their stored type. */
ac_status qwen2_load(const char *dir, ac_weight_type type, qwen2_model **out);
/* The same over weights W opened by the caller (a part of a GGUF package,
 * taken: freed on error too) and the bytes of config.json and
 * generation_config.json (GEN may be NULL); NAME in messages. */
ac_status qwen2_load_from(ac_weights *w, const char *cfg, size_t n_cfg, const char *gen, size_t n_gen,
                          const char *name, qwen2_model **out);
/* The decoder over tensors of W that the caller keeps (a package holding
 * more than the decoder), its names under the namespace NS ("llm."): W
 * must outlive the model; its namespace is left cleared. The generation
 * defaults are HF's. */
ac_status qwen2_load_shared(ac_weights *w, const qwen2_config *cfg, const char *ns, qwen2_model **out);
void qwen2_free(qwen2_model *m);

/* The state of one request: the KV cache of CAP positions and buffers for
 * calls of up to MAX_ROWS tokens, all in arena memory. */
typedef struct qwen2_session qwen2_session;

ac_status qwen2_session_new(const qwen2_model *m, int cap, int max_rows, ac_arena *a, qwen2_session **out);
/* The same with a cache for BEAMS beams (beam search) whose first SHARED
 * positions (a prompt fed to beam 0 before the beams part) are held once. */
ac_status qwen2_session_new_beams(const qwen2_model *m, int cap, int max_rows, int beams, int shared, ac_arena *a,
                                  qwen2_session **out);

/* Feeds TOKENS[n] at positions POS0 .. POS0+n-1 (the cache must hold the
 * positions before POS0) and writes the logits [n_out][vocab] of the last
 * N_OUT positions: 1 after a prompt, n for teacher forcing. */
ac_status qwen2_forward(qwen2_session *s, const int *tokens, int n, int pos0, int n_out, float *logits);
/* A prompt given as input rows: EMB[n_emb][hidden] (embeddings computed by
 * the caller, e.g. audio) followed by the embeddings of TOKENS[n_tok], at
 * positions POS0.. of beam 0; logits of the last N_OUT rows as above. */
ac_status qwen2_forward_embeds(qwen2_session *s, const float *emb, int n_emb, const int *tokens, int n_tok, int pos0,
                               int n_out, float *logits);
/* One step of N beams: TOKENS[i] to beam i at position POS; LOGITS[n][vocab]. */
ac_status qwen2_step_beams(qwen2_session *s, const int *tokens, int n, int pos, float *logits);
/* Beam i continues from beam PARENT[i] (i < n; the others keep theirs)
 * over positions [0, len). */
void qwen2_session_reorder(qwen2_session *s, const int *parent, int n, int len);
/* Hands each call's "layer" outputs (f32 [n][hidden], the residual stream
 * after block l) to T from now on; NULL stops. */
void qwen2_session_trace(qwen2_session *s, const ac_trace *t);

/* HF generate's options: the sampler's processors, the stop ids, the
 * length limits and the source of the draws. */
typedef struct qwen2_gen_options {
    ac_sampler_options sampler;     /* its eos is unused: STOP ids are barred before min_new_tokens */
    int stop[QWEN2_MAX_STOP], n_stop;
    int max_new_tokens;
    uint64_t seed;
    ac_uniform_fn uniform;          /* NULL: the seeded generator */
    void *uniform_ctx;
    /* After each token (DONE of at most MAX); nonzero stops with AC_ERR_CANCELLED. May be NULL. */
    int (*progress)(void *user, int done, int max);
    void *progress_user;
} qwen2_gen_options;

/* Options as HF builds them from generation_config.json alone: do_sample
 * false is greedy (temperature 0), the stop ids are its eos ids, and
 * max_new_tokens is its own or max_length minus PROMPT_LEN. */
qwen2_gen_options qwen2_gen_defaults(const qwen2_model *m, int prompt_len);

typedef struct qwen2_gen_result {
    int *ids;                       /* generated, the stop id included when one ended the run */
    float *logprobs;                /* per id: log-softmax of the step's logits (stop ids barred before min_new_tokens) */
    int n;
    int stopped;                    /* 1: a stop id ended the run; 0: max_new_tokens did */
    double prefill_s, decode_s;     /* seconds: the prompt's pass, the steps after it */
} qwen2_gen_result;

/* Generates after PROMPT[n_prompt] (at least one id). The session's cache
 * is allocated here, once, for prompt + max_new_tokens positions. */
ac_status qwen2_generate(const qwen2_model *m, const int *prompt, int n_prompt, const qwen2_gen_options *o,
                         ac_arena *a, qwen2_gen_result *out);
void qwen2_gen_result_free(qwen2_gen_result *r);

#endif
