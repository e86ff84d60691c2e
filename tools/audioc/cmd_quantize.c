/* audioc quantize: a model written as one GGUF file, its weight matrices
 * converted to a smaller type by the family's rule. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "audioc.h"
#include "commands.h"
#include "options.h"

static void usage(FILE *f)
{
    fputs("usage: audioc quantize IN OUT --type f16|bf16|q8_0|q4_k|q6_k [options]\n"
          "\n"
          "Writes the model IN as one GGUF file OUT, in the layout the ggml audio\n"
          "runtime publishes (its configs and tokenizers embedded; Vevo2's parts, Whisper\n"
          "included, under their namespaces with the package description), with its\n"
          "weight matrices converted to the type asked. Which tensors a type converts is\n"
          "the family's rule, as --weights applies it when a model loads (docs/models/):\n"
          "norms, biases, embeddings and the tensors a family names keep their precision.\n"
          "\n"
          "  IN                      a package folder, a weights file, a .gguf, or\n"
          "                          hf:REPO[@REVISION][/SUBFOLDER|/FILE]\n"
          "  OUT                     the .gguf to write; made under a temporary name in its\n"
          "                          folder and renamed when complete (nothing is left on an\n"
          "                          error or Ctrl-C)\n"
          "      --type T            f16, bf16 or q8_0: the matrices as --weights T holds\n"
          "                          them; q4_k, q6_k: the matrices q8_0 takes whose rows are\n"
          "                          whole blocks of 256 values (the others q8_0)\n"
          "      --whisper PATH      Vevo2: the Whisper-medium encoder to pack (as tts/vc take\n"
          "                          it); a medium.pt without config.json is left out\n"
          "\n"
          "A package that already holds Q8_0 or K-quant tensors is refused (it would be\n"
          "rounded twice): quantize the F32, F16 or BF16 package it came from.\n"
          "The VADs' rule keeps every tensor in f32, so their GGUF holds the same values.\n"
          "\n" COMMON_OPTIONS_HELP,
          f);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig) { stop = sig; }

static int on_progress(int done, int total, void *user) { return stop != 0; }

int cmd_quantize(int argc, char **argv)
{
    enum { O_TYPE, O_WHISPER };
    static const opt_def defs[] = {[O_TYPE] = {"--type", 1}, [O_WHISPER] = {"--whisper", 1}, {0}};
    const char *files[2], *type = NULL, *whisper = NULL, *v;
    int n_files = 0;
    opt_parser p;
    opt_init(&p, "audioc quantize", argc, argv);
    for (int k; (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_TYPE: type = v; break;
        case O_WHISPER: whisper = v; break;
        case OPT_OPERAND:
            if (n_files == 2) {
                fprintf(stderr, "audioc quantize: one input and one output ('%s' is a third)\n", v);
                return 2;
            }
            files[n_files++] = v;
            break;
        case OPT_HELP: usage(stdout); return 0;
        default: return 2;
        }
    }
    if (n_files != 2 || !type) {
        if (n_files == 2) fprintf(stderr, "audioc quantize: --type is required (f16, bf16, q8_0, q4_k or q6_k)\n");
        else usage(stderr);
        return 2;
    }
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    ac_quantize_options o;
    ac_quantize_options_default(&o);
    o.whisper = whisper;
    o.on_progress = on_progress;
    ac_status s = ac_model_quantize(files[0], files[1], type, &o);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (s != AC_OK) {
        fprintf(stderr, "audioc quantize: %s\n", ac_last_error());
        if (stop) return 128 + stop;
        return s == AC_ERR_ARG ? 2 : 1;
    }
    struct stat sb;
    if (opt_progress_shown() && stat(files[1], &sb) == 0)
        fprintf(stderr, "%s: %.1f MB\n", files[1], (double)sb.st_size / 1e6);
    return 0;
}
