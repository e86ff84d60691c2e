/* Hviske ASR end to end: prompt, long-audio splitting (spec §5), and the
 * per-chunk pipeline front end -> encoder -> decoder search -> text. */
#ifndef AC_MODELS_HVISKE_TRANSCRIBE_H
#define AC_MODELS_HVISKE_TRANSCRIBE_H

#include "base/arena.h"
#include "base/trace.h"
#include "models/hviske_asr/align.h"
#include "models/hviske_asr/model.h"
#include "nn/decode.h"

typedef struct hviske_options {
    const char *language;   /* "da" */
    int punctuation;        /* <|pnc|> or <|nopnc|> */
    int dummy_prefix;       /* lead the prompt with the "▁" piece (10 ids) */
    int word_timestamps;    /* align the words (align.h) */
    ac_decode_options decode;
    ac_trace trace;         /* the encoder's stages (frontend.h), for tests */
} hviske_options;

typedef struct hviske_chunk_result {
    int *tokens;
    int n_tokens;
    double logprob;
    char *text;
    hviske_word *words;     /* with word_timestamps */
    int n_words;
    /* seconds spent, and decoder steps run */
    double t_frontend, t_encoder, t_prefill, t_decode;
    int steps;
} hviske_chunk_result;

/* The prompt ids: start, language twice, punctuation switch, no ITN,
 * no timestamps, no diarization. */
ac_status hviske_prompt(const hviske_model *m, const char *language, int punctuation, int dummy_prefix, int *ids,
                        int *n);

/* The end of the chunk that starts at IDX, given BUF holding samples
 * [idx, idx + avail) of the audio and whether the audio ends there. */
int64_t hviske_split(const hviske_config *c, const float *buf, int64_t idx, int64_t avail, int at_end);

/* One chunk of 16 kHz audio. Scratch comes from A (reset by the caller). */
ac_status hviske_transcribe_chunk(const hviske_model *m, const float *x, int64_t n, const hviske_options *o,
                                  ac_arena *a, hviske_chunk_result *out);
void hviske_chunk_result_free(hviske_chunk_result *r);

#endif
