/* Silero VAD v5, 16 kHz: one speech probability per 512-sample chunk
 * (STFT conv, 4 conv layers, an LSTM cell). See docs/models/silero_vad.md. */
#ifndef AC_MODELS_SILERO_VAD_H
#define AC_MODELS_SILERO_VAD_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"
#include "base/mem.h"

#define AC_SILERO_RATE 16000
#define AC_SILERO_CHUNK 512

typedef struct ac_silero ac_silero;
typedef struct ac_silero_stream ac_silero_stream;

/* PATH: the .safetensors file, or a folder holding silero_vad_16k.safetensors. */
ac_status ac_silero_load(const char *path, ac_silero **out);
void ac_silero_free(ac_silero *m);

/* A stream of 16 kHz mono audio; appends one probability per chunk. */
ac_status ac_silero_stream_new(const ac_silero *m, ac_silero_stream **out);
ac_status ac_silero_stream_feed(ac_silero_stream *s, const float *pcm, size_t n, ac_floatvec *probs);
/* Scores the last partial chunk, zero-padded. */
ac_status ac_silero_stream_finish(ac_silero_stream *s, ac_floatvec *probs);
void ac_silero_stream_free(ac_silero_stream *s);

/* Speech segments from chunk probabilities (upstream get_speech_timestamps),
 * in 16 kHz samples; N_SAMPLES is the unpadded audio length. The walk
 * (ac_silero_speech) and its padding pass (ac_silero_pad, in place) apart,
 * and both (ac_silero_segments). */
ac_status ac_silero_speech(const float *probs, size_t n_probs, int64_t n_samples,
                           const ac_vad_options *opt, ac_vad_segment **out, size_t *n_out);
void ac_silero_pad(ac_vad_segment *v, size_t n, const ac_vad_options *opt, int64_t n_samples);
ac_status ac_silero_segments(const float *probs, size_t n_probs, int64_t n_samples,
                             const ac_vad_options *opt, ac_vad_segment **out, size_t *n_out);

#endif
