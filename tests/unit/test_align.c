/* nn/align.c against tests/ref/align_ref.py (numpy/scipy): the first frame
 * of every row on the DTW path, exactly, on random and near-diagonal
 * attention matrices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/align.h"
#include "test_util.h"

int main(int argc, char **argv)
{
    test_init(argc, argv);
    char path[4096];
    snprintf(path, sizeof path, "%s/align_ref.txt", argc > 1 ? argv[1] : ".");
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "the reference cases %s exist", path);
    if (!f) return test_finish();
    int heads, rows, frames, cases = 0;
    while (fscanf(f, "%d %d %d", &heads, &rows, &frames) == 3) {
        size_t n = (size_t)heads * rows * frames;
        float *w = malloc(n * sizeof *w);
        int *want = malloc((size_t)rows * sizeof *want), *got = malloc((size_t)rows * sizeof *got);
        for (size_t i = 0; i < n; i++) CHECK(fscanf(f, "%f", &w[i]) == 1, "weight %zu", i);
        for (int r = 0; r < rows; r++) CHECK(fscanf(f, "%d", &want[r]) == 1, "first frame %d", r);
        CHECK(ac_align_rows(w, heads, rows, frames, ac_align_medfilt_width(0.02), got) == AC_OK, "case %d aligns", cases);
        int same = 1;
        for (int r = 0; r < rows; r++) same &= got[r] == want[r];
        CHECK(same, "case %d (%d heads, %d rows, %d frames): first frames equal the reference", cases, heads, rows,
              frames);
        free(w);
        free(want);
        free(got);
        cases++;
    }
    fclose(f);
    CHECK(cases == 6, "6 reference cases read (%d)", cases);
    int pi[8], pj[8], len;
    double cost[6] = {0, 1, 1, 1, 0, 1};   /* 2 x 3 */
    CHECK(ac_dtw(cost, 2, 3, pi, pj, &len) == AC_OK && len >= 3 && pi[0] == 0 && pj[0] == 0 && pi[len - 1] == 1 &&
              pj[len - 1] == 2,
          "dtw: the path runs from (0,0) to (1,2)");
    CHECK(ac_align_rows(NULL, 0, 1, 1, 7, pi) != AC_OK, "no heads: an error");
    CHECK(ac_align_medfilt_width(0.02) == 7 && ac_align_medfilt_width(0.04) == 3 &&
              ac_align_medfilt_width(0.08) == 1 && ac_align_medfilt_width(1.0) == 1,
          "median filter: 7 frames of 20 ms, 3 of 40 ms, none at 80 ms (%d)", ac_align_medfilt_width(0.08));

    /* words that took in a pause, cut as openai-whisper does (align_ref.clamp_words's numbers):
     * the first word after the segment's start, a word after and a word at a sentence end */
    double s1[] = {0.0, 2.6, 2.9, 3.2, 4.1, 5.6, 5.9, 7.9}, e1[] = {2.6, 2.9, 3.2, 4.1, 5.6, 5.9, 7.9, 8.2};
    int stop1[] = {0, 0, 0, 1, 0, 1, 1, 0};
    double ws1[] = {1.4, 2.6, 2.9, 3.2, 4.4, 5.6, 5.9, 7.9}, we1[] = {2.6, 2.9, 3.2, 4.1, 5.6, 5.9, 7.1, 8.2};
    ac_align_clamp_words(s1, e1, stop1, 8);
    int ok = 1;
    for (int i = 0; i < 8; i++) ok &= fabs(s1[i] - ws1[i]) < 1e-9 && fabs(e1[i] - we1[i]) < 1e-9;
    CHECK(ok, "clamp: long words at the start and at sentence boundaries are cut");
    /* the first two words both long: they split at the second's end minus the limit */
    double s2[] = {0.0, 2.0, 4.0, 4.3, 4.6}, e2[] = {2.0, 4.0, 4.3, 4.6, 4.9};
    int stop2[5] = {0};
    ac_align_clamp_words(s2, e2, stop2, 5);
    CHECK(fabs(s2[0] - 2.8) < 1e-9 && fabs(e2[0] - 3.4) < 1e-9 && fabs(s2[1] - 3.4) < 1e-9 && fabs(e2[1] - 4.0) < 1e-9,
          "clamp: the first two words (%g-%g, %g-%g)", s2[0], e2[0], s2[1], e2[1]);
    double s3[] = {0.2}, e3[] = {0.2};
    int stop3[] = {1};
    ac_align_clamp_words(s3, e3, stop3, 1);
    CHECK(s3[0] == 0.2 && e3[0] == 0.2, "clamp: words of no length are left alone");
    return test_finish();
}
