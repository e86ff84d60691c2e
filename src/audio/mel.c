#include "audio/mel.h"

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
