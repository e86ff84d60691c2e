#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/threadpool.h"

int test_failures, test_checks;
const char *test_work_dir = ".";
const char *test_data_dir = "";

void test_init(int argc, char **argv)
{
    if (argc > 1) test_work_dir = argv[1];
    if (argc > 2) test_data_dir = argv[2];
    ac_set_log_level(0);
}

int test_finish(void)
{
    ac_threadpool_shutdown();
    printf("%d passed, %d failed\n", test_checks - test_failures, test_failures);
    return test_failures ? 1 : 0;
}

void fill_random(float *x, size_t n, float lo, float hi, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        x[i] = lo + (hi - lo) * (float)(*seed >> 8) / 16777216.0f;
    }
}

double max_rel_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / (1.0 + fabs((double)b[i]));
        if (!(d <= m)) m = d; /* NaN wins */
    }
    return m;
}

const char *work_path(const char *name)
{
    static char buf[8][4096];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", test_work_dir, name);
    return buf[k];
}

int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

float *read_f32_file(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    long bytes = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    float *x = bytes >= 0 ? malloc((size_t)bytes + sizeof *x) : NULL;
    int ok = x && fseek(f, 0, SEEK_SET) == 0 && fread(x, 1, (size_t)bytes, f) == (size_t)bytes;
    if (f) fclose(f);
    if (!ok) {
        fprintf(stderr, "%s: cannot read it\n", path);
        free(x);
        return NULL;
    }
    *n = (size_t)bytes / sizeof *x;
    return x;
}

int error_has(const char *needle) { return strstr(ac_last_error(), needle) != NULL; }

ac_weight_type test_weight_type(void)
{
    const char *name = getenv("AUDIOC_TEST_WEIGHTS");
    ac_weight_type t = AC_WEIGHTS_STORED;
    if (name && *name && ac_weight_type_parse(name, &t) != AC_OK) {
        fprintf(stderr, "AUDIOC_TEST_WEIGHTS: %s\n", ac_last_error());
        exit(2);
    }
    return t;
}
