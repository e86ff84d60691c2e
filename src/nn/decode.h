/* Token search over any autoregressive model: greedy, sampling
 * (temperature, top-k, top-p, seed; one token at a time by nn/sampler) and
 * beam search with a length penalty and early stop. The model is reached
 * through two callbacks. */
#ifndef AC_NN_DECODE_H
#define AC_NN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

typedef struct ac_decode_model {
    void *ctx;
    int vocab, eos;
    /* log-probabilities [n][vocab] after feeding TOKENS[i] to beam i at
     * position POS (all beams advance together) */
    ac_status (*step)(void *ctx, const int *tokens, int n, int pos, float *logprobs);
    /* beam i continues from the cache of beam PARENT[i], over LEN positions */
    void (*reorder)(void *ctx, const int *parent, int n, int len);
} ac_decode_model;

typedef struct ac_decode_options {
    int max_new_tokens;
    int min_new_tokens;      /* the end token is barred before this many */
    int beam_size;           /* > 1: beam search */
    float length_penalty;    /* beam search: score / length^penalty */
    float temperature;       /* > 0 (with beam_size 1): sampling */
    int top_k;               /* 0: all; ties with the k-th stay (nn/sampler.h) */
    float top_p;             /* 1: all */
    uint64_t seed;           /* sampling draws are xoshiro256** from this seed */
} ac_decode_options;

/* Greedy, 256 tokens at most, length penalty 1: set what differs after this. */
ac_decode_options ac_decode_defaults(void);

typedef struct ac_decode_result {
    int *tokens;             /* without the end token */
    int n_tokens;
    double logprob;          /* sum over the tokens (and the end token, if reached) */
    int steps;               /* model steps run after the prompt */
} ac_decode_result;

/* FIRST holds the log-probabilities after the prompt, whose last position
 * is POS0 - 1; beam 0's cache holds the prompt. */
ac_status ac_decode(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                    ac_decode_result *out);
void ac_decode_result_free(ac_decode_result *r);

#endif
