/* Work on many inputs at once, results handed on in input order. */
#ifndef AUDIOC_TOOLS_ORDERED_H
#define AUDIOC_TOOLS_ORDERED_H

/* Runs WORK(i, USER) for every i in 0..N-1, PARALLEL of them at once on
 * threads of their own (each with its share of the thread budget:
 * ac_set_local_threads), and DONE(i, USER) on the calling thread in the
 * order of i, as soon as WORK(i) is finished and DONE(i - 1) has run.
 * PARALLEL 1 runs everything on the calling thread. */
void run_ordered(int n, int parallel, void (*work)(int i, void *user), void (*done)(int i, void *user), void *user);

#endif
