#include "audio/mel.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"

ac_status ac_melbank_init(ac_melbank *m, const float *fb, int n_mels, int n_bins)
{
    m->n_mels = n_mels;
    m->n_bins = n_bins;
    m->fb = fb;
    m->lo = ac_calloc((size_t)n_mels, sizeof *m->lo);
    m->hi = ac_calloc((size_t)n_mels, sizeof *m->hi);
    if (!m->lo || !m->hi) {
        ac_melbank_free(m);
        return AC_ERR_NOMEM;
    }
    for (int i = 0; i < n_mels; i++) {
        const float *row = fb + (size_t)i * n_bins;
        int lo = 0, hi = n_bins;
        while (lo < hi && row[lo] == 0) lo++;
        while (hi > lo && row[hi - 1] == 0) hi--;
        m->lo[i] = lo;
        m->hi[i] = hi;
    }
    return AC_OK;
}

void ac_melbank_apply(const ac_melbank *m, const float *power, float *mel)
{
    for (int i = 0; i < m->n_mels; i++) {
        const float *row = m->fb + (size_t)i * m->n_bins;
        float acc = 0;
        for (int k = m->lo[i]; k < m->hi[i]; k++) acc += row[k] * power[k];
        mel[i] = acc;
    }
}

void ac_melbank_free(ac_melbank *m)
{
    free(m->lo);
    free(m->hi);
    m->lo = m->hi = NULL;
}

/* Slaney's mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above. */
static double hz_to_mel(double f)
{
    return f < 1000 ? f / (200.0 / 3) : 15 + log(f / 1000) / (log(6.4) / 27);
}

static double mel_to_hz(double m)
{
    return m < 15 ? m * (200.0 / 3) : 1000 * exp((m - 15) * (log(6.4) / 27));
}

void ac_mel_slaney(int n_mels, int n_fft, int rate, double f_min, double f_max, float *fb)
{
    int bins = n_fft / 2 + 1;
    double lo = hz_to_mel(f_min), hi = hz_to_mel(f_max);
    for (int m = 0; m < n_mels; m++) {
        double f0 = mel_to_hz(lo + (hi - lo) * m / (n_mels + 1));
        double f1 = mel_to_hz(lo + (hi - lo) * (m + 1) / (n_mels + 1));
        double f2 = mel_to_hz(lo + (hi - lo) * (m + 2) / (n_mels + 1));
        double norm = 2.0 / (f2 - f0);
        for (int k = 0; k < bins; k++) {
            double f = (double)k * rate / n_fft;
            double w = fmin((f - f0) / (f1 - f0), (f2 - f) / (f2 - f1));
            fb[(size_t)m * bins + k] = (float)(w > 0 ? w * norm : 0);
        }
    }
}

void ac_hann(int n, int periodic, float *w)
{
    const double pi = 3.14159265358979323846;
    int denom = periodic ? n : n - 1;
    for (int i = 0; i < n; i++) w[i] = denom > 0 ? (float)(0.5 - 0.5 * cos(2 * pi * i / denom)) : 1.0f;
}
