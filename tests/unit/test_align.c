/* nn/align.c against tests/ref/align_ref.py (numpy/scipy): the first frame
 * of every row on the DTW path, exactly, on random and near-diagonal
 * attention matrices. */
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
        CHECK(ac_align_rows(w, heads, rows, frames, AC_ALIGN_MEDFILT, got) == AC_OK, "case %d aligns", cases);
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
    return test_finish();
}
