/* Cutting long audio into chunks at silences (librosa.effects.split's
 * defaults: 2048-sample frames centred every 512 samples, a frame voiced
 * when its mean square is above the loudest frame's minus 30 dB): a chunk
 * grows to at most MAX samples and ends at the middle of the last gap
 * between voiced stretches that fits, or at MAX itself when none does. */
#ifndef AC_AUDIO_SILENCE_H
#define AC_AUDIO_SILENCE_H

#include <stdint.h>

#include "audioc.h"

/* The chunk ends of X[N] (ascending, the last N) in *ENDS (malloc'd, free()
 * it), *N_ENDS of them; chunk i is [ends[i-1], ends[i]) with ends[-1] = 0. */
ac_status ac_silence_chunks(const float *x, int64_t n, int64_t max, int64_t **ends, size_t *n_ends);

#endif
