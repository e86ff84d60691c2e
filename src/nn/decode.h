/* The one generation loop over any autoregressive model: greedy, sampling
 * (temperature, top-k, top-p, repetition penalty, seed; one token at a time
 * by nn/sampler, as Hugging Face generate does it) and beam search with a
 * length penalty and early stop; stop tokens, progress and cancel, and the
 * log-probability of every token. The model is reached through two
 * callbacks. */
#ifndef AC_NN_DECODE_H
#define AC_NN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"
#include "nn/sampler.h"

typedef struct ac_decode_model {
    void *ctx;
    int vocab;
    const int *stop;         /* the end tokens, barred before min_new_tokens */
    int n_stop;
    int logprobs;            /* 1: STEP gives log-probabilities (a log_softmax head); 0: logits */
    /* scores [n][vocab] after feeding TOKENS[i] to beam i at position POS
     * (all beams advance together) */
    ac_status (*step)(void *ctx, const int *tokens, int n, int pos, float *scores);
    /* beam i continues from the cache of beam PARENT[i], over LEN positions
     * (NULL: the model holds one sequence, and beam search is refused) */
    void (*reorder)(void *ctx, const int *parent, int n, int len);
} ac_decode_model;

typedef struct ac_decode_options {
    int max_new_tokens;
    int min_new_tokens;      /* the stop tokens are barred before this many */
    int beam_size;           /* > 1: beam search */
    float length_penalty;    /* beam search: score / length^penalty */
    /* Beam search's early stop compares the worst finished hypothesis with
     * 0: the best continuing beam; 1: the step's best candidate, which may
     * be an end (transformers' BeamSearchScorer, Hviske v6's port) */
    int stop_vs_candidates;
    float temperature;       /* > 0 (with beam_size 1): sampling */
    int top_k;               /* 0: all; ties with the k-th stay (nn/sampler.h) */
    float top_p;             /* 1: all */
    float repetition_penalty; /* 1: off; over PROMPT and the tokens so far (one beam) */
    const int *prompt;       /* the ids before the first step, for the repetition penalty only */
    int n_prompt;
    uint64_t seed;           /* sampling draws are xoshiro256** from this seed */
    ac_uniform_fn uniform;   /* NULL: the seeded generator; tests inject their own */
    void *uniform_ctx;
    /* After each token (one beam) or step (beams), DONE of at most MAX;
     * nonzero stops the search with AC_ERR_CANCELLED. May be NULL. */
    int (*progress)(void *user, int done, int max);
    void *progress_user;
} ac_decode_options;

/* Greedy, 256 tokens at most, length penalty 1: set what differs after this. */
ac_decode_options ac_decode_defaults(void);

typedef struct ac_decode_result {
    int *tokens;             /* without the stop token */
    float *logprobs;         /* per token, then the stop token's when one ended the search */
    int n_tokens;
    int stop;                /* the stop token that ended the search; -1: the length limit did */
    double logprob;          /* the sum of LOGPROBS */
    int steps;               /* model steps run after the prompt */
} ac_decode_result;

/* FIRST holds the scores after the prompt, whose last position is POS0 - 1;
 * beam 0's cache holds the prompt. Per-token
 * log-probabilities are the scores' log_softmax (the scores themselves
 * when the model gives log-probabilities). */
ac_status ac_decode(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                    ac_decode_result *out);
void ac_decode_result_free(ac_decode_result *r);

#endif
