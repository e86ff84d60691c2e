/* Audio named on the command line: a file, or "-" for standard input. */
#ifndef AUDIOC_TOOLS_INPUT_H
#define AUDIOC_TOOLS_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "audioc.h"

/* The name messages and output files give ARG: "stdin" for "-". */
const char *cli_input_name(const char *arg);

/* IN for ARG: the file, or for "-" all of standard input read into *BUF
 * (the caller frees it once IN is used; NULL for a file). -1 after a
 * message when standard input cannot be read. */
int cli_input_open(const char *arg, ac_audio_input *in, char **buf);

/* -1 after a message naming CMD when "-" is among the N ARGS (NULL: none) more than
 * once (standard input can be read only once). */
int cli_stdin_once(const char *cmd, char *const *args, int n);

/* All of F in *BUF, NUL-terminated, *LEN bytes without the NUL; -1 when it
 * cannot be read or memory runs out. */
int read_all(FILE *f, char **buf, size_t *len);

#endif
