/* Batch runs for cluster schedulers: the share of a sorted input list one
 * task takes (--shard I/N, or from the scheduler's environment), and the
 * manifest with a line per input. */
#ifndef AUDIOC_TOOLS_BATCH_H
#define AUDIOC_TOOLS_BATCH_H

#include <stdio.h>

/* --shard V: "I/N" (0 <= I < N), or "auto" / "auto/N": I from
 * SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) or Kubernetes'
 * JOB_COMPLETION_INDEX, N from SLURM_ARRAY_TASK_COUNT when not given.
 * 0, or -1 after a message. */
int batch_shard_parse(const char *v, int *index, int *count);
/* Sorts FILES (by name) and keeps every COUNT-th from INDEX, in place:
 * the number kept. Every input falls to exactly one of the COUNT shards. */
int batch_shard(char **files, int n, int index, int count);

/* One JSON line for INPUT appended to F and flushed (a run killed
 * midway keeps the lines of what it finished): STATUS ok, failed or
 * skipped, the SECONDS it took, the ERROR (NULL: none). */
void batch_manifest_line(FILE *f, const char *input, const char *status, double seconds, const char *error);

#endif
