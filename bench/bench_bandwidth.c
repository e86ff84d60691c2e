/* Memory read bandwidth (GB/s) with 1 and 2 threads: the speed limit of a
 * decoding step, which reads every decoder weight once.
 * usage: bench_bandwidth [MB] */
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "read_bandwidth.h"

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 1024;
    float *buf = read_buffer(mb);
    if (!buf) return 1;
    for (int t = 1; t <= 2; t++) {
        ac_set_threads(t);
        printf("threads %d: %.1f GB/s reading %zu MB\n", t, read_gbs(buf, mb, 5), mb);
    }
    free(buf);
    return 0;
}
