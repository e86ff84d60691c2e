#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *arg_program = "audioc";

int arg_is(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

const char *arg_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq && strncmp(argv[*i], "--", 2) == 0) return eq + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", arg_program, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int arg_int(const char *opt, const char *val, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s: '%s' is not a whole number in %d..%d\n", arg_program, opt, val, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int arg_float(const char *opt, const char *val, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "%s: %s: '%s' is not a number in %g..%g\n", arg_program, opt, val, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int arg_weights(const char *opt, const char *val, ac_weight_type *out)
{
    if (ac_weight_type_parse(val, out) == AC_OK) return 0;
    fprintf(stderr, "%s: %s: %s\n", arg_program, opt, ac_last_error());
    return -1;
}
