#include "models/vevo2/vocoder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/stft.h"
#include "base/error.h"
#include "base/mem.h"

#define MAX_MAGNITUDE 100.0f   /* Vocos clips exp(log-magnitude) here */

ac_status vevo2_vocoder_config_parse(const ac_config *c, const cJSON *obj, const char *where,
                                     vevo2_vocoder_config *out)
{
    vevo2_vocoder_config g;
    const char *keys[] = {"input_channels", "dim", "intermediate_dim", "num_layers", "n_fft", "hop_size"};
    int *vals[] = {&g.input_channels, &g.dim, &g.intermediate, &g.layers, &g.n_fft, &g.hop};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        AC_TRY(ac_config_int(c, obj, where, keys[i], vals[i]));
        if (*vals[i] < 1)
            return ac_error(AC_ERR_MODEL, "%s: key '%s.%s' = %d must be positive", c->file, where, keys[i], *vals[i]);
    }
    if (g.n_fft % 2 || g.hop > g.n_fft)
        return ac_error(AC_ERR_MODEL, "%s: '%s.n_fft' %d must be even and at least hop_size %d", c->file, where,
                        g.n_fft, g.hop);
    if (cJSON_GetObjectItemCaseSensitive(obj, "padding")) {
        const char *pad;
        AC_TRY(ac_config_string(c, obj, where, "padding", &pad));
        if (!pad || strcmp(pad, "same") != 0)
            return ac_error(AC_ERR_UNSUPPORTED, "%s: key '%s.padding' is '%s'; only \"same\" is supported", c->file,
                            where, pad ? pad : "null");
    }
    *out = g;
    return AC_OK;
}

static ac_status load_weights(vevo2_vocoder *v)
{
    const vevo2_vocoder_config *c = &v->cfg;
    int out = c->n_fft + 2;
    AC_TRY(ac_vocos_backbone_load(v->weights, "backbone.", c->input_channels, c->dim, c->intermediate, c->layers,
                                  &v->backbone));
    AC_TRY(ac_weights_linear(v->weights, out, c->dim, &v->head, &v->head_b, "head.out"));
    return ac_weights_vec(v->weights, c->n_fft, &v->window, "head.istft.window");
}

ac_status vevo2_vocoder_load(const char *weights_path, const vevo2_vocoder_config *cfg, ac_weight_type type,
                             vevo2_vocoder **out)
{
    *out = NULL;
    ac_weights *w;
    AC_TRY(ac_weights_open_as(weights_path, type, &w));
    return vevo2_vocoder_load_from(w, cfg, out);
}

ac_status vevo2_vocoder_load_from(ac_weights *w, const vevo2_vocoder_config *cfg, vevo2_vocoder **out)
{
    *out = NULL;
    vevo2_vocoder *v = ac_calloc(1, sizeof *v);
    if (!v) {
        ac_weights_free(w);
        return AC_ERR_NOMEM;
    }
    v->cfg = *cfg;
    v->weights = w;
    ac_status s = load_weights(v);
    if (s) {
        vevo2_vocoder_free(v);
        return s;
    }
    *out = v;
    return AC_OK;
}

void vevo2_vocoder_free(vevo2_vocoder *v)
{
    if (!v) return;
    ac_vocos_backbone_free(&v->backbone);
    ac_weights_free(v->weights);
    free(v);
}

ac_status vevo2_vocoder_forward(const vevo2_vocoder *v, const float *mel, size_t F, ac_arena *a, float *wav)
{
    const vevo2_vocoder_config *c = &v->cfg;
    if (F == 0) return ac_error(AC_ERR_ARG, "vocoder: no mel frames");
    size_t D = (size_t)c->dim, bins = (size_t)c->n_fft / 2 + 1, out = 2 * bins;
    float *x = ac_arena_floats(a, F * D), *h = ac_arena_floats(a, F * out), *spec = ac_arena_floats(a, F * out);
    float *scratch = ac_arena_floats(a, ac_vocos_backbone_scratch(&v->backbone, F));
    if (!x || !h || !spec || !scratch) return AC_ERR_NOMEM;
    ac_vocos_backbone_forward(&v->backbone, mel, F, x, scratch);
    ac_matmul(x, &v->head, v->head_b, h, F);
    /* the first half of each row is the log-magnitude, the second the phase */
    for (size_t t = 0; t < F; t++) {
        const float *lm = h + t * out, *ph = lm + bins;
        float *s = spec + t * out;
        for (size_t k = 0; k < bins; k++) {
            float mag = fminf(expf(lm[k]), MAX_MAGNITUDE);
            s[2 * k] = mag * cosf(ph[k]);
            s[2 * k + 1] = mag * sinf(ph[k]);
        }
    }
    ac_stft istft;
    ac_stft_params p = {.n_fft = c->n_fft, .hop = c->hop, .win = c->n_fft, .window = v->window,
                        .layout = AC_STFT_SAME, .pad = AC_PAD_ZERO};
    AC_TRY(ac_stft_init(&istft, &p));
    ac_status s = ac_istft(&istft, spec, (int64_t)F, (int64_t)(F * (size_t)c->hop), wav);
    ac_stft_free(&istft);
    return s;
}
