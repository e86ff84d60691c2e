#include "input.h"

#include <stdlib.h>
#include <string.h>

const char *cli_input_name(const char *arg) { return strcmp(arg, "-") == 0 ? "stdin" : arg; }

int read_all(FILE *f, char **buf, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    for (size_t k; b && (k = fread(b + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            char *p = cap < ((size_t)-1) / 4 ? realloc(b, 2 * cap + 1) : NULL;
            if (!p) break;
            b = p, cap *= 2;
        }
    }
    if (!b || ferror(f) || n == cap) {
        free(b);
        return -1;
    }
    b[n] = 0;
    *buf = b, *len = n;
    return 0;
}

int cli_input_open(const char *arg, ac_audio_input *in, char **buf)
{
    *buf = NULL;
    if (strcmp(arg, "-") != 0) {
        *in = ac_input_file(arg);
        return 0;
    }
    size_t n;
    if (read_all(stdin, buf, &n)) {
        fprintf(stderr, "audioc: stdin: cannot read it (or out of memory)\n");
        return -1;
    }
    *in = ac_input_memory(*buf, n, "stdin");
    return 0;
}

int cli_stdin_once(const char *cmd, char *const *args, int n)
{
    int seen = 0;
    for (int i = 0; i < n; i++) seen += args[i] && strcmp(args[i], "-") == 0;
    if (seen > 1) {
        fprintf(stderr, "%s: '-' (standard input) given %d times: it can be read once\n", cmd, seen);
        return -1;
    }
    return 0;
}
