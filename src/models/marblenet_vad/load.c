/* MarbleNet config (the sidecar JSON) and weights, checked against each
 * other. BatchNorms are folded to scale/shift at load time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "io/config.h"
#include "models/marblenet_vad/model.h"

#define BN_EPS 1e-3f

static const char *const known_keys[] = {
    "jasper", "label_count", "labels", "labels_file", "n_fft", "n_mels", "normalize",
    "num_classes", "pad_to", "sample_rate", "target", "window", "window_size",
    "window_stride", NULL};
static const char *const block_keys[] = {
    "filters", "repeat", "kernel", "stride", "dilation", "residual", "separable", NULL};

static ac_status parse_block(const ac_config *c, const cJSON *obj, int index, mb_block *b)
{
    char where[32];
    snprintf(where, sizeof where, "jasper[%d]", index);
    if (!cJSON_IsObject(obj)) return ac_error(AC_ERR_MODEL, "%s: %s is not an object", c->file, where);
    ac_config_warn_unknown(c, obj, where, block_keys);
    AC_TRY(ac_config_int(c, obj, where, "filters", &b->filters));
    AC_TRY(ac_config_int(c, obj, where, "repeat", &b->repeat));
    AC_TRY(ac_config_int(c, obj, where, "kernel", &b->kernel));
    AC_TRY(ac_config_int(c, obj, where, "stride", &b->stride));
    AC_TRY(ac_config_int(c, obj, where, "dilation", &b->dilation));
    AC_TRY(ac_config_bool(c, obj, where, "residual", &b->residual));
    AC_TRY(ac_config_bool(c, obj, where, "separable", &b->separable));
    if (b->filters < 1 || b->filters > 4096 || b->repeat < 1 || b->repeat > MARBLENET_MAX_REPEAT ||
        b->kernel < 1 || b->kernel > 255 || b->kernel % 2 == 0 || b->stride < 1 || b->stride > 8 ||
        b->dilation < 1 || b->dilation > 64)
        return ac_error(AC_ERR_MODEL, "%s: %s has out-of-range values (filters %d, repeat %d, kernel %d, "
                        "stride %d, dilation %d)", c->file, where, b->filters, b->repeat, b->kernel,
                        b->stride, b->dilation);
    if (b->stride > 1 && (b->repeat > 1 || b->residual))
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %s: a strided block must have one repeat and no residual",
                        c->file, where);
    return AC_OK;
}

static ac_status parse_config(ac_marblenet *m, const ac_config *c)
{
    ac_config_warn_unknown(c, NULL, NULL, known_keys);
    double win_s, hop_s;
    const char *window, *normalize;
    const cJSON *jasper;
    AC_TRY(ac_config_int(c, NULL, NULL, "sample_rate", &m->rate));
    AC_TRY(ac_config_int(c, NULL, NULL, "n_fft", &m->n_fft));
    AC_TRY(ac_config_int(c, NULL, NULL, "n_mels", &m->n_mels));
    AC_TRY(ac_config_double(c, NULL, NULL, "window_size", &win_s));
    AC_TRY(ac_config_double(c, NULL, NULL, "window_stride", &hop_s));
    AC_TRY(ac_config_string(c, NULL, NULL, "window", &window));
    AC_TRY(ac_config_string(c, NULL, NULL, "normalize", &normalize));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "pad_to", 0, &m->pad_to));
    AC_TRY(ac_config_array(c, NULL, NULL, "jasper", &jasper));
    if (m->rate < 1000 || m->rate > 192000)
        return ac_error(AC_ERR_MODEL, "%s: sample_rate %d is out of range", c->file, m->rate);
    if (!(win_s > 0 && win_s < 1 && hop_s > 0 && hop_s < 1))
        return ac_error(AC_ERR_MODEL, "%s: window_size and window_stride must be in (0, 1) seconds", c->file);
    m->win = (int)lround(win_s * m->rate);
    m->hop = (int)lround(hop_s * m->rate);
    if (m->n_fft < 2 || m->n_fft % 2 || m->n_fft > 65536 || m->win > m->n_fft || m->hop < 1)
        return ac_error(AC_ERR_MODEL, "%s: n_fft %d must be even and at least the window (%d samples)",
                        c->file, m->n_fft, m->win);
    if (m->n_mels < 1 || m->n_mels > 1024)
        return ac_error(AC_ERR_MODEL, "%s: n_mels %d is out of range", c->file, m->n_mels);
    if (!window || strcmp(window, "hann") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: window '%s' is not supported (hann)", c->file,
                        window ? window : "null");
    if (normalize && strcmp(normalize, "None") != 0 && strcmp(normalize, "none") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: normalize '%s' is not supported (None)", c->file, normalize);
    if (m->pad_to < 0 || m->pad_to > 1024)
        return ac_error(AC_ERR_MODEL, "%s: pad_to %d is out of range", c->file, m->pad_to);
    int n = cJSON_GetArraySize(jasper);
    if (n < 1 || n > MARBLENET_MAX_BLOCKS)
        return ac_error(AC_ERR_MODEL, "%s: jasper has %d blocks (1..%d)", c->file, n, MARBLENET_MAX_BLOCKS);
    m->n_blocks = n;
    int i = 0;
    for (const cJSON *it = jasper->child; it; it = it->next, i++)
        AC_TRY(parse_block(c, it, i, &m->blocks[i]));
    /* num_classes is checked against the decoder weight later */
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "num_classes", 0, &m->n_classes));
    return AC_OK;
}

ac_status ac_marblenet_load_config(ac_marblenet *m, const char *config_path)
{
    ac_config *c;
    AC_TRY(ac_config_load(config_path, &c));
    ac_status s = parse_config(m, c);
    ac_config_free(c);
    return s;
}

ac_status ac_marblenet_parse_config(ac_marblenet *m, const char *text, size_t len, const char *name)
{
    ac_config *c;
    AC_TRY(ac_config_parse(text, len, name, &c));
    ac_status s = parse_config(m, c);
    ac_config_free(c);
    return s;
}

#define MCONV "encoder.encoder.%d.mconv.%d"

static ac_status load_repeat(ac_weights *w, int bi, mb_block *b, int r, int cin)
{
    mb_repeat *rp = &b->rep[r];
    int K = b->kernel, cout = b->filters;
    int stride = r == 0 ? b->stride : 1;
    int bn; /* the index of the repeat's BatchNorm */
    if (b->separable) {
        const float *dw, *pw;
        AC_TRY(ac_weights_f32(w, AC_SHAPE(cin, 1, K), &dw, MCONV ".conv.weight", bi, 5 * r));
        rp->dw = ac_weights_scratch(w, (size_t)cin * K);
        if (!rp->dw) return AC_ERR_NOMEM;
        ac_depthwise_weight_from_torch(dw, rp->dw, cin, K);
        AC_TRY(ac_weights_f32(w, AC_SHAPE(cout, cin, 1), &pw, MCONV ".conv.weight", bi, 5 * r + 1));
        rp->pw = ac_mat_f32(pw, (size_t)cout, (size_t)cin);
        bn = 5 * r + 2;
        rp->shape = (ac_conv1d_shape){.cin = cin, .cout = cin, .kernel = K,
                                      .stride = stride, .pad = b->dilation * (K - 1) / 2, .dilation = b->dilation};
    } else {
        const float *cw;
        AC_TRY(ac_weights_f32(w, AC_SHAPE(cout, cin, K), &cw, MCONV ".conv.weight", bi, 3 * r));
        rp->conv = ac_weights_scratch(w, (size_t)cout * cin * K);
        if (!rp->conv) return AC_ERR_NOMEM;
        ac_conv1d_weight_from_torch(cw, rp->conv, cout, cin, K);
        bn = 3 * r + 1;
        rp->shape = (ac_conv1d_shape){.cin = cin, .cout = cout, .kernel = K,
                                      .stride = stride, .pad = b->dilation * (K - 1) / 2, .dilation = b->dilation};
    }
    return ac_weights_batchnorm(w, cout, BN_EPS, &rp->bn_scale, &rp->bn_shift, MCONV, bi, bn);
}

ac_status ac_marblenet_load_weights(ac_marblenet *m)
{
    ac_weights *w = m->weights;
    int bins = m->n_fft / 2 + 1;
    const float *fb;
    AC_TRY(ac_weights_vec(w, m->win, &m->window, "preprocessor.featurizer.window"));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(1, m->n_mels, bins), &fb, "preprocessor.featurizer.fb"));
    AC_TRY(ac_melbank_init(&m->mel, fb, m->n_mels, bins));
    int cin = m->n_mels;
    m->stride = 1;
    m->max_channels = cin;
    double radius = 0; /* receptive radius in feature frames */
    for (int bi = 0; bi < m->n_blocks; bi++) {
        mb_block *b = &m->blocks[bi];
        b->cin = cin;
        for (int r = 0; r < b->repeat; r++) {
            AC_TRY(load_repeat(w, bi, b, r, r == 0 ? cin : b->filters));
            radius += (double)m->stride * b->dilation * (b->kernel - 1) / 2;
        }
        if (b->residual) {
            const float *pw;
            AC_TRY(ac_weights_f32(w, AC_SHAPE(b->filters, cin, 1), &pw, "encoder.encoder.%d.res.0.0.conv.weight", bi));
            b->res_pw = ac_mat_f32(pw, (size_t)b->filters, (size_t)cin);
            AC_TRY(ac_weights_batchnorm(w, b->filters, BN_EPS, &b->res_scale, &b->res_shift,
                                        "encoder.encoder.%d.res.0.1", bi));
        }
        m->stride *= b->stride;
        cin = b->filters;
        if (cin > m->max_channels) m->max_channels = cin;
    }
    m->margin = (int)ceil(radius / m->stride) + 1;
    /* the decoder's row count is the class count */
    const ac_tensor *dec = ac_weights_find(w, "decoder.layer0.weight");
    int classes = dec && dec->ndim == 2 ? (int)dec->shape[0] : 2;
    if (m->n_classes && classes != m->n_classes)
        return ac_error(AC_ERR_MODEL, "%s: decoder.layer0.weight has %d classes but the config says num_classes %d",
                        w->file, classes, m->n_classes);
    if (classes < 1 || classes > 64)
        return ac_error(AC_ERR_MODEL, "%s: decoder.layer0.weight has %d classes", w->file, classes);
    m->n_classes = classes;
    const float *dw;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(classes, cin), &dw, "decoder.layer0.weight"));
    m->dec_w = ac_mat_f32(dw, (size_t)classes, (size_t)cin);
    AC_TRY(ac_weights_vec(w, classes, &m->dec_b, "decoder.layer0.bias"));
    return AC_OK;
}

size_t ac_marblenet_out_len(const ac_marblenet *m, size_t T)
{
    for (int bi = 0; bi < m->n_blocks; bi++)
        for (int r = 0; r < m->blocks[bi].repeat; r++) T = ac_conv1d_out_len(&m->blocks[bi].rep[r].shape, T);
    return T;
}

/* "<dir>/marblenet_vad.safetensors" for a folder; the config is the
 * sidecar "<stem>_config.json". */
ac_status ac_marblenet_load(const char *path, ac_marblenet **out)
{
    *out = NULL;
    char weights[4096], config[4200];
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(weights, sizeof weights, "%s/marblenet_vad.safetensors", path);
    else
        snprintf(weights, sizeof weights, "%s", path);
    size_t n = strlen(weights);
    const char *ext = ".safetensors";
    size_t el = strlen(ext);
    if (n > el && strcmp(weights + n - el, ext) == 0) n -= el;
    snprintf(config, sizeof config, "%.*s_config.json", (int)n, weights);

    ac_marblenet *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = ac_weights_open(weights, &m->weights);
    const ac_embedded_file *e = s ? NULL : ac_weights_embedded(m->weights, AC_MARBLENET_CONFIG);
    if (e) {
        char name[4300];
        snprintf(name, sizeof name, "%s in %s", AC_MARBLENET_CONFIG, m->weights->file);
        s = ac_marblenet_parse_config(m, e->data, e->size, name);
    } else if (!s) {
        snprintf(m->config, sizeof m->config, "%s", config);
        s = ac_marblenet_load_config(m, config);
    }
    if (!s) s = ac_marblenet_load_weights(m);
    if (s) {
        ac_marblenet_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void ac_marblenet_free(ac_marblenet *m)
{
    if (!m) return;
    ac_melbank_free(&m->mel);
    ac_weights_free(m->weights);
    free(m);
}

const char *ac_marblenet_config_path(const ac_marblenet *m) { return m->config; }
int ac_marblenet_rate(const ac_marblenet *m) { return m->rate; }
int ac_marblenet_hop(const ac_marblenet *m) { return m->hop * m->stride; }
