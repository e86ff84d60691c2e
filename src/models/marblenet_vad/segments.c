/* MarbleNet post-processing: each run of frames at or above the threshold
 * is a segment; no smoothing, padding or minimum durations (as upstream). */
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/marblenet_vad/model.h"

ac_status ac_marblenet_segments(const ac_marblenet *m, const float *probs, size_t n_probs,
                                int64_t n_samples, float threshold, ac_vad_segment **out,
                                size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    int64_t hop = ac_marblenet_hop(m);
    ac_vad_segment *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < n_probs;) {
        if (probs[i] < threshold) {
            i++;
            continue;
        }
        size_t j = i;
        double sum = 0;
        while (j < n_probs && probs[j] >= threshold) sum += probs[j++];
        /* frames past the end exist (centered STFT, pad_to): clamp to the audio */
        int64_t start = (int64_t)i * hop, end = (int64_t)j * hop;
        if (end > n_samples) end = n_samples;
        if (end > start) {
            if (ac_grow(&v, &cap, n + 1, sizeof *v)) {
                free(v);
                return AC_ERR_NOMEM;
            }
            v[n++] = (ac_vad_segment){start, end, (float)(sum / (double)(j - i))};
        }
        i = j;
    }
    *out = v;
    *n_out = n;
    return AC_OK;
}
