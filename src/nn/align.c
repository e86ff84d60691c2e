#include "nn/align.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

ac_status ac_dtw(const double *x, int n, int m, int *path_i, int *path_j, int *len)
{
    size_t W = (size_t)m + 1;
    double *cost = ac_malloc((size_t)(n + 1) * W * sizeof *cost);
    signed char *trace = ac_malloc((size_t)(n + 1) * W);
    if (!cost || !trace) {
        free(cost);
        free(trace);
        return AC_ERR_NOMEM;
    }
    for (size_t k = 0; k < (size_t)(n + 1) * W; k++) cost[k] = INFINITY, trace[k] = -1;
    cost[0] = 0;
    for (int j = 1; j <= m; j++)
        for (int i = 1; i <= n; i++) {
            double c0 = cost[(i - 1) * W + j - 1], c1 = cost[(i - 1) * W + j], c2 = cost[i * W + j - 1], c;
            int t;
            if (c0 < c1 && c0 < c2) c = c0, t = 0;
            else if (c1 < c0 && c1 < c2) c = c1, t = 1;
            else c = c2, t = 2;
            cost[i * W + j] = x[(size_t)(i - 1) * m + j - 1] + c;
            trace[i * W + j] = (signed char)t;
        }
    for (int j = 0; j <= m; j++) trace[j] = 2;
    for (int i = 0; i <= n; i++) trace[i * W] = 1;
    int i = n, j = m, k = 0;
    while (i > 0 || j > 0) {
        path_i[k] = i - 1, path_j[k] = j - 1, k++;
        int t = trace[i * W + j];
        if (t == 0) i--, j--;
        else if (t == 1) i--;
        else j--;
    }
    for (int a = 0, b = k - 1; a < b; a++, b--) {   /* start to end */
        int ti = path_i[a], tj = path_j[a];
        path_i[a] = path_i[b], path_j[a] = path_j[b];
        path_i[b] = ti, path_j[b] = tj;
    }
    *len = k;
    free(cost);
    free(trace);
    return AC_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of a WIDTH window around each element of X[n], the edges
 * reflected without repeating the edge (torch's "reflect" padding). */
static void median_filter(const float *x, int n, int width, float *out, float *win)
{
    int h = width / 2;
    for (int t = 0; t < n; t++) {
        for (int k = -h; k <= h; k++) {
            int s = t + k;
            while (s < 0 || s >= n) s = s < 0 ? -s : 2 * (n - 1) - s;
            win[k + h] = x[s];
        }
        qsort(win, (size_t)width, sizeof *win, cmp_float);
        out[t] = win[h];
    }
}

ac_status ac_align_rows(const float *w, int heads, int rows, int frames, int medfilt, int *first)
{
    if (heads < 1 || rows < 1 || frames < 1) return ac_error(AC_ERR_ARG, "alignment: an empty attention matrix");
    if (medfilt < 1 || medfilt % 2 == 0) return ac_error(AC_ERR_ARG, "alignment: median width %d is not odd", medfilt);
    /* a window wider than the row cannot be reflected: no filtering then (whisper pads only when it fits) */
    int filt = frames > medfilt / 2 ? medfilt : 1;
    size_t RF = (size_t)rows * frames;
    float *norm = ac_malloc(RF * sizeof *norm), *row = ac_malloc((size_t)frames * sizeof *row);
    float *win = ac_malloc((size_t)filt * sizeof *win);
    double *cost = ac_calloc(RF, sizeof *cost);
    int *pi = ac_malloc((size_t)(rows + frames) * sizeof *pi), *pj = ac_malloc((size_t)(rows + frames) * sizeof *pj);
    ac_status s = norm && row && win && cost && pi && pj ? AC_OK : AC_ERR_NOMEM;
    for (int h = 0; h < heads && !s; h++) {
        const float *a = w + (size_t)h * RF;
        for (int j = 0; j < frames; j++) {   /* standardize each frame over the rows (biased std) */
            double mean = 0, var = 0;
            for (int r = 0; r < rows; r++) mean += a[(size_t)r * frames + j];
            mean /= rows;
            for (int r = 0; r < rows; r++) {
                double d = a[(size_t)r * frames + j] - mean;
                var += d * d;
            }
            double sd = var > 0 ? sqrt(var / rows) : 1;
            for (int r = 0; r < rows; r++)
                norm[(size_t)r * frames + j] = (float)((a[(size_t)r * frames + j] - mean) / sd);
        }
        for (int r = 0; r < rows; r++) {
            if (filt > 1) median_filter(norm + (size_t)r * frames, frames, filt, row, win);
            else memcpy(row, norm + (size_t)r * frames, (size_t)frames * sizeof *row);
            for (int j = 0; j < frames; j++) cost[(size_t)r * frames + j] -= row[j] / heads;
        }
    }
    int len = 0;
    if (!s) s = ac_dtw(cost, rows, frames, pi, pj, &len);
    for (int r = 0; r < rows; r++) first[r] = -1;
    for (int k = 0; !s && k < len; k++)
        if (first[pi[k]] < 0) first[pi[k]] = pj[k];
    free(norm);
    free(row);
    free(win);
    free(cost);
    free(pi);
    free(pj);
    return s;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ac_align_clamp_words(double *start, double *end, const int *ends_sentence, int n)
{
    if (n < 1) return;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return; /* the words keep their DTW times */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (end[i] > start[i]) d[k++] = end[i] - start[i];
    double median = 0;
    if (k) {
        qsort(d, (size_t)k, sizeof *d, by_value);
        median = k % 2 ? d[k / 2] : 0.5 * (d[k / 2 - 1] + d[k / 2]);
    }
    free(d);
    if (!k) return;
    if (median > 0.7) median = 0.7;
    double longest = 2 * median;
    for (int i = 1; i < n; i++) { /* a pause at a sentence boundary is not part of a word */
        if (end[i] - start[i] <= longest) continue;
        if (ends_sentence[i]) end[i] = start[i] + longest;
        else if (ends_sentence[i - 1]) start[i] = end[i] - longest;
    }
    /* the first word after the pause before the speech (the segment's start) */
    if (end[0] > 4 * median && (end[0] - start[0] > longest || (n > 1 && end[1] - start[0] > 2 * longest))) {
        if (n > 1 && end[1] - start[1] > longest) {
            double b = end[1] / 2 > end[1] - longest ? end[1] / 2 : end[1] - longest;
            end[0] = start[1] = b;
        }
        start[0] = end[0] - longest > 0 ? end[0] - longest : 0;
    }
}
