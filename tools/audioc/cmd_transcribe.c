/* audioc transcribe: speech to text with an ASR model package. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "default_model.h"
#include "input.h"
#include "options.h"
#include "transcript_out.h"

static void usage(FILE *f)
{
    fputs(
        "usage: audioc transcribe [--model PATH] [options] FILE...\n"
        "\n"
        "Transcribes speech in audio files (any format and rate; channels are mixed\n"
        "to mono). Long audio is cut into chunks at quiet points (35 s at most).\n"
        "\n"
        "model:\n"
        "  -m, --model PATH        model package folder, or a single-file .gguf package\n"
        "                          (default: $AUDIOC_ASR_MODEL, else the bundled\n"
        "                          models/hviske-tiny-da: Danish, synthetic speech only)\n"
        "  -l, --language L        spoken language, one the model supports (da)\n"
        "      --no-punctuation    lower case, no punctuation\n"
        "      --vad PATH          recognize only the speech a VAD model finds (Silero or\n"
        "                          MarbleNet weights); silence between is skipped\n"
        "\n"
        "decoding (greedy by default):\n"
        "  -b, --beam-size N       beam search with N beams (1)\n"
        "      --length-penalty A  beam score / length^A (1.0)\n"
        "      --temperature T     sample with temperature T > 0 instead of greedy\n"
        "      --top-k K           sample from the K most likely tokens, 0 = all (50)\n"
        "      --top-p P           sample from the smallest set with probability P (1.0)\n"
        "      --seed S            random seed for sampling (0)\n"
        "      --max-new-tokens N  tokens per chunk at most (256)\n"
        "      --min-new-tokens N  no end of text before N tokens (0; for benchmarks)\n"
        "      --no-prompt-prefix  9-token prompt without the leading word marker\n"
        "\n"
        "output:\n"
        "  -f, --format F          text (default), json, srt or vtt\n"
        "      --tokens            json: include token ids\n"
        "      --timings           print load, front end, encoder, prefill and per-token\n"
        "                          decode times and the real-time factor on stderr\n"
        "\n"
        COMMON_OPTIONS_HELP
        "\n"
        "Exit status: 0 ok, 1 a file failed, 2 bad usage.\n",
        f);
}

typedef enum { FMT_TEXT, FMT_JSON, FMT_SRT, FMT_VTT } asr_format;

typedef struct {
    const char *model, *vad;
    asr_format format;
    int tokens, timings;
    ac_asr_options opt;
    char **files;
    int n_files;
} asr_args;

static int parse_format(const char *v, asr_format *f)
{
    const char *names[] = {"text", "json", "srt", "vtt"};
    for (int i = 0; i < 4; i++)
        if (strcmp(v, names[i]) == 0) {
            *f = (asr_format)i;
            return 0;
        }
    fprintf(stderr, "audioc: --format: '%s' is not one of text, json, srt, vtt\n", v);
    return -1;
}

static int parse(int argc, char **argv, asr_args *a)
{
    enum { O_MODEL, O_LANGUAGE, O_NO_PUNCTUATION, O_VAD, O_BEAM, O_LENGTH_PENALTY, O_TEMPERATURE, O_TOP_K,
           O_TOP_P, O_SEED, O_MAX_NEW, O_MIN_NEW, O_NO_PROMPT_PREFIX, O_FORMAT, O_TOKENS, O_TIMINGS };
    static const opt_def defs[] = {
        [O_MODEL] = {"-m|--model", 1}, [O_LANGUAGE] = {"-l|--language", 1},
        [O_NO_PUNCTUATION] = {"--no-punctuation", 0}, [O_VAD] = {"--vad", 1}, [O_BEAM] = {"-b|--beam-size", 1},
        [O_LENGTH_PENALTY] = {"--length-penalty", 1}, [O_TEMPERATURE] = {"--temperature", 1},
        [O_TOP_K] = {"--top-k", 1}, [O_TOP_P] = {"--top-p", 1}, [O_SEED] = {"--seed", 1},
        [O_MAX_NEW] = {"--max-new-tokens", 1}, [O_MIN_NEW] = {"--min-new-tokens", 1},
        [O_NO_PROMPT_PREFIX] = {"--no-prompt-prefix", 0}, [O_FORMAT] = {"-f|--format", 1},
        [O_TOKENS] = {"--tokens", 0}, [O_TIMINGS] = {"--timings", 0}, {0},
    };
    ac_asr_options_default(&a->opt);
    a->model = default_asr_model();
    a->files = malloc(((size_t)argc + 1) * sizeof *a->files);
    if (!a->files) return -1;
    const char *v;
    double d = 0;
    int n = 0, bad = 0, sampling_opts = 0;
    opt_parser p;
    opt_init(&p, "audioc transcribe", argc, argv);
    for (int k; !bad && (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_MODEL: a->model = v; break;
        case O_LANGUAGE: a->opt.language = v; break;
        case O_NO_PUNCTUATION: a->opt.punctuation = 0; break;
        case O_VAD: a->vad = v; break;
        case O_BEAM: bad = arg_int(p.opt, v, 1, 64, &a->opt.beam_size); break;
        case O_LENGTH_PENALTY: bad = arg_float(p.opt, v, 0, 10, &d); a->opt.length_penalty = (float)d; break;
        case O_TEMPERATURE: bad = arg_float(p.opt, v, 0, 100, &d); a->opt.temperature = (float)d; break;
        case O_TOP_K: bad = arg_int(p.opt, v, 0, 1 << 30, &a->opt.top_k); sampling_opts = 1; break;
        case O_TOP_P: bad = arg_float(p.opt, v, 1e-6, 1, &d); a->opt.top_p = (float)d; sampling_opts = 1; break;
        case O_SEED: bad = arg_int(p.opt, v, 0, 2147483647, &n); a->opt.seed = (uint64_t)n; break;
        case O_MAX_NEW: bad = arg_int(p.opt, v, 1, 1 << 20, &a->opt.max_new_tokens); break;
        case O_MIN_NEW: bad = arg_int(p.opt, v, 0, 1 << 20, &a->opt.min_new_tokens); break;
        case O_NO_PROMPT_PREFIX: a->opt.prompt_prefix = 0; break;
        case O_FORMAT: bad = parse_format(v, &a->format); break;
        case O_TOKENS: a->tokens = 1; break;
        case O_TIMINGS: a->timings = 1; break;
        case OPT_OPERAND: a->files[a->n_files++] = (char *)v; break;
        case OPT_HELP: usage(stdout); exit(0);
        default: bad = 1;
        }
    }
    if (bad || cli_stdin_once(p.cmd, a->files, a->n_files)) return -1;
    if (sampling_opts && a->opt.temperature == 0)
        fprintf(stderr, "audioc: --top-k/--top-p apply to sampling only: add --temperature T\n");
    if (a->opt.temperature > 0 && a->opt.beam_size > 1) {
        fprintf(stderr, "audioc transcribe: sampling (--temperature) works with --beam-size 1 only\n");
        return -1;
    }
    if (a->opt.min_new_tokens > a->opt.max_new_tokens) {
        fprintf(stderr, "audioc transcribe: --min-new-tokens is above --max-new-tokens\n");
        return -1;
    }
    if (!a->n_files) {
        fprintf(stderr, "audioc transcribe: no input files (see audioc transcribe --help)\n");
        return -1;
    }
    if (!a->model) {
        fprintf(stderr, "audioc transcribe: no model: give --model PATH (a cohere_asr package folder or .gguf) or set "
                        "AUDIOC_ASR_MODEL (the bundled models/" DEFAULT_MODEL_ID " was not found)\n");
        return -1;
    }
    return 0;
}

static void print_result(const asr_args *a, const char *file, const ac_asr_result *r, int several)
{
    static const transcript_format as[] = {TRANSCRIPT_TEXT, TRANSCRIPT_VERBOSE_JSON, TRANSCRIPT_SRT, TRANSCRIPT_VTT};
    if (a->format == FMT_TEXT && several) printf("%s:\n", file);
    transcript_meta m = {file, a->opt.language, a->opt.temperature, a->tokens};
    transcript_write(stdout, as[a->format], r, &m);
    fflush(stdout);
}

int cmd_transcribe(int argc, char **argv)
{
    asr_args a = {0};
    if (parse(argc, argv, &a)) {
        free(a.files);
        return 2;
    }
    double t0 = ac_now();
    ac_model *asr = load_model(a.model, NULL, AC_TASK_ASR, "");
    if (!asr || (a.vad && !(a.opt.vad = load_model(a.vad, NULL, AC_TASK_VAD, "--vad: not a VAD model: ")))) {
        ac_model_free(asr);
        free(a.files);
        return 1;
    }
    if (a.timings) fprintf(stderr, "timings: load %s: %.1f ms\n", a.model, 1e3 * (ac_now() - t0));
    int failed = 0;
    for (int i = 0; i < a.n_files; i++) {
        ac_asr_result *r;
        double t1 = ac_now();
        const char *name = cli_input_name(a.files[i]);
        ac_audio_input in;
        char *buf;
        if (cli_input_open(a.files[i], &in, &buf)) {
            failed = 1;
            continue;
        }
        ac_status s = ac_asr_transcribe(asr, &in, &a.opt, &r);
        free(buf);
        if (s != AC_OK) {
            fprintf(stderr, "audioc: %s\n", ac_last_error());
            failed = 1;
            continue;
        }
        double dt = ac_now() - t1;
        print_result(&a, name, r, a.n_files > 1);
        if (a.timings) {
            const ac_asr_timings *t = &r->timings;
            fprintf(stderr,
                    "timings: %s: %.2f s of audio in %zu chunk(s): front end %.1f ms, encoder %.1f ms, prefill "
                    "%.1f ms, decode %.1f ms for %d steps (%.2f ms/token); total %.1f ms, real-time factor %.4f\n",
                    name, r->duration, r->n_segments, 1e3 * t->frontend, 1e3 * t->encoder, 1e3 * t->prefill,
                    1e3 * t->decode, t->decode_steps, t->decode_steps ? 1e3 * t->decode / t->decode_steps : 0.0,
                    1e3 * dt, r->duration > 0 ? dt / r->duration : 0.0);
        }
        ac_asr_result_free(r);
    }
    if (a.timings) fprintf(stderr, "timings: peak RSS %.1f MB, threads %d\n", ac_peak_rss_mb(), ac_get_threads());
    ac_model_free(a.opt.vad);
    ac_model_free(asr);
    free(a.files);
    return failed;
}
