/* The Hviske Transformer decoder with a KV cache (spec §4): self-attention
 * K/V are cached per beam and position, cross-attention K/V are computed
 * once per audio chunk. Rows of one call are (token, beam, position)
 * triples: the prompt is one call of N rows, a beam-search step one call
 * of B rows. */
#ifndef AC_MODELS_HVISKE_DECODER_H
#define AC_MODELS_HVISKE_DECODER_H

#include "base/arena.h"
#include "models/hviske_asr/model.h"

typedef struct hviske_decoder hviske_decoder;

/* ENC is the projected encoder output [T][dec_dim] with T_VALID real rows.
 * Positions run up to CAP; BEAMS caches; at most MAX_ROWS rows a call. */
ac_status hviske_decoder_new(const hviske_model *m, const float *enc, int64_t T, int64_t T_valid, int beams,
                             int cap, int max_rows, ac_arena *a, hviske_decoder **out);

/* Runs ROWS rows and writes log-probabilities [n_out][vocab] of the last
 * N_OUT rows. Each row's keys are its beam's cached positions 0..pos. */
ac_status hviske_decoder_forward(hviske_decoder *d, const int *tokens, const int *beam, const int *pos,
                                 int rows, int n_out, float *logprobs);

/* From now on, each forward call writes the cross-attention weights of
 * layers FROM_LAYER.. into WEIGHTS [layer][head][row][T_valid] (rows of
 * that call; NULL stops it). For alignment: the caller sizes WEIGHTS. */
void hviske_decoder_capture(hviske_decoder *d, int from_layer, float *weights);

/* Beam b takes the cache of beam PARENT[b] for positions [0, len). */
void hviske_decoder_reorder(hviske_decoder *d, const int *parent, int len);

#endif
