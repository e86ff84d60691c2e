/* One log-mel frame: STFT power spectrum, mel filterbank, logarithm with a
 * guard against log(0). The front ends of NeMo-style models (Hviske,
 * MarbleNet) and Whisper's differ only in the logarithm and guard. */
#ifndef AC_AUDIO_LOGMEL_H
#define AC_AUDIO_LOGMEL_H

#include "audio/mel.h"
#include "audio/stft.h"

typedef enum {
    AC_LOG_ADD,      /* ln(mel + guard): NeMo, log_zero_guard_type "add" */
    AC_LOG10_CLAMP,  /* log10(max(mel, guard)): Whisper */
} ac_log_guard;

typedef struct ac_logmel {
    ac_stft stft;
    const ac_melbank *mel;   /* n_bins = n_fft/2+1 */
    ac_log_guard log;
    float guard;
    float *power;            /* [n_fft/2+1] scratch */
} ac_logmel;

ac_status ac_logmel_init(ac_logmel *l, const ac_stft_params *p, const ac_melbank *mel, ac_log_guard log,
                         float guard);
void ac_logmel_free(ac_logmel *l);

/* out[n_mels]: the log-mel of frame T, arguments as ac_stft_frame. */
ac_status ac_logmel_frame(ac_logmel *l, const float *buf, int64_t base, int64_t len, int64_t n, int64_t t,
                          float *out);

/* Whisper's scaling of a whole log10-mel spectrogram X[n]: a floor 8 below
 * its maximum, then (x + 4) / 4. */
void ac_logmel_whisper_scale(float *x, size_t n);

#endif
