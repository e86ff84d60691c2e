/* audioc pull: a model from the Hugging Face Hub into the cache that
 * huggingface_hub shares, printing the folder it is in. */
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "commands.h"
#include "options.h"

static void usage(FILE *f)
{
    fputs("usage: audioc pull REPO[@REVISION][/SUBFOLDER|/FILE] [--include PATTERN]... [options]\n"
          "\n"
          "Downloads the files of a model on the Hugging Face Hub that its family needs\n"
          "(told from the repository's file list: a Hviske package's config, tokenizer and\n"
          "model.safetensors; a Vevo2 package's weights and configs, not its training files,\n"
          "and the openai/whisper-medium encoder it runs on) into the Hugging Face cache,\n"
          "and prints its local path. Any command then takes --model hf:REPO[@REVISION].\n"
          "\n"
          "  REPO                    ORG/NAME, e.g. syvai/hviske-v5.3 or RMSnow/Vevo2\n"
          "  REVISION                a branch, tag or commit (default: main)\n"
          "  SUBFOLDER, FILE         the model in a folder of the repository, or one file\n"
          "                          of it alone (a .gguf package)\n"
          "      --include PATTERN   fetch the files matching PATTERN (as huggingface-cli\n"
          "                          download --include: '*' matches any characters) instead\n"
          "                          of the family's; repeat for several\n"
          "\n"
          "The cache is huggingface_hub's: $HF_HUB_CACHE, else $HF_HOME/hub, else\n"
          "~/.cache/huggingface/hub, so files it already holds are not fetched again and\n"
          "Python tools find what this command fetched. A broken download resumes on the\n"
          "next run; every LFS file's SHA-256 is checked before it enters the cache.\n"
          "\n"
          "environment:\n"
          "  HF_TOKEN                token for gated or private repositories (else the file\n"
          "                          huggingface-cli login writes)\n"
          "  HF_ENDPOINT             the Hub's address (default https://huggingface.co)\n"
          "  HF_HUB_OFFLINE=1        only the cache, as --offline\n"
          "  AUDIOC_HUB_TIMEOUT      seconds a connection may stall (default 60)\n"
          "\n" COMMON_OPTIONS_HELP,
          f);
}

int cmd_pull(int argc, char **argv)
{
    enum { O_INCLUDE };
    static const opt_def defs[] = {[O_INCLUDE] = {"--include", 1}, {0}};
    const char **include = calloc((size_t)argc + 1, sizeof *include);
    const char *repo = NULL;
    int n = 0, rc = 2;
    if (!include) return 1;
    opt_parser p;
    opt_init(&p, "audioc pull", argc, argv);
    const char *v;
    for (int k; (k = opt_next(&p, defs, &v)) != OPT_END;)
        switch (k) {
        case O_INCLUDE: include[n++] = v; break;
        case OPT_OPERAND:
            if (repo) {
                fprintf(stderr, "audioc pull: one repository at a time ('%s' and '%s')\n", repo, v);
                goto out;
            }
            repo = v;
            break;
        case OPT_HELP:
            usage(stdout);
            rc = 0;
            goto out;
        default: goto out;
        }
    if (!repo) {
        usage(stderr);
        goto out;
    }
    ac_hub_options o;
    ac_hub_options_default(&o);
    o.include = n ? include : NULL;
    char *path;
    if (ac_hub_pull(repo, &o, &path) != AC_OK) {
        fprintf(stderr, "audioc pull: %s\n", ac_last_error());
        rc = 1;
        goto out;
    }
    printf("%s\n", path);
    ac_free(path);
    rc = 0;
out:
    free(include);
    return rc;
}
