#include "models/vevo2/coco.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "tensor/kernels.h"

static ac_status positive(const ac_config *c, const char *where, const char *key, int v)
{
    if (v < 1) return ac_error(AC_ERR_MODEL, "%s: key '%s.%s' = %d must be positive", c->file, where, key, v);
    return AC_OK;
}

ac_status vevo2_coco_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_coco_config *out)
{
    vevo2_coco_config g = {0};
    const char *type;
    AC_TRY(ac_config_string(c, obj, where, "coco_type", &type));
    if (type && strcmp(type, "content_style") == 0) g.type = VEVO2_COCO_CONTENT_STYLE;
    else if (type && strcmp(type, "style") == 0) g.type = VEVO2_COCO_STYLE;
    else
        return ac_error(AC_ERR_UNSUPPORTED, "%s: key '%s.coco_type' is '%s', expected 'content_style' or 'style'",
                        c->file, where, type ? type : "null");
    char enc_where[256];
    const cJSON *enc;
    snprintf(enc_where, sizeof enc_where, "%s.encoder", where);
    AC_TRY(ac_config_object(c, obj, where, "encoder", &enc));
    struct { const cJSON *obj; const char *where, *key; int *v; } keys[] = {
        {obj, where, "downsample_rate", &g.downsample_rate},
        {obj, where, "codebook_size", &g.codebook_size},
        {obj, where, "hidden_size", &g.hidden},
        {obj, where, "codebook_dim", &g.codebook_dim},
        {enc, enc_where, "vocos_dim", &g.vocos_dim},
        {enc, enc_where, "vocos_intermediate_dim", &g.vocos_intermediate},
        {enc, enc_where, "vocos_num_layers", &g.vocos_layers},
        {obj, where, "whisper_dim", &g.whisper_dim},
        {obj, where, "chromagram_dim", &g.chroma_dim},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        /* a style tokenizer takes no Whisper features: upstream never reads
         * its whisper_dim, and VevoSing's configs leave it out */
        if (keys[i].v == &g.whisper_dim && g.type == VEVO2_COCO_STYLE &&
            !cJSON_GetObjectItemCaseSensitive(obj, "whisper_dim"))
            continue;
        AC_TRY(ac_config_int(c, keys[i].obj, keys[i].where, keys[i].key, keys[i].v));
        AC_TRY(positive(c, keys[i].where, keys[i].key, *keys[i].v));
    }
    int r = g.downsample_rate;
    if ((r & (r - 1)) || r > 1 << VEVO2_COCO_MAX_DOWN)
        return ac_error(AC_ERR_MODEL, "%s: key '%s.downsample_rate' = %d is not a power of two up to %d", c->file,
                        where, r, 1 << VEVO2_COCO_MAX_DOWN);
    if (cJSON_GetObjectItemCaseSensitive(obj, "use_normed_whisper"))
        AC_TRY(ac_config_bool(c, obj, where, "use_normed_whisper", &g.use_normed_whisper));
    *out = g;
    return AC_OK;
}

size_t vevo2_coco_tokens(const vevo2_coco_config *cfg, size_t T)
{
    return (T + (size_t)cfg->downsample_rate - 1) / (size_t)cfg->downsample_rate;
}

static ac_status load_weights(vevo2_coco *m)
{
    const vevo2_coco_config *c = &m->cfg;
    int H = c->hidden;
    if (c->type == VEVO2_COCO_CONTENT_STYLE)
        AC_TRY(ac_weights_linear(m->weights, H, c->whisper_dim, &m->whisper_in, &m->whisper_in_b, "whisper_input_layer"));
    AC_TRY(ac_weights_linear(m->weights, H, c->chroma_dim, &m->chroma_in, &m->chroma_in_b, "chromagram_input_layer"));
    m->down = (ac_conv1d_shape){.cin = H, .cout = H, .kernel = 3, .stride = 2, .pad = 1, .dilation = 1};
    for (int r = c->downsample_rate; r > 1; r /= 2) m->n_down++;
    for (int i = 0; i < m->n_down; i++) { /* odd indices: the GELUs */
        AC_TRY(ac_weights_mat(m->weights, AC_SHAPE(H, H, 3), &m->down_w[i], "downsample_layers.%d.weight", 2 * i));
        AC_TRY(ac_weights_vec(m->weights, H, &m->down_b[i], "downsample_layers.%d.bias", 2 * i));
    }
    AC_TRY(ac_vocos_backbone_load(m->weights, "encoder.0.", H, c->vocos_dim, c->vocos_intermediate, c->vocos_layers,
                                  &m->encoder));
    AC_TRY(ac_weights_linear(m->weights, H, c->vocos_dim, &m->encoder_out, &m->encoder_out_b, "encoder.1"));
    return ac_fvq_load(m->weights, "quantizer.quantizers.0", H, c->codebook_dim, c->codebook_size, &m->vq);
}

ac_status vevo2_coco_load(const char *weights_path, const vevo2_coco_config *cfg, ac_weight_type type,
                          vevo2_coco **out)
{
    *out = NULL;
    ac_weights *w;
    AC_TRY(ac_weights_open_as(weights_path, type, &w));
    return vevo2_coco_load_from(w, cfg, out);
}

ac_status vevo2_coco_load_from(ac_weights *w, const vevo2_coco_config *cfg, vevo2_coco **out)
{
    *out = NULL;
    vevo2_coco *m = ac_calloc(1, sizeof *m);
    if (!m) {
        ac_weights_free(w);
        return AC_ERR_NOMEM;
    }
    m->cfg = *cfg;
    m->weights = w;
    ac_status s = load_weights(m);
    if (s) {
        vevo2_coco_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void vevo2_coco_free(vevo2_coco *m)
{
    if (!m) return;
    ac_vocos_backbone_free(&m->encoder);
    ac_weights_free(m->weights);
    free(m);
}

ac_status vevo2_coco_encode(const vevo2_coco *m, const float *whisper, const float *chroma, size_t T, ac_arena *a,
                            float *latents, int32_t *ids, float *gaps)
{
    const vevo2_coco_config *c = &m->cfg;
    if (T == 0) return ac_error(AC_ERR_ARG, "Coco tokenizer: no frames to encode");
    if (c->type == VEVO2_COCO_CONTENT_STYLE && !whisper)
        return ac_error(AC_ERR_ARG, "Coco content-style tokenizer: Whisper features are required");
    size_t H = (size_t)c->hidden, n = vevo2_coco_tokens(c, T);
    size_t conv = m->n_down ? ac_conv1d_scratch(&m->down, 1, T) : 0, enc = ac_vocos_backbone_scratch(&m->encoder, n);
    float *x = ac_arena_floats(a, T * H), *y = ac_arena_floats(a, T * H);
    float *scratch = ac_arena_floats(a, conv > enc ? conv : enc);
    float *e = ac_arena_floats(a, n * (size_t)c->vocos_dim);
    if (!x || !y || !scratch || !e) return AC_ERR_NOMEM;

    ac_matmul(chroma, &m->chroma_in, m->chroma_in_b, x, T);
    if (c->type == VEVO2_COCO_CONTENT_STYLE) {
        ac_matmul(whisper, &m->whisper_in, m->whisper_in_b, y, T);
        ac_axpy(x, y, 1.0f, T * H);
    }
    size_t L = T;
    for (int i = 0; i < m->n_down; i++) {
        ac_conv1d_mat(&m->down, x, 1, L, &m->down_w[i], m->down_b[i], y, scratch);
        L = ac_conv1d_out_len(&m->down, L);
        ac_gelu(y, L * H);
        float *t = x;
        x = y, y = t;
    }
    ac_vocos_backbone_forward(&m->encoder, x, L, e, scratch);
    ac_matmul(e, &m->encoder_out, m->encoder_out_b, y, L);
    ac_fvq_encode(&m->vq, y, L, latents, ids, gaps);
    return AC_OK;
}
