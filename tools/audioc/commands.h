/* The audioc subcommands and what they share. */
#ifndef AUDIOC_TOOLS_COMMANDS_H
#define AUDIOC_TOOLS_COMMANDS_H

#include "audioc.h"

int cmd_vad(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_transcribe(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
/* tts, vc and svc (CMD names which in messages) */
int cmd_voice(const char *cmd, int argc, char **argv);

/* The help text of the options every command takes. */
#define COMMON_OPTIONS_HELP \
    "general:\n" \
    "  -t, --threads N         worker threads (default: physical cores)\n" \
    "      --progress / --no-progress\n" \
    "                          progress on stderr (default: when it is a terminal)\n" \
    "      --offline           an hf: model only from the Hugging Face cache (as\n" \
    "                          HF_HUB_OFFLINE=1): never the network\n" \
    "  -q, --quiet             errors only, no progress;  -v, --verbose: more detail\n" \
    "  -h, --help              this help\n"

/* The help text of --weights, which every command that loads a model takes. */
#define WEIGHTS_HELP \
    "      --weights T         hold the weight matrices as f32, f16, bf16 or q8_0,\n" \
    "                          converted when the model loads (default: as the file\n" \
    "                          stores them; docs/models/ lists what each family keeps)\n"

/* The model at PATH (FAMILY NULL: probed), its matrices held as WEIGHTS,
 * which must be one for TASK; NULL after printing "audioc: PREFIX<why>"
 * when it is not or does not load. */
ac_model *load_model(const char *path, const char *family, ac_weight_type weights, ac_task task,
                     const char *prefix);

#endif
