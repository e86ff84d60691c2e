/* Whisper's log-mel (openai-whisper log_mel_spectrogram over the padded
 * window, spec vevo2.md §4.1 steps 2-3), on the shared STFT and mel bank. */
#include <stdlib.h>
#include <string.h>

#include "audio/logmel.h"
#include "base/error.h"
#include "base/mem.h"
#include "models/whisper/whisper.h"

size_t whisper_mel_frames(const whisper_config *c) { return 2 * (size_t)c->n_ctx; }

size_t whisper_window_samples(const whisper_config *c) { return whisper_mel_frames(c) * WHISPER_HOP; }

ac_status whisper_logmel(const whisper_encoder *m, const float *x, size_t n, float *mel)
{
    return whisper_logmel_frames(m, x, n, whisper_mel_frames(&m->cfg), mel);
}

ac_status whisper_logmel_frames(const whisper_encoder *m, const float *x, size_t n, size_t frames, float *mel)
{
    size_t N = frames * WHISPER_HOP, T = frames, M = (size_t)m->cfg.n_mels;
    if (frames < 1) return ac_error(AC_ERR_ARG, "whisper: a window of no frames");
    float *win = ac_calloc(N, sizeof *win); /* the window: zeros past the audio */
    if (!win) return ac_error(AC_ERR_NOMEM, "whisper: no memory for the %zu-sample window", N);
    memcpy(win, x, (n < N ? n : N) * sizeof *win);
    ac_logmel lm;
    ac_stft_params p = {.n_fft = WHISPER_N_FFT, .hop = WHISPER_HOP, .win = WHISPER_N_FFT, .window = m->window,
                        .layout = AC_STFT_CENTER, .pad = AC_PAD_REFLECT};
    ac_status s = ac_logmel_init(&lm, &p, &m->mel, AC_LOG10_CLAMP, 1e-10f);
    if (s) {
        free(win);
        return s;
    }
    /* the STFT gives T + 1 frames: the last is dropped */
    for (size_t t = 0; t < T && !s; t++)
        s = ac_logmel_frame(&lm, win, 0, (int64_t)N, (int64_t)N, (int64_t)t, mel + t * M);
    if (!s) ac_logmel_whisper_scale(mel, T * M);
    ac_logmel_free(&lm);
    free(win);
    return s;
}
