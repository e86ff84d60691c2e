/* A minimal test harness: CHECK records a failure and goes on; each test
 * program prints "N passed, N failed" and exits non-zero on failure. */
#ifndef AC_TEST_UTIL_H
#define AC_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audioc.h"

extern int test_failures, test_checks;
extern const char *test_work_dir;  /* argv[1]: a folder the test may write in */
extern const char *test_data_dir;  /* argv[2]: the real weights and clips */

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        test_checks++;                                                     \
        if (!(cond)) {                                                     \
            test_failures++;                                               \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* Runs a named test function. */
#define RUN(fn)                                        \
    do {                                               \
        int before_ = test_failures;                   \
        fn();                                          \
        fprintf(stderr, "%s %s\n", test_failures == before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

/* For drivers that stop at the first failure: prints it with the last
 * error and returns 1 from the calling function. */
#define API_CHECK(cond, ...)                                       \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "FAIL api: " __VA_ARGS__);             \
            fprintf(stderr, " (%s)\n", ac_last_error());           \
            return 1;                                              \
        }                                                          \
    } while (0)

void test_init(int argc, char **argv);
/* The weight type the stage drivers load with: $AUDIOC_TEST_WEIGHTS (a
 * name of ac_weight_type_parse), else stored. The parity tests ask for f32
 * where a checkpoint is stored in BF16 or Q8_0, so that its products run in
 * the f32 arithmetic the references compute in (the stored type's own
 * arithmetic is measured by tests/precision.py). */
ac_weight_type test_weight_type(void);
int test_finish(void);

/* Deterministic uniform floats in [lo, hi). */
void fill_random(float *x, size_t n, float lo, float hi, uint32_t *seed);
/* Largest |a-b| / (1 + |b|). */
double max_rel_diff(const float *a, const float *b, size_t n);
/* A path under the work folder. */
const char *work_path(const char *name);
int write_file(const char *path, const void *data, size_t n);
/* All of PATH as float32 values (*N of them; malloc'd), NULL after a message when it cannot be read. */
float *read_f32_file(const char *path, size_t *n);
/* Whether the message of the last error contains NEEDLE. */
int error_has(const char *needle);

#endif
