#include "models/vevo2/timbre_mel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/stft.h"
#include "base/error.h"
#include "base/mem.h"

ac_status vevo2_mel_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_mel_config *out)
{
    vevo2_mel_config g;
    const char *ik[] = {"sample_rate", "n_fft", "hop_size", "win_size", "num_mels"};
    int *iv[] = {&g.sample_rate, &g.n_fft, &g.hop, &g.win, &g.n_mels};
    for (size_t i = 0; i < sizeof ik / sizeof ik[0]; i++) {
        AC_TRY(ac_config_int(c, obj, where, ik[i], iv[i]));
        if (*iv[i] < 1)
            return ac_error(AC_ERR_MODEL, "%s: key '%s.%s' = %d must be positive", c->file, where, ik[i], *iv[i]);
    }
    AC_TRY(ac_config_double(c, obj, where, "fmin", &g.fmin));
    const cJSON *fmax = cJSON_GetObjectItemCaseSensitive(obj, "fmax");
    g.fmax = g.sample_rate / 2.0;
    if (!fmax || !cJSON_IsNull(fmax)) AC_TRY(ac_config_double(c, obj, where, "fmax", &g.fmax));
    AC_TRY(ac_config_double(c, obj, where, "mel_mean", &g.mel_mean));
    AC_TRY(ac_config_double(c, obj, where, "mel_var", &g.mel_var));
    if (g.win > g.n_fft || g.hop > g.n_fft || !(g.mel_var > 0) || !(g.fmin >= 0 && g.fmin < g.fmax))
        return ac_error(AC_ERR_MODEL,
                        "%s: '%s': need win_size, hop_size <= n_fft (%d, %d, %d), mel_var > 0 (%g), 0 <= fmin < fmax (%g, %g)",
                        c->file, where, g.win, g.hop, g.n_fft, g.mel_var, g.fmin, g.fmax);
    *out = g;
    return AC_OK;
}

ac_status vevo2_timbre_mel_init(const vevo2_mel_config *cfg, vevo2_timbre_mel *m)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    int bins = cfg->n_fft / 2 + 1;
    m->window = ac_malloc((size_t)cfg->win * sizeof *m->window);
    m->fb = ac_malloc((size_t)cfg->n_mels * bins * sizeof *m->fb);
    if (!m->window || !m->fb) {
        vevo2_timbre_mel_free(m);
        return AC_ERR_NOMEM;
    }
    ac_hann(cfg->win, 1, m->window);
    ac_mel_slaney(cfg->n_mels, cfg->n_fft, cfg->sample_rate, cfg->fmin, cfg->fmax, m->fb);
    ac_status s = ac_melbank_init(&m->bank, m->fb, cfg->n_mels, bins);
    if (s) vevo2_timbre_mel_free(m);
    return s;
}

void vevo2_timbre_mel_free(vevo2_timbre_mel *m)
{
    ac_melbank_free(&m->bank);
    free(m->window);
    free(m->fb);
    memset(m, 0, sizeof *m);
}

int64_t vevo2_timbre_mel_frames(const vevo2_timbre_mel *m, int64_t n) { return n > 0 ? n / m->cfg.hop : 0; }

ac_status vevo2_timbre_mel_compute(const vevo2_timbre_mel *m, const float *wav, int64_t n, float *out)
{
    const vevo2_mel_config *c = &m->cfg;
    int pad = (c->n_fft - c->hop) / 2, bins = c->n_fft / 2 + 1;
    if (n <= pad || n < c->hop)
        return ac_error(AC_ERR_ARG, "timbre mel: %lld samples; more than %d are needed (the reflect padding)",
                        (long long)n, pad > c->hop - 1 ? pad : c->hop - 1);
    ac_stft s;
    ac_stft_params p = {.n_fft = c->n_fft, .hop = c->hop, .win = c->win, .window = m->window,
                        .layout = AC_STFT_SAME, .pad = AC_PAD_REFLECT};
    AC_TRY(ac_stft_init(&s, &p));
    float *power = ac_malloc((size_t)bins * sizeof *power);
    if (!power) {
        ac_stft_free(&s);
        return AC_ERR_NOMEM;
    }
    int64_t frames = vevo2_timbre_mel_frames(m, n);
    float inv_std = (float)(1.0 / sqrt(c->mel_var)), mean = (float)c->mel_mean;
    ac_status st = AC_OK;
    for (int64_t t = 0; !st && t < frames; t++) {
        st = ac_stft_frame(&s, wav, 0, n, n, t, AC_SPEC_POWER, power);
        for (int k = 0; k < bins; k++) power[k] = sqrtf(power[k] + 1e-9f);
        float *row = out + t * c->n_mels;
        ac_melbank_apply(&m->bank, power, row);
        for (int i = 0; i < c->n_mels; i++) row[i] = (logf(fmaxf(row[i], 1e-5f)) - mean) * inv_std;
    }
    free(power);
    ac_stft_free(&s);
    return st;
}
