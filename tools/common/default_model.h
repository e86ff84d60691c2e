/* The models used when none is given: $AUDIOC_ASR_MODEL / $AUDIOC_VAD_MODEL,
 * else the bundled models/hviske-tiny-da and models/silero-vad (found
 * beside the executable or one folder up, in the share/audioc/models/ it
 * was installed with, or at the source path the build recorded). */
#ifndef AUDIOC_TOOLS_DEFAULT_MODEL_H
#define AUDIOC_TOOLS_DEFAULT_MODEL_H

#define DEFAULT_MODEL_ID "hviske-tiny-da"
#define DEFAULT_VAD_ID "silero-vad"
#define DEFAULT_VAD_FILE "silero_vad_16k.safetensors"

/* NULL when there is none. */
const char *default_asr_model(void);
const char *default_vad_model(void);

#endif
