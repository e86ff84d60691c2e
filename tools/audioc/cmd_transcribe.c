/* audioc transcribe: speech to text with an ASR model package. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "default_model.h"
#include "transcript_out.h"

static void usage(FILE *f)
{
    fputs(
        "usage: audioc transcribe [--model PATH] [options] FILE...\n"
        "\n"
        "Transcribes speech in audio files (any format and rate; channels are mixed\n"
        "to mono). A VAD finds the speech first: each stretch of speech is one\n"
        "segment, silence and other sounds give no text. Without it (--no-vad) the\n"
        "audio is cut into chunks at quiet points (35 s at most).\n"
        "\n"
        "model:\n"
        "  -m, --model PATH        model package folder, or a single-file .gguf package\n"
        "                          (default: $AUDIOC_ASR_MODEL, else the bundled\n"
        "                          models/hviske-tiny-da: Danish, synthetic speech only)\n"
        "  -l, --language L        spoken language, one the model supports (da)\n"
        "      --no-punctuation    lower case, no punctuation\n"
        "      --vad PATH          the VAD model that finds the speech (Silero or MarbleNet\n"
        "                          weights; default: $AUDIOC_VAD_MODEL, else the bundled\n"
        "                          models/" DEFAULT_VAD_ID ")\n"
        "      --no-vad            recognize the whole audio, in chunks of 35 s at most\n"
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
        "      --word-timestamps   json: each word's start and end (cross-attention DTW)\n"
        "      --max-segment-length N\n"
        "                          srt, vtt: cues of at most N characters, cut between\n"
        "                          words and timed by them (implies --word-timestamps)\n"
        "      --max-line-width N  srt, vtt: lines of at most N characters, broken between\n"
        "                          words (implies --word-timestamps)\n"
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
    int tokens, timings, max_len, max_line;
    ac_asr_options opt;
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

static int parse(int argc, char **argv, asr_args *a, int *first)
{
    ac_asr_options_default(&a->opt);
    a->model = default_asr_model();
    a->vad = default_vad_model();
    int i, sampling_opts = 0;
    for (i = 0; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i], *v;
        double d;
        int n;
        if (strcmp(o, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
#define VALUE() if (!(v = arg_value(argc, argv, &i))) return -1
        if (arg_is(o, "-m") || arg_is(o, "--model")) { VALUE(); a->model = v; }
        else if (arg_is(o, "-l") || arg_is(o, "--language")) { VALUE(); a->opt.language = v; }
        else if (strcmp(o, "--no-punctuation") == 0) a->opt.punctuation = 0;
        else if (arg_is(o, "--vad")) { VALUE(); a->vad = v; }
        else if (strcmp(o, "--no-vad") == 0) a->vad = NULL;
        else if (arg_is(o, "-b") || arg_is(o, "--beam-size")) { VALUE(); if (arg_int(o, v, 1, 64, &a->opt.beam_size)) return -1; }
        else if (arg_is(o, "--length-penalty")) { VALUE(); if (arg_float(o, v, 0, 10, &d)) return -1; a->opt.length_penalty = (float)d; }
        else if (arg_is(o, "--temperature")) { VALUE(); if (arg_float(o, v, 0, 100, &d)) return -1; a->opt.temperature = (float)d; }
        else if (arg_is(o, "--top-k")) { VALUE(); if (arg_int(o, v, 0, 1 << 30, &a->opt.top_k)) return -1; sampling_opts = 1; }
        else if (arg_is(o, "--top-p")) { VALUE(); if (arg_float(o, v, 1e-6, 1, &d)) return -1; a->opt.top_p = (float)d; sampling_opts = 1; }
        else if (arg_is(o, "--seed")) { VALUE(); if (arg_int(o, v, 0, 2147483647, &n)) return -1; a->opt.seed = (uint64_t)n; }
        else if (arg_is(o, "--max-new-tokens")) { VALUE(); if (arg_int(o, v, 1, 1 << 20, &a->opt.max_new_tokens)) return -1; }
        else if (arg_is(o, "--min-new-tokens")) { VALUE(); if (arg_int(o, v, 0, 1 << 20, &a->opt.min_new_tokens)) return -1; }
        else if (strcmp(o, "--no-prompt-prefix") == 0) a->opt.prompt_prefix = 0;
        else if (arg_is(o, "-f") || arg_is(o, "--format")) { VALUE(); if (parse_format(v, &a->format)) return -1; }
        else if (strcmp(o, "--tokens") == 0) a->tokens = 1;
        else if (strcmp(o, "--word-timestamps") == 0) a->opt.word_timestamps = 1;
        else if (arg_is(o, "--max-segment-length")) { VALUE(); if (arg_int(o, v, 1, 1 << 20, &a->max_len)) return -1; a->opt.word_timestamps = 1; }
        else if (arg_is(o, "--max-line-width")) { VALUE(); if (arg_int(o, v, 1, 1 << 20, &a->max_line)) return -1; a->opt.word_timestamps = 1; }
        else if (strcmp(o, "--timings") == 0) a->timings = 1;
        else if ((n = common_option(argc, argv, &i)) != 0) {
            if (n < 0) return -1;
        } else {
            fprintf(stderr, "audioc transcribe: unknown option '%s' (see audioc transcribe --help)\n", o);
            return -1;
        }
#undef VALUE
    }
    *first = i;
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
    if (i >= argc) {
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
    transcript_meta m = {file, a->opt.language, a->opt.temperature, a->tokens, a->opt.word_timestamps, a->max_len, a->max_line};
    transcript_write(stdout, as[a->format], r, &m);
    fflush(stdout);
}

int cmd_transcribe(int argc, char **argv)
{
    asr_args a = {0};
    int first;
    if (parse(argc, argv, &a, &first)) return 2;
    double t0 = ac_now();
    ac_model *asr = load_model(a.model, NULL, AC_TASK_ASR, "");
    if (!asr) return 1;
    if (a.vad && !(a.opt.vad = load_model(a.vad, NULL, AC_TASK_VAD, "--vad: not a VAD model: "))) {
        ac_model_free(asr);
        return 1;
    }
    if (a.timings) fprintf(stderr, "timings: load %s: %.1f ms\n", a.model, 1e3 * (ac_now() - t0));
    int failed = 0;
    for (int i = first; i < argc; i++) {
        ac_asr_result *r;
        double t1 = ac_now();
        ac_audio_input in = ac_input_file(argv[i]);
        if (ac_asr_transcribe(asr, &in, &a.opt, &r) != AC_OK) {
            fprintf(stderr, "audioc: %s\n", ac_last_error());
            failed = 1;
            continue;
        }
        double dt = ac_now() - t1;
        print_result(&a, argv[i], r, argc - first > 1);
        if (a.timings) {
            const ac_asr_timings *t = &r->timings;
            fprintf(stderr,
                    "timings: %s: %.2f s of audio in %zu chunk(s): front end %.1f ms, encoder %.1f ms, prefill "
                    "%.1f ms, decode %.1f ms for %d steps (%.2f ms/token); total %.1f ms, real-time factor %.4f\n",
                    argv[i], r->duration, r->n_segments, 1e3 * t->frontend, 1e3 * t->encoder, 1e3 * t->prefill,
                    1e3 * t->decode, t->decode_steps, t->decode_steps ? 1e3 * t->decode / t->decode_steps : 0.0,
                    1e3 * dt, r->duration > 0 ? dt / r->duration : 0.0);
        }
        ac_asr_result_free(r);
    }
    if (a.timings) fprintf(stderr, "timings: peak RSS %.1f MB, threads %d\n", ac_peak_rss_mb(), ac_get_threads());
    ac_model_free(a.opt.vad);
    ac_model_free(asr);
    return failed;
}
