/* A VAD result as one JSON object: the CLI's --format json line and the
 * server's answer are written here. */
#ifndef AUDIOC_TOOLS_VAD_OUT_H
#define AUDIOC_TOOLS_VAD_OUT_H

#include <stdio.h>

#include "audioc.h"

/* The object starts with "KEY": NAME (the CLI's "file", the server's
 * "model"); PROBS adds hop_seconds and the probabilities. */
void vad_write_json(FILE *f, const char *key, const char *name, const char *family, const ac_vad_result *r,
                    int probs);

#endif
