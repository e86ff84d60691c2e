/* Chunk probabilities to speech segments: the upstream
 * get_speech_timestamps walk with hysteresis, minimum durations, the
 * optional forced split of long speech, and the padding pass. */
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/silero_vad/silero_vad.h"

typedef struct {
    ac_vad_segment *v;
    size_t n, cap;
} seglist;

static ac_status push(seglist *l, int64_t start, int64_t end)
{
    if (ac_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return AC_ERR_NOMEM;
    l->v[l->n++] = (ac_vad_segment){start, end, 1.0f};
    return AC_OK;
}

typedef struct {
    int64_t pos, silence;
} possible_end;

/* Silences of the current speech segment: grown as needed (a segment has
 * few; sizing for every chunk of a 3 h file took 5 MB). */
typedef struct {
    possible_end *v;
    size_t n, cap;
} endlist;

static ac_status add_end(endlist *l, int64_t pos, int64_t silence)
{
    if (ac_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return AC_ERR_NOMEM;
    l->v[l->n++] = (possible_end){pos, silence};
    return AC_OK;
}

static int64_t ms_to_samples(int ms) { return (int64_t)AC_SILERO_RATE * ms / 1000; }

ac_status ac_silero_speech(const float *probs, size_t n_probs, int64_t n_samples,
                           const ac_vad_options *opt, ac_vad_segment **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    const int64_t W = AC_SILERO_CHUNK;
    float thr = opt->threshold;
    float neg = opt->neg_threshold >= 0 ? opt->neg_threshold
                                        : (thr - 0.15f > 0.01f ? thr - 0.15f : 0.01f);
    int64_t min_speech = ms_to_samples(opt->min_speech_ms);
    int64_t min_silence = ms_to_samples(opt->min_silence_ms);
    int64_t pad = ms_to_samples(opt->speech_pad_ms);
    double max_speech_d = (double)AC_SILERO_RATE * opt->max_speech_s;
    int64_t max_speech = max_speech_d > 4e18 ? INT64_MAX : (int64_t)max_speech_d - W - 2 * pad;
    int64_t min_sil_max = ms_to_samples(opt->min_silence_at_max_speech_ms);
    int use_max_poss = opt->use_max_poss_sil_at_max_speech;

    seglist segs = {0};
    endlist el = {0};
    int triggered = 0;
    int64_t start = 0, temp_end = 0, prev_end = 0, next_start = 0;
    ac_status s = AC_OK;

    for (size_t i = 0; i < n_probs && !s; i++) {
        float p = probs[i];
        int64_t cur = W * (int64_t)i;
        if (p >= thr && temp_end) {
            int64_t sil = cur - temp_end;
            if (sil > min_sil_max && (s = add_end(&el, temp_end, sil)) != AC_OK) break;
            temp_end = 0;
            if (next_start < prev_end) next_start = cur;
        }
        if (p >= thr && !triggered) {
            triggered = 1;
            start = cur;
            continue;
        }
        if (triggered && cur - start > max_speech) {
            if (use_max_poss && el.n) {
                const possible_end *ends = el.v;
                size_t best = 0;
                for (size_t j = 1; j < el.n; j++)
                    if (ends[j].silence > ends[best].silence) best = j;
                s = push(&segs, start, ends[best].pos);
                next_start = ends[best].pos + ends[best].silence;
                if (next_start < ends[best].pos + cur) start = next_start;
                else triggered = 0;
                prev_end = next_start = temp_end = 0;
                el.n = 0;
            } else if (prev_end) {
                s = push(&segs, start, prev_end);
                if (next_start < prev_end) triggered = 0;
                else start = next_start;
                prev_end = next_start = temp_end = 0;
                el.n = 0;
            } else {
                s = push(&segs, start, cur);
                prev_end = next_start = temp_end = 0;
                el.n = 0;
                triggered = 0;
                continue;
            }
        }
        if (p < neg && triggered) {
            if (!temp_end) temp_end = cur;
            if (!use_max_poss && cur - temp_end > min_sil_max) prev_end = temp_end;
            if (cur - temp_end < min_silence) continue;
            if (temp_end - start > min_speech) s = push(&segs, start, temp_end);
            prev_end = next_start = temp_end = 0;
            el.n = 0;
            triggered = 0;
        }
    }
    free(el.v);
    if (!s && triggered && n_samples - start > min_speech) s = push(&segs, start, n_samples);
    if (s) {
        free(segs.v);
        return s;
    }

    *out = segs.v;
    *n_out = segs.n;
    return AC_OK;
}

void ac_silero_pad(ac_vad_segment *v, size_t n, const ac_vad_options *opt, int64_t n_samples)
{
    int64_t pad = ms_to_samples(opt->speech_pad_ms);
    for (size_t i = 0; i < n; i++) {
        ac_vad_segment *cur = &v[i];
        if (i == 0) cur->start = cur->start - pad > 0 ? cur->start - pad : 0;
        if (i + 1 < n) {
            ac_vad_segment *next = &v[i + 1];
            int64_t gap = next->start - cur->end;
            if (gap < 2 * pad) {
                cur->end += gap / 2;
                next->start = next->start - gap / 2 > 0 ? next->start - gap / 2 : 0;
            } else {
                cur->end = cur->end + pad < n_samples ? cur->end + pad : n_samples;
                next->start = next->start - pad > 0 ? next->start - pad : 0;
            }
        } else {
            cur->end = cur->end + pad < n_samples ? cur->end + pad : n_samples;
        }
    }
}

ac_status ac_silero_segments(const float *probs, size_t n_probs, int64_t n_samples,
                             const ac_vad_options *opt, ac_vad_segment **out, size_t *n_out)
{
    AC_TRY(ac_silero_speech(probs, n_probs, n_samples, opt, out, n_out));
    ac_silero_pad(*out, *n_out, opt, n_samples);
    return AC_OK;
}
