#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "json_out.h"

/* The environment variable NAME as a whole number >= 0, or -1 when unset or not one. */
static long env_number(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : -1;
    return n >= 0 && v && *v && !*end ? n : -1;
}

int batch_shard_parse(const char *v, int *index, int *count)
{
    const char *slash = strchr(v, '/');
    long i = -1, n = -1;
    char *end;
    if (strncmp(v, "auto", 4) == 0 && (!v[4] || v[4] == '/')) {
        long id = env_number("SLURM_ARRAY_TASK_ID"), min = env_number("SLURM_ARRAY_TASK_MIN");
        i = id >= 0 ? id - (min > 0 ? min : 0) : env_number("JOB_COMPLETION_INDEX");
        n = env_number("SLURM_ARRAY_TASK_COUNT");
        if (i < 0) {
            fprintf(stderr, "%s: --shard auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set\n",
                    arg_program);
            return -1;
        }
    } else if (slash) {
        i = strtol(v, &end, 10);
        if (end != slash || end == v) i = -1;
    }
    if (slash) {
        n = strtol(slash + 1, &end, 10);
        if (*end || end == slash + 1) n = -1;
    }
    if (i < 0 || n < 1 || i >= n || n > 1000000) {
        fprintf(stderr, "%s: --shard '%s': expected I/N with 0 <= I < N, or auto[/N] (N from "
                "SLURM_ARRAY_TASK_COUNT when not given)\n", arg_program, v);
        return -1;
    }
    *index = (int)i;
    *count = (int)n;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int batch_shard(char **files, int n, int index, int count)
{
    qsort(files, (size_t)n, sizeof *files, by_name);
    int k = 0;
    for (int i = index; i < n; i += count) files[k++] = files[i];
    return k;
}

void batch_manifest_line(FILE *f, const char *input, const char *status, double seconds, const char *error)
{
    fputs("{\"input\":", f);
    json_string(f, input);
    fprintf(f, ",\"status\":\"%s\",\"seconds\":%.3f,\"error\":", status, seconds);
    if (error) json_string(f, error);
    else fputs("null", f);
    fputs("}\n", f);
    fflush(f);
}
