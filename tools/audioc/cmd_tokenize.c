/* audioc tokenize: the token ids of texts, and the texts of ids, with a
 * model's own tokenizer; for checking a model against other tools. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "commands.h"
#include "input.h"
#include "json_out.h"
#include "options.h"

static void usage(FILE *f)
{
    fputs("usage: audioc tokenize --model PATH [options] [--] [TEXT...]\n"
          "       audioc tokenize --model PATH --decode [options] [IDS...]\n"
          "\n"
          "Prints the token ids of each TEXT as a JSON array, one line per text, with\n"
          "the byte-level BPE tokenizer of a model (Qwen2 / Vevo2, as Hugging Face\n"
          "tokenizers does it: added tokens such as <|im_start|> in the text become\n"
          "their ids). Without TEXT, all of stdin is one text.\n"
          "\n"
          "With --decode, prints the text of ids as a JSON string: the IDS arguments\n"
          "are one sequence (\"151644 8948\", or a JSON array \"[151644, 8948]\" per\n"
          "sequence); without them, each line of stdin is a JSON array.\n"
          "\n"
          "  -m, --model PATH        a Vevo2 package (its contentstyle_modeling/posttrained\n"
          "                          folder), a folder with tokenizer.json or vocab.json +\n"
          "                          merges.txt (+ tokenizer_config.json, added_tokens.json),\n"
          "                          or a tokenizer.json file; hf:ORG/NAME[@REVISION] fetches\n"
          "                          only the tokenizer's files from the Hugging Face Hub\n"
          "      --decode            ids to text\n"
          "      --skip-special      --decode drops special tokens (default: kept)\n"
          "      --timings           print load and tokenize times to stderr\n"
          "  -q, --quiet             errors only\n"
          "  -h, --help              this help\n"
          "\n"
          "Exit status: 0 ok, 1 a text or ids failed, 2 bad usage.\n",
          f);
}

typedef struct {
    const char *model;
    int decode, skip_special, timings;
    char **texts;   /* the operands, in order */
    int n_texts;
} tok_args;

static int parse(int argc, char **argv, tok_args *a)
{
    enum { O_MODEL, O_DECODE, O_SKIP_SPECIAL, O_TIMINGS };
    static const opt_def defs[] = {[O_MODEL] = {"-m|--model", 1}, [O_DECODE] = {"--decode", 0},
                                   [O_SKIP_SPECIAL] = {"--skip-special", 0}, [O_TIMINGS] = {"--timings", 0}, {0}};
    const char *v;
    opt_parser p;
    opt_init(&p, "audioc tokenize", argc, argv);
    a->texts = malloc(((size_t)argc + 1) * sizeof *a->texts);
    if (!a->texts) return -1;
    for (int k; (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_MODEL: a->model = v; break;
        case O_DECODE: a->decode = 1; break;
        case O_SKIP_SPECIAL: a->skip_special = 1; break;
        case O_TIMINGS: a->timings = 1; break;
        case OPT_OPERAND: a->texts[a->n_texts++] = (char *)v; break;
        case OPT_HELP: usage(stdout); exit(0);
        default: return -1;
        }
    }
    if (!a->model) {
        fprintf(stderr, "audioc tokenize: no model: give --model PATH (see audioc tokenize --help)\n");
        return -1;
    }
    return 0;
}

static int encode(const ac_tokenizer *tok, const char *text, size_t len, const char *what)
{
    int *ids;
    size_t n;
    if (ac_tokenize(tok, text, len, &ids, &n) != AC_OK) {
        fprintf(stderr, "audioc: %s: %s\n", what, ac_last_error());
        return 1;
    }
    putchar('[');
    for (size_t i = 0; i < n; i++) printf(i ? ", %d" : "%d", ids[i]);
    puts("]");
    ac_free(ids);
    return 0;
}

/* Ids in S: whole numbers separated by commas, spaces or brackets, appended
 * to *IDS. -1 on anything else. */
static int parse_ids(const char *s, int **ids, size_t *n, size_t *cap)
{
    while (*s) {
        if (strchr("[], \t\r\n", *s)) {
            s++;
            continue;
        }
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > INT_MAX) return -1;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 64;
            int *p = realloc(*ids, c * sizeof *p);
            if (!p) return -1;
            *ids = p, *cap = c;
        }
        (*ids)[(*n)++] = (int)v;
        s = end;
    }
    return 0;
}

static int decode(const ac_tokenizer *tok, const int *ids, size_t n, int keep_special)
{
    char *text;
    size_t len;
    if (ac_detokenize(tok, ids, n, keep_special, &text, &len) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
        return 1;
    }
    json_string_n(stdout, text, len);
    putchar('\n');
    ac_free(text);
    return 0;
}

static int run_decode(const ac_tokenizer *tok, int argc, char **argv, int keep_special)
{
    int *ids = NULL, failed = 0;
    size_t n = 0, cap = 0;
    for (int i = 0; i < argc && !failed; i++) {
        int array = argv[i][0] == '[';
        if (array && n) { /* plain ids before an array are a sequence of their own */
            failed |= decode(tok, ids, n, keep_special);
            n = 0;
        }
        if (parse_ids(argv[i], &ids, &n, &cap)) {
            fprintf(stderr, "audioc tokenize: '%s' is not a list of ids\n", argv[i]);
            free(ids);
            return 2;
        }
        if (array || i == argc - 1) {
            failed |= decode(tok, ids, n, keep_special);
            n = 0;
        }
    }
    if (argc == 0) {
        char *line = NULL;
        size_t lcap = 0;
        for (long k = 1; getline(&line, &lcap, stdin) > 0; k++) {
            n = 0;
            if (parse_ids(line, &ids, &n, &cap)) {
                fprintf(stderr, "audioc tokenize: stdin line %ld is not a JSON array of ids\n", k);
                failed = 1;
                continue;
            }
            failed |= decode(tok, ids, n, keep_special);
        }
        free(line);
    }
    free(ids);
    return failed;
}

int cmd_tokenize(int argc, char **argv)
{
    tok_args a = {0};
    if (parse(argc, argv, &a)) {
        free(a.texts);
        return 2;
    }
    double t0 = ac_now();
    ac_tokenizer *tok;
    if (ac_tokenizer_load(a.model, &tok) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
        free(a.texts);
        return 1;
    }
    double t1 = ac_now();
    if (a.timings)
        fprintf(stderr, "timings: load %s: %.1f ms, %d ids\n", a.model, 1e3 * (t1 - t0), ac_tokenizer_size(tok));
    int failed = 0;
    size_t bytes = 0;
    if (a.decode) {
        failed = run_decode(tok, a.n_texts, a.texts, !a.skip_special);
    } else if (a.n_texts == 0) {
        char *text;
        if (read_all(stdin, &text, &bytes)) {
            fprintf(stderr, "audioc tokenize: cannot read stdin\n");
            failed = 1;
        } else {
            failed = encode(tok, text, bytes, "stdin");
            free(text);
        }
    } else {
        for (int i = 0; i < a.n_texts; i++) {
            char what[32];
            snprintf(what, sizeof what, "text %d", i + 1);
            size_t len = strlen(a.texts[i]);
            failed |= encode(tok, a.texts[i], len, what);
            bytes += len;
        }
    }
    if (a.timings) {
        double dt = ac_now() - t1;
        fprintf(stderr, "timings: %s %zu bytes in %.1f ms (%.2f MB/s)\n", a.decode ? "decoded" : "tokenized", bytes,
                1e3 * dt, dt > 0 ? bytes / dt / 1e6 : 0);
    }
    ac_tokenizer_free(tok);
    free(a.texts);
    return failed;
}
