/* The ASR model used when none is given: $AUDIOC_ASR_MODEL, else the
 * bundled models/hviske-tiny-da of this checkout (found beside the
 * executable, in the share/audioc/models/ it was installed with, or at the
 * source path the build recorded). */
#ifndef AUDIOC_TOOLS_DEFAULT_MODEL_H
#define AUDIOC_TOOLS_DEFAULT_MODEL_H

#define DEFAULT_MODEL_ID "hviske-tiny-da"

/* NULL when there is none. */
const char *default_asr_model(void);

#endif
