/* Small helpers for the tools' option parsing: numbers with range checks
 * and messages that name the option. */
#ifndef AUDIOC_TOOLS_ARGS_H
#define AUDIOC_TOOLS_ARGS_H

#include "audioc.h"

/* The program name that messages start with ("audioc"). */
extern const char *arg_program;

/* Each returns 0 on success, or prints "PROGRAM: OPT: ..." and returns -1. */
int arg_int(const char *opt, const char *val, int lo, int hi, int *out);
int arg_float(const char *opt, const char *val, double lo, double hi, double *out);
/* A weight type (stored, f32, f16, bf16, q8_0: ac_weight_type_parse). */
int arg_weights(const char *opt, const char *val, ac_weight_type *out);
/* The value of option ARGV[*I] ("--x V" or "--x=V"); advances *I. NULL
 * (with a message) when missing. */
const char *arg_value(int argc, char **argv, int *i);
/* Whether ARGV[I] is option NAME, alone or as NAME=value. */
int arg_is(const char *arg, const char *name);

#endif
