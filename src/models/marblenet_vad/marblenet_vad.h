/* MarbleNet frame-level VAD (NeMo): log-mel features, Jasper blocks of
 * separable convolutions, a per-frame speech probability every 20 ms.
 * See docs/models/marblenet_vad.md. */
#ifndef AC_MODELS_MARBLENET_VAD_H
#define AC_MODELS_MARBLENET_VAD_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"
#include "base/mem.h"

typedef struct ac_marblenet ac_marblenet;
typedef struct ac_marblenet_stream ac_marblenet_stream;

/* PATH: the .safetensors file (its config is <stem>_config.json beside it),
 * a folder holding marblenet_vad.safetensors, or a GGUF file embedding the
 * config as AC_MARBLENET_CONFIG (what audioc quantize writes). */
#define AC_MARBLENET_CONFIG "marblenet_vad_config.json"
ac_status ac_marblenet_load(const char *path, ac_marblenet **out);
void ac_marblenet_free(ac_marblenet *m);
/* The path of its config file, "" when the weights file embeds it. */
const char *ac_marblenet_config_path(const ac_marblenet *m);
int ac_marblenet_rate(const ac_marblenet *m);        /* input rate, 16000 */
int ac_marblenet_hop(const ac_marblenet *m);         /* samples per output frame */

/* A stream of mono audio at ac_marblenet_rate; appends one probability per
 * output frame. Memory is bounded: the encoder runs on overlapping windows
 * wide enough that every output equals the whole-signal result. */
ac_status ac_marblenet_stream_new(const ac_marblenet *m, ac_marblenet_stream **out);
ac_status ac_marblenet_stream_feed(ac_marblenet_stream *s, const float *pcm, size_t n,
                                   ac_floatvec *probs);
ac_status ac_marblenet_stream_finish(ac_marblenet_stream *s, ac_floatvec *probs);
void ac_marblenet_stream_free(ac_marblenet_stream *s);

/* Runs of frames with p >= threshold, in samples at ac_marblenet_rate,
 * clamped to N_SAMPLES; confidence is the mean probability of the run. */
ac_status ac_marblenet_segments(const ac_marblenet *m, const float *probs, size_t n_probs,
                                int64_t n_samples, float threshold, ac_vad_segment **out,
                                size_t *n_out);

#endif
