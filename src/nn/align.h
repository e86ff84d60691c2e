/* Token-to-time alignment from cross-attention weights, as openai-whisper's
 * find_alignment: each head's weights are standardized over the tokens,
 * median-filtered over time, averaged over the heads, and dynamic time
 * warping finds the monotonic path through the negated matrix. A row's
 * time is the frame where the path first reaches it. */
#ifndef AC_NN_ALIGN_H
#define AC_NN_ALIGN_H

#include "base/error.h"

#define AC_ALIGN_MEDFILT 7   /* openai-whisper's medfilt_width */

/* W is [heads][rows][frames] attention weights (each row a distribution
 * over the frames). FIRST[r] is the frame where the path enters row r.
 * Scratch is allocated here; results do not depend on the thread count. */
ac_status ac_align_rows(const float *w, int heads, int rows, int frames, int medfilt, int *first);

/* The DTW path through COST [n][m] (lowest sum; steps down, right or
 * diagonal; ties resolved as openai-whisper's dtw_cpu): PATH_I/PATH_J of
 * at most n + m entries, *LEN set. */
ac_status ac_dtw(const double *cost, int n, int m, int *path_i, int *path_j, int *len);

#endif
