#include "audio/silence.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"

enum { HOP = 512, FRAME = 2048 };

/* The cut candidates: 0, the middles of the gaps between voiced
 * intervals, N. Returns their count. */
static size_t candidates(const float *x, int64_t n, int64_t *cut, double *prefix, double *e, int64_t frames)
{
    prefix[0] = 0;
    for (int64_t j = 0; j < n; j++) prefix[j + 1] = prefix[j] + (double)(x[j] * x[j]);
    double peak = 0;
    for (int64_t i = 0; i < frames; i++) {
        int64_t a = i * HOP - FRAME / 2, b = i * HOP + FRAME / 2;
        a = a < 0 ? 0 : a, b = b > n ? n : b;
        e[i] = a < b ? (prefix[b] - prefix[a]) / FRAME : 0;
        if (e[i] > peak) peak = e[i];
    }
    double thr = (peak > 1e-10 ? peak : 1e-10) * 0.001;
    size_t k = 0;
    cut[k++] = 0;
    int64_t prev_end = -1;
    for (int64_t i = 0; i < frames;) {
        if (!((e[i] > 1e-10 ? e[i] : 1e-10) > thr)) {
            i++;
            continue;
        }
        int64_t first = i;
        while (i < frames && (e[i] > 1e-10 ? e[i] : 1e-10) > thr) i++;
        int64_t start = first * HOP, end = i * HOP < n ? i * HOP : n;
        if (prev_end >= 0) cut[k++] = (prev_end + start) / 2;
        prev_end = end;
    }
    cut[k++] = n;
    return k;
}

ac_status ac_silence_chunks(const float *x, int64_t n, int64_t max, int64_t **ends, size_t *n_ends)
{
    *ends = NULL, *n_ends = 0;
    if (n < 1 || max < 1) return ac_error(AC_ERR_ARG, "silence split: %lld samples in chunks of %lld", (long long)n,
                                          (long long)max);
    int64_t frames = 1 + n / HOP;
    double *prefix = ac_malloc(((size_t)n + 1) * sizeof *prefix), *e = ac_malloc((size_t)frames * sizeof *e);
    int64_t *cut = ac_malloc(((size_t)frames + 2) * sizeof *cut);
    int64_t *out = ac_malloc(((size_t)(n / max) * 2 + (size_t)frames + 2) * sizeof *out);
    if (!prefix || !e || !cut || !out) {
        free(prefix), free(e), free(cut), free(out);
        return ac_error(AC_ERR_NOMEM, "out of memory");
    }
    size_t k = candidates(x, n, cut, prefix, e, frames), m = 0;
    int64_t start = 0;
    for (size_t c = 1; c < k; c++)
        while (cut[c] - start > max) {
            int64_t best = start + max;          /* a hard cut when no candidate fits */
            for (size_t j = c; j-- > 0;)
                if (cut[j] <= start + max && cut[j] > start) {
                    best = cut[j];
                    break;
                }
            out[m++] = best;
            start = best;
        }
    if (start < n) out[m++] = n;
    free(prefix), free(e), free(cut);
    *ends = out, *n_ends = m;
    return AC_OK;
}
