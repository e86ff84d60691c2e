/* audioc: the command-line front end of audio.c. */
#include <stdio.h>
#include <string.h>

#include "audioc.h"
#include "commands.h"

static void usage(FILE *f)
{
    fputs("usage: audioc COMMAND [options] ...\n"
          "\n"
          "audio.c runs speech and audio models natively on the CPU.\n"
          "\n"
          "commands:\n"
          "  transcribe speech to text (Hviske / Cohere Transcribe)\n"
          "  vad        find speech segments in audio files (Silero VAD, MarbleNet VAD)\n"
          "  tts        say or sing text in a given voice (Vevo2)\n"
          "  vc         say speech again in another voice (Vevo2)\n"
          "  svc        sing a song again in another voice (Vevo2)\n"
          "  convert    decode, mix to mono and resample audio to a float WAV\n"
          "  tokenize   text to token ids and back with a model's tokenizer (Qwen2, Vevo2)\n"
          "  pull       download a model from the Hugging Face Hub into its cache\n"
          "  quantize   write a model as one GGUF file with f16, bf16, q8_0, q4_k or q6_k weights\n"
          "\n"
          "  audioc COMMAND --help   options of a command\n"
          "  audioc --version        version\n",
          f);
}

ac_model *load_model(const char *path, const char *family, ac_weight_type weights, ac_task task,
                     const char *prefix)
{
    ac_model *m;
    ac_load_options o;
    ac_load_options_default(&o);
    o.weights = weights;
    if (ac_model_load_with(path, family, &o, &m) != AC_OK) {
        fprintf(stderr, "audioc: %s%s\n", prefix, ac_last_error());
        return NULL;
    }
    if (ac_model_task(m) != task) {
        fprintf(stderr, "audioc: %s%s holds a %s model (%s), not one for %s\n", prefix, path, ac_model_family(m),
                ac_task_name(ac_model_task(m)), ac_task_name(task));
        ac_model_free(m);
        return NULL;
    }
    return m;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("audioc %s\n", AUDIOC_VERSION);
        return 0;
    }
    if (strcmp(cmd, "vad") == 0) return cmd_vad(argc - 2, argv + 2);
    if (strcmp(cmd, "transcribe") == 0) return cmd_transcribe(argc - 2, argv + 2);
    if (strcmp(cmd, "vc") == 0 || strcmp(cmd, "svc") == 0 || strcmp(cmd, "tts") == 0)
        return cmd_voice(cmd, argc - 2, argv + 2);
    if (strcmp(cmd, "convert") == 0) return cmd_convert(argc - 2, argv + 2);
    if (strcmp(cmd, "tokenize") == 0) return cmd_tokenize(argc - 2, argv + 2);
    if (strcmp(cmd, "pull") == 0) return cmd_pull(argc - 2, argv + 2);
    if (strcmp(cmd, "quantize") == 0) return cmd_quantize(argc - 2, argv + 2);
    fprintf(stderr, "audioc: unknown command '%s' (see audioc --help)\n", cmd);
    return 2;
}
