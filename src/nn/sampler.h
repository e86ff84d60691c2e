/* The next token of one sequence from its logits, as Hugging Face generate
 * does it: the logit processors in HF's order (repetition penalty, the end
 * token barred before min_new_tokens, then for sampling temperature, top-k
 * and top-p), softmax, and one draw from the result.
 *
 * The processors see whatever scores the model gives. HF hands them the raw
 * logits when sampling; a model whose head already ends in log_softmax
 * (Hviske) gives log-probabilities, and HF processes those as they are. Only
 * the repetition penalty tells the two apart (it is not shift-invariant). */
#ifndef AC_NN_SAMPLER_H
#define AC_NN_SAMPLER_H

#include <stdint.h>

#include "audioc.h"
#include "base/rng.h"

typedef struct ac_sampler_options {
    float repetition_penalty; /* 1: off; else each distinct id of the history gets l < 0 ? l * p : l / p */
    int min_new_tokens;       /* the end token is barred while fewer tokens were generated */
    int eos;                  /* the end token; -1: none */
    float temperature;        /* 0: greedy (argmax after the two above); > 0: sampling, scores / temperature */
    int top_k;                /* 0: all; else scores below the k-th largest go, ties with it stay */
    float top_p;              /* 1: all; else the smallest most-likely set whose probability reaches top_p */
} ac_sampler_options;

/* Greedy, no penalty, no end token: set the fields that differ after this. */
ac_sampler_options ac_sampler_defaults(void);
/* Whether O is valid for a vocabulary of VOCAB ids (an error names the field). */
ac_status ac_sampler_check(const ac_sampler_options *o, int vocab);

/* A uniform in [0, 1) per draw; tests and parity runs inject their own. */
typedef double (*ac_uniform_fn)(void *ctx);

typedef struct ac_sampler {
    int vocab;
    float *scores;          /* the processed scores of the last call */
    float *probs;           /* the distribution of the last draw: zeros outside its support */
    ac_rng rng;             /* the draws' uniforms, unless UNIFORM is set */
    ac_uniform_fn uniform;  /* NULL: from RNG */
    void *uniform_ctx;
    void *ranked;           /* scratch: (score, id) pairs */
    double *weights;        /* scratch: exp(score - max) of the ranked ids */
} ac_sampler;

ac_status ac_sampler_init(ac_sampler *s, int vocab, uint64_t seed);
void ac_sampler_free(ac_sampler *s);

/* The next id after LOGITS[vocab] (left unchanged). HISTORY[N_HISTORY]
 * holds the ids so far, prompt then generated (only the repetition penalty
 * reads it); STEP is how many were generated. LOGPROB, if not NULL, gets
 * the id's log-probability under LOGITS alone (log_softmax, no processor). */
ac_status ac_sample(ac_sampler *s, const ac_sampler_options *o, const float *logits, const int *history,
                    int n_history, int step, int *id, float *logprob);

/* The processors and the softmax without the draw: S->probs gets the
 * distribution a sampling call would draw from; *N_KEPT its support size. */
ac_status ac_sampler_probs(ac_sampler *s, const ac_sampler_options *o, const float *logits, const int *history,
                           int n_history, int step, int *n_kept);

/* The single processors, in place on SCORES. */
/* SCORES holds LOGITS on entry; each distinct id of IDS gets the penalty
 * once, however often it repeats. */
void ac_repetition_penalty(float *scores, const float *logits, const int *ids, int n, float penalty);
void ac_bar_eos(float *scores, int eos, int step, int min_new_tokens);

/* The id whose cumulative probability, in id order, first exceeds U in
 * [0, 1) (rounding past the total gives the last id with probability > 0). */
int ac_draw(const float *probs, int vocab, double u);

#endif
