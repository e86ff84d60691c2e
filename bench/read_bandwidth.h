/* Memory read bandwidth as the thread pool's threads reach it: the speed
 * limit of a decoding step, which reads every weight once. Shared by
 * bench_bandwidth and bench_ar (which measures it between its blocks of
 * steps, as a shared machine's bandwidth changes from second to second). */
#ifndef AUDIOC_BENCH_READ_BANDWIDTH_H
#define AUDIOC_BENCH_READ_BANDWIDTH_H

#include <stddef.h>

/* MB megabytes of ones on huge pages (as the models' weights are), or NULL. */
float *read_buffer(size_t mb);

/* GB/s of the best of REPS parallel reads of BUF's MB megabytes. */
double read_gbs(const float *buf, size_t mb, int reps);

#endif
