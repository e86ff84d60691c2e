/* Feature normalization stats: whisper_stats.pt (torch.save of {"mean":
 * [d], "std": [d]}) or whisper_stats.safetensors with the same two
 * tensors. Copied out, so the file is closed after loading. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/whisper/whisper.h"

/* The length of the vector NAME, for DIM 0. */
static ac_status stored_dim(const ac_weights *w, const char *name, int *dim)
{
    const ac_tensor *t = ac_weights_find(w, "%s", name);
    if (!t) return ac_error(AC_ERR_MODEL, "%s: missing tensor '%s'", w->file, name);
    if (t->ndim != 1 || t->shape[0] < 1 || t->shape[0] > (1 << 20)) {
        char b[128];
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' has shape %s, expected one dimension", w->file, name,
                        ac_shape_str(t->shape, t->ndim, b, sizeof b));
    }
    *dim = (int)t->shape[0];
    return AC_OK;
}

static ac_status read_stats(ac_weights *w, whisper_stats *s, int dim)
{
    const float *mean, *std;
    if (dim == 0) AC_TRY(stored_dim(w, "mean", &dim));
    AC_TRY(ac_weights_vec(w, dim, &mean, "mean"));
    AC_TRY(ac_weights_vec(w, dim, &std, "std"));
    for (int i = 0; i < dim; i++)
        if (!isfinite(mean[i]) || !isfinite(std[i]) || std[i] == 0)
            return ac_error(AC_ERR_MODEL, "%s: mean %g, std %g at channel %d (std must be finite and non-zero)",
                            w->file, mean[i], std[i], i);
    s->mean = ac_calloc((size_t)dim, sizeof *s->mean);
    s->std = ac_calloc((size_t)dim, sizeof *s->std);
    if (!s->mean || !s->std) return AC_ERR_NOMEM;
    memcpy(s->mean, mean, (size_t)dim * sizeof *mean);
    memcpy(s->std, std, (size_t)dim * sizeof *std);
    s->dim = dim;
    return AC_OK;
}

ac_status whisper_stats_load(const char *path, int dim, whisper_stats **out)
{
    *out = NULL;
    if (dim < 0) return ac_error(AC_ERR_ARG, "%s: stats of %d channels", path, dim);
    whisper_stats *s = ac_calloc(1, sizeof *s);
    if (!s) return AC_ERR_NOMEM;
    ac_weights *w;
    ac_status st = ac_weights_open(path, &w);
    if (!st) {
        st = read_stats(w, s, dim);
        ac_weights_free(w);
    }
    if (st) {
        whisper_stats_free(s);
        return st;
    }
    *out = s;
    return AC_OK;
}

void whisper_stats_free(whisper_stats *s)
{
    if (!s) return;
    free(s->mean);
    free(s->std);
    free(s);
}

ac_status whisper_stats_load_from(ac_weights *w, int dim, whisper_stats **out)
{
    *out = NULL;
    whisper_stats *s = ac_calloc(1, sizeof *s);
    ac_status st = s ? read_stats(w, s, dim) : AC_ERR_NOMEM;
    ac_weights_free(w);
    if (st) {
        whisper_stats_free(s);
        return st;
    }
    *out = s;
    return AC_OK;
}
