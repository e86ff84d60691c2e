#include "options.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "audioc.h"

/* The options of every command, applied by the parser itself. */
enum { C_THREADS, C_QUIET, C_VERBOSE, C_PROGRESS, C_NO_PROGRESS, C_HELP, C_OFFLINE };
static const opt_def common[] = {
    [C_THREADS] = {"-t|--threads", 1}, [C_QUIET] = {"-q|--quiet", 0},       [C_VERBOSE] = {"-v|--verbose", 0},
    [C_PROGRESS] = {"--progress", 0},  [C_NO_PROGRESS] = {"--no-progress", 0}, [C_HELP] = {"-h|--help", 0},
    [C_OFFLINE] = {"--offline", 0},
    {0},
};

static int progress_mode = -1; /* as ac_set_progress takes it */

int opt_progress_shown(void) { return progress_mode == 1 || (progress_mode == -1 && isatty(STDERR_FILENO)); }

/* The index in DEFS of the option spelled NAME[0..LEN), or -1. */
static int find(const opt_def *defs, const char *name, size_t len)
{
    for (int k = 0; defs[k].names; k++)
        for (const char *n = defs[k].names; *n;) {
            const char *bar = strchr(n, '|');
            size_t l = bar ? (size_t)(bar - n) : strlen(n);
            if (l == len && strncmp(n, name, len) == 0) return k;
            n += l + (bar != NULL);
        }
    return -1;
}

void opt_init(opt_parser *p, const char *cmd, int argc, char **argv)
{
    *p = (opt_parser){.cmd = cmd, .argc = argc, .argv = argv, .opt = ""};
}

/* Applies common option K with value V; OPT_HELP, OPT_ERROR or 0. */
static int apply_common(const opt_parser *p, int k, const char *v)
{
    int n;
    switch (k) {
    case C_THREADS:
        if (arg_int(p->opt, v, 1, 256, &n)) return OPT_ERROR;
        ac_set_threads(n);
        break;
    case C_QUIET: /* errors only: no progress either, unless --progress asks */
        ac_set_log_level(0);
        if (progress_mode == -1) ac_set_progress(progress_mode = 0);
        break;
    case C_VERBOSE: ac_set_log_level(2); break;
    case C_PROGRESS: ac_set_progress(progress_mode = 1); break;
    case C_NO_PROGRESS: ac_set_progress(progress_mode = 0); break;
    case C_HELP: return OPT_HELP;
    case C_OFFLINE: ac_hub_set_offline(1); break;
    }
    return 0;
}

int opt_next(opt_parser *p, const opt_def *defs, const char **value)
{
    for (;;) {
        *value = NULL;
        if (p->i >= p->argc) return OPT_END;
        const char *a = p->argv[p->i++];
        if (p->operands_only || a[0] != '-' || a[1] == 0) {
            *value = a;
            return OPT_OPERAND;
        }
        if (strcmp(a, "--") == 0) {
            p->operands_only = 1;
            continue;
        }
        /* "--name=value"; a short option's value is the next argument */
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        snprintf(p->opt_buf, sizeof p->opt_buf, "%.*s", (int)len, a);
        p->opt = p->opt_buf;
        int k = find(defs, a, len), c = k < 0 ? find(common, a, len) : -1;
        if (k < 0 && c < 0) {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", p->cmd, p->opt, p->cmd);
            return OPT_ERROR;
        }
        const opt_def *d = k >= 0 ? &defs[k] : &common[c];
        const char *v = NULL;
        if (d->takes_value) {
            if (eq) v = eq + 1;
            else if (p->i < p->argc) v = p->argv[p->i++];
            else {
                fprintf(stderr, "%s: %s needs a value\n", p->cmd, p->opt);
                return OPT_ERROR;
            }
        } else if (eq) {
            fprintf(stderr, "%s: %s takes no value\n", p->cmd, p->opt);
            return OPT_ERROR;
        }
        if (k >= 0) {
            *value = v;
            return k;
        }
        int r = apply_common(p, c, v);
        if (r) return r;
    }
}
