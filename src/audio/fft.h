/* Discrete Fourier transforms of any length, on kissfft. Complex values are
 * interleaved (re, im) float pairs, the layout of torch.view_as_real.
 * Forward transforms are unnormalized; inverse ones divide by N, as numpy's
 * and torch's default ("backward") norm. Input and output must not overlap.
 * A plan owns scratch: one thread at a time. */
#ifndef AC_AUDIO_FFT_H
#define AC_AUDIO_FFT_H

#include "audioc.h"

/* Complex transform of N points. */
typedef struct ac_fft ac_fft;

ac_status ac_fft_new(int n, ac_fft **out);
/* out[2n] = DFT of in[2n] (sum of x[j] e^{-2 pi i jk/n}) */
void ac_fft_forward(ac_fft *f, const float *in, float *out);
/* out[2n] = inverse DFT of in[2n] (e^{+2 pi i jk/n}, divided by n) */
void ac_fft_inverse(ac_fft *f, const float *in, float *out);
void ac_fft_free(ac_fft *f);

/* Real signals of N points and their N/2+1 non-negative frequency bins.
 * Even N uses kissfft's real transform; odd N (which it cannot do) the
 * complex one. */
typedef struct ac_rfft ac_rfft;

ac_status ac_rfft_new(int n, ac_rfft **out);
/* out[2(n/2+1)] = bins 0..n/2 of the DFT of in[n] (numpy.fft.rfft) */
void ac_rfft_forward(ac_rfft *f, const float *in, float *out);
/* power[n/2+1] = |X[k]|^2, magnitude[n/2+1] = |X[k]| of the same DFT */
void ac_rfft_power(ac_rfft *f, const float *in, float *power);
void ac_rfft_magnitude(ac_rfft *f, const float *in, float *magnitude);
/* out[n] = the real signal whose DFT has bins in[2(n/2+1)] (numpy.fft.irfft
 * with n): the imaginary parts of bin 0 and, for even n, bin n/2 are
 * ignored, as every c2r transform does. */
void ac_rfft_inverse(ac_rfft *f, const float *in, float *out);
void ac_rfft_free(ac_rfft *f);

#endif
