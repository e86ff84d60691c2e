/* Token-to-time alignment from cross-attention weights, as openai-whisper's
 * find_alignment: each head's weights are standardized over the tokens,
 * median-filtered over time, averaged over the heads, and dynamic time
 * warping finds the monotonic path through the negated matrix. A row's
 * time is the frame where the path first reaches it. */
#ifndef AC_NN_ALIGN_H
#define AC_NN_ALIGN_H

#include "base/error.h"

/* openai-whisper's median filter spans 7 of its 20 ms frames. At other
 * frame lengths (FRAME_S seconds) the widest odd filter that spans no more
 * than those 140 ms: 7 at 20 ms, 1 (none) at Hviske's 80 ms, where a wider
 * one erases a short word's peak of one or two frames. */
static inline int ac_align_medfilt_width(double frame_s)
{
    int w = (int)(0.14 / frame_s + 1e-9);
    return w < 1 ? 1 : w % 2 ? w : w - 1;
}

/* W is [heads][rows][frames] attention weights (each row a distribution
 * over the frames). FIRST[r] is the frame where the path enters row r.
 * Scratch is allocated here; results do not depend on the thread count. */
ac_status ac_align_rows(const float *w, int heads, int rows, int frames, int medfilt, int *first);

/* The DTW path through COST [n][m] (lowest sum; steps down, right or
 * diagonal; ties resolved as openai-whisper's dtw_cpu): PATH_I/PATH_J of
 * at most n + m entries, *LEN set. */
ac_status ac_dtw(const double *cost, int n, int m, int *path_i, int *path_j, int *len);

/* openai-whisper's correction of words that took in a pause (times in
 * seconds from the segment's start): with the median word length capped at
 * 0.7 s, a word longer than twice that is cut where the pause must be: from
 * its end when it ends a sentence (ENDS_SENTENCE[i]), from its start when
 * the word before ends one, and the first word (and the second with it)
 * from its start when it ends well after the segment's start. */
void ac_align_clamp_words(double *start, double *end, const int *ends_sentence, int n);

#endif
