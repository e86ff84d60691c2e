/* The one option parser of every audioc command.
 *
 * GNU style: options and operands may come in any order ("audioc transcribe
 * x.wav --format srt"); "--name=value" and "--name value" (and "-n value")
 * both give a value; "--" ends the options, so every later argument is an
 * operand; "-" alone is an operand (standard input, see cli_input_open).
 * The options every command takes (-t/--threads, -q, -v, --progress,
 * --no-progress: COMMON_OPTIONS_HELP) are applied here and never returned.
 *
 *     enum { O_MODEL, O_TOKENS };
 *     static const opt_def defs[] = {[O_MODEL] = {"-m|--model", 1}, [O_TOKENS] = {"--tokens", 0}, {0}};
 *     opt_parser p;
 *     opt_init(&p, "audioc transcribe", argc, argv);
 *     const char *v;
 *     for (int k; (k = opt_next(&p, defs, &v)) != OPT_END;)
 *         switch (k) {
 *         case O_MODEL: model = v; break;          (v: the value)
 *         case O_TOKENS: tokens = 1; break;
 *         case OPT_OPERAND: add_file(v); break;    (v: the operand)
 *         case OPT_HELP: usage(stdout); exit(0);
 *         default: return 2;                       (OPT_ERROR: already reported)
 *         }
 *
 * Messages about a value name the option as the user wrote it: p.opt
 * (e.g. arg_int(p.opt, v, 1, 64, &n) from args.h). */
#ifndef AUDIOC_TOOLS_OPTIONS_H
#define AUDIOC_TOOLS_OPTIONS_H

typedef struct {
    const char *names;   /* its spellings separated by '|': "-m|--model"; NULL ends a table */
    int takes_value;
} opt_def;

enum { OPT_END = -1, OPT_OPERAND = -2, OPT_HELP = -3, OPT_ERROR = -4 };

typedef struct {
    const char *cmd;     /* "audioc transcribe": how messages begin */
    int argc;
    char **argv;
    int i;               /* the next argument */
    int operands_only;   /* after "--" */
    const char *opt;     /* the option just returned, as written without "=value" */
    char opt_buf[64];
} opt_parser;

void opt_init(opt_parser *p, const char *cmd, int argc, char **argv);

/* The next argument: the index of its option in DEFS (*VALUE its value, or
 * NULL when it takes none), OPT_OPERAND (*VALUE the operand), OPT_HELP for
 * -h/--help, OPT_END after the last argument, or OPT_ERROR after printing
 * why (an unknown option, a missing or bad value). */
int opt_next(opt_parser *p, const opt_def *defs, const char **value);

/* Whether progress goes to stderr (--progress, --no-progress, else when it is a terminal). */
int opt_progress_shown(void);

#endif
