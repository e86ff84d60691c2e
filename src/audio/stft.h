/* Short-time Fourier transforms as torch.stft / torch.istft compute them,
 * and the "same" framing of Vocos. A frame is n_fft samples; the window
 * (win <= n_fft samples) sits in its middle, starting at (n_fft - win)/2, as
 * torch pads a short window. Frames are computed one at a time from a buffer
 * holding part of the signal, so a stream of any length needs bounded memory;
 * ac_stft_signal does a whole signal at once. */
#ifndef AC_AUDIO_STFT_H
#define AC_AUDIO_STFT_H

#include <stdint.h>

#include "audio/fft.h"

typedef enum {
    AC_STFT_CENTER, /* n_fft/2 padded each side: frame t centred on sample t*hop (torch center=True) */
    AC_STFT_START,  /* no padding: frame t starts at sample t*hop (torch center=False) */
    AC_STFT_SAME,   /* (n_fft-hop)/2 padded each side: n/hop frames, and the ISTFT
                       of T frames is T*hop samples (Vocos padding="same") */
} ac_stft_layout;

/* What the padding holds. Reflection mirrors about the end samples without
 * repeating them (torch pad_mode="reflect"). A signal shorter than the
 * padding, which torch refuses, is mirrored again at its other end
 * (numpy.pad mode="reflect"); a single sample repeats; no samples give 0. */
typedef enum { AC_PAD_ZERO, AC_PAD_REFLECT } ac_stft_pad;

/* What a frame gives: n_fft/2+1 values, or as many (re, im) pairs. */
typedef enum { AC_SPEC_POWER, AC_SPEC_MAGNITUDE, AC_SPEC_COMPLEX } ac_spec_kind;

typedef struct ac_stft_params {
    int n_fft, hop, win;
    const float *window;   /* [win]; NULL: ones (torch's default); must outlive the STFT */
    ac_stft_layout layout;
    ac_stft_pad pad;
} ac_stft_params;

typedef struct ac_stft {
    ac_stft_params p;
    int bins;          /* n_fft/2 + 1 */
    int pad_len;       /* samples padded before the signal */
    const float *window;
    float *ones;       /* the window when none is given */
    ac_rfft *fft;
    float *frame;      /* [n_fft] scratch */
} ac_stft;

/* Fails (AC_ERR_ARG) unless n_fft >= 1, hop >= 1, 1 <= win <= n_fft, and,
 * for AC_STFT_SAME, hop <= n_fft. */
ac_status ac_stft_init(ac_stft *s, const ac_stft_params *p);
void ac_stft_free(ac_stft *s);

/* Number of frames of a signal of N samples (0 when the padded signal is
 * shorter than n_fft). */
int64_t ac_stft_frames(const ac_stft *s, int64_t n);
/* First sample and end (exclusive) of the window of frame T. Samples there
 * outside [0, n) are padding; with AC_PAD_REFLECT the frame reads their
 * mirror images instead, which lie within n_fft/2 samples of the ends. */
int64_t ac_stft_frame_begin(const ac_stft *s, int64_t t);
int64_t ac_stft_frame_end(const ac_stft *s, int64_t t);

/* Frame T of a signal of N samples, of which BUF holds samples
 * [base, base + len), as KIND into OUT. Fails (AC_ERR_ARG) if the frame
 * reads a sample the buffer does not hold. */
ac_status ac_stft_frame(ac_stft *s, const float *buf, int64_t base, int64_t len, int64_t n, int64_t t,
                        ac_spec_kind kind, float *out);
/* Every frame of X[n]: out[ac_stft_frames(n)][n_fft/2+1] (complex: pairs). */
ac_status ac_stft_signal(ac_stft *s, const float *x, int64_t n, ac_spec_kind kind, float *out);

/* Samples the ISTFT of FRAMES frames gives by default: the overlap-added
 * n_fft + hop*(frames-1) less the padding at both ends. */
int64_t ac_istft_length(const ac_stft *s, int64_t frames);
/* torch.istft (AC_STFT_CENTER, AC_STFT_START) and Vocos's "same" ISTFT:
 * inverse real FFT of each frame of SPEC[frames][n_fft/2+1] (re, im pairs),
 * times the window, overlap-added at hop, divided by the overlap-added
 * squared window, less the padding in front; LENGTH samples into OUT
 * (LENGTH < 0: ac_istft_length; past the overlap-added signal: zeros).
 * Fails (AC_ERR_ARG), as torch does, where that window sum is < 1e-11. */
ac_status ac_istft(ac_stft *s, const float *spec, int64_t frames, int64_t length, float *out);

#endif
