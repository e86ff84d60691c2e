/* Word timestamps of a decoded chunk (docs/models/hviske_asr.md, "Word
 * timestamps"): the tokens are run again through the decoder, teacher
 * forced, and the cross-attention of the heads of the top half of the
 * decoder layers (openai-whisper's rule for a model without known
 * alignment heads) is aligned to the encoder frames by DTW (nn/align.h).
 * A word starts at a piece that begins with "▁". */
#ifndef AC_MODELS_HVISKE_ALIGN_H
#define AC_MODELS_HVISKE_ALIGN_H

#include "base/arena.h"
#include "models/hviske_asr/frontend.h"
#include "models/hviske_asr/model.h"

typedef struct hviske_word {
    char *text;
    double start, end;   /* seconds from the chunk's start */
} hviske_word;

/* The first layer whose heads align: the top half of the decoder. */
static inline int hviske_align_from(const hviske_config *c) { return c->dec_layers / 2; }

/* Seconds per encoder frame: the alignment's unit of time. */
static inline double hviske_frame_s(const hviske_config *c)
{
    return (double)c->hop * c->sub_factor / c->sample_rate;
}

/* Words of TOKENS[n] decoded after PROMPT[np] over the encoder output ENC.
 * Scratch from A; *WORDS is malloc'ed (texts too), freed with hviske_words_free. */
ac_status hviske_align_words(const hviske_model *m, const hviske_encoded *enc, const int *prompt, int np,
                             const int *tokens, int n, ac_arena *a, hviske_word **words, int *n_words);
void hviske_words_free(hviske_word *w, int n);

#endif
