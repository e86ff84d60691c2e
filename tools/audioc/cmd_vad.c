/* audioc vad: speech segments (or per-hop probabilities) of audio files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs(
        "usage: audioc vad [--model PATH] [--family NAME] [options] FILE...\n"
        "\n"
        "Finds speech in audio files (any format and rate; channels are mixed to\n"
        "mono) and prints the speech segments. Long files stream in bounded memory.\n"
        "\n"
        "model:\n"
        "  -m, --model PATH        weights file or model folder (default: $AUDIOC_VAD_MODEL)\n"
        "      --family NAME       silero_vad or marblenet_vad (default: detected)\n"
        "\n"
        "segments (silero_vad uses all; marblenet_vad uses --threshold only):\n"
        "      --threshold P       speech when probability >= P (0.5)\n"
        "      --neg-threshold P   silence when probability < P (threshold - 0.15)\n"
        "      --min-speech-ms N   drop speech shorter than N ms (250)\n"
        "      --min-silence-ms N  end speech after N ms of silence (100)\n"
        "      --speech-pad-ms N   pad each segment by N ms (30)\n"
        "      --max-speech-s S    split speech longer than S seconds (no limit)\n"
        "      --min-silence-at-max-speech-ms N\n"
        "                          silences longer than N ms are split points (98)\n"
        "      --no-split-at-longest-silence\n"
        "                          split long speech at the last silence, not the longest\n"
        "\n"
        "output:\n"
        "      --format F          text (default), json (one object per file per line), csv\n"
        "      --probs             print the probability of every chunk/frame instead of\n"
        "                          segments (text, csv); json adds a \"probs\" array\n"
        "      --timings           print load and run times and the real-time factor\n"
        "\n"
        COMMON_OPTIONS_HELP
        "\n"
        "Segments are [start, end) in seconds; json and csv also give samples at\n"
        "the file's own rate. Exit status: 0 ok, 1 a file failed, 2 bad usage.\n",
        f);
}

typedef struct {
    const char *model, *family;
    out_format format;
    int probs, timings;
    ac_vad_options opt;
} vad_args;

static int parse(int argc, char **argv, vad_args *a, int *first_file)
{
    ac_vad_options_default(&a->opt);
    a->model = getenv("AUDIOC_VAD_MODEL");
    int i;
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
        else if (arg_is(o, "--family")) { VALUE(); a->family = v; }
        else if (arg_is(o, "--format")) { VALUE(); if (out_format_parse(v, &a->format)) return -1; }
        else if (strcmp(o, "--probs") == 0) a->probs = 1;
        else if (strcmp(o, "--timings") == 0) a->timings = 1;
        else if (arg_is(o, "--threshold")) { VALUE(); if (arg_float(o, v, 0, 1, &d)) return -1; a->opt.threshold = (float)d; }
        else if (arg_is(o, "--neg-threshold")) { VALUE(); if (arg_float(o, v, -1, 1, &d)) return -1; a->opt.neg_threshold = (float)d; }
        else if (arg_is(o, "--min-speech-ms")) { VALUE(); if (arg_int(o, v, 0, 86400000, &a->opt.min_speech_ms)) return -1; }
        else if (arg_is(o, "--min-silence-ms")) { VALUE(); if (arg_int(o, v, 0, 86400000, &a->opt.min_silence_ms)) return -1; }
        else if (arg_is(o, "--speech-pad-ms")) { VALUE(); if (arg_int(o, v, 0, 86400000, &a->opt.speech_pad_ms)) return -1; }
        else if (arg_is(o, "--max-speech-s")) { VALUE(); if (arg_float(o, v, 0.1, 1e9, &a->opt.max_speech_s)) return -1; }
        else if (arg_is(o, "--min-silence-at-max-speech-ms")) { VALUE(); if (arg_int(o, v, 0, 86400000, &a->opt.min_silence_at_max_speech_ms)) return -1; }
        else if (strcmp(o, "--no-split-at-longest-silence") == 0) a->opt.use_max_poss_sil_at_max_speech = 0;
        else if ((n = common_option(argc, argv, &i)) != 0) {
            if (n < 0) return -1;
        } else {
            fprintf(stderr, "audioc vad: unknown option '%s' (see audioc vad --help)\n", o);
            return -1;
        }
#undef VALUE
    }
    *first_file = i;
    if (i >= argc) {
        fprintf(stderr, "audioc vad: no input files (see audioc vad --help)\n");
        return -1;
    }
    if (!a->model) {
        fprintf(stderr, "audioc vad: no model: give --model PATH (a silero_vad_16k.safetensors or "
                        "marblenet_vad.safetensors file, or its folder) or set AUDIOC_VAD_MODEL\n");
        return -1;
    }
    a->opt.keep_probs = a->probs;
    return 0;
}

/* Whether NAME is a VAD family (a message when not). */
static int is_vad_family(const char *name)
{
    const char *const *f = ac_families(AC_TASK_VAD);
    for (const char *const *n = f; *n; n++)
        if (strcmp(*n, name) == 0) return 1;
    fprintf(stderr, "audioc: unknown VAD family '%s' (", name);
    for (const char *const *n = f; *n; n++) fprintf(stderr, "%s%s", n == f ? "" : ", ", *n);
    fputs(")\n", stderr);
    return 0;
}

int cmd_vad(int argc, char **argv)
{
    vad_args a = {0};
    int first;
    if (parse(argc, argv, &a, &first)) return 2;

    double t0 = ac_now();
    if (a.family && !is_vad_family(a.family)) return 1;
    ac_model *vad = load_model(a.model, a.family, AC_TASK_VAD, "");
    if (!vad) return 1;
    double t_load = ac_now() - t0;
    if (a.timings) fprintf(stderr, "timings: load %s (%s): %.1f ms\n", a.model, ac_model_family(vad), 1e3 * t_load);

    int failed = 0;
    out_begin(a.format, a.probs);
    for (int i = first; i < argc; i++) {
        ac_vad_result *r;
        double t1 = ac_now();
        ac_audio_input in = ac_input_file(argv[i]);
        if (ac_vad_run(vad, &in, &a.opt, &r) != AC_OK) {
            fprintf(stderr, "audioc: %s\n", ac_last_error());
            failed = 1;
            continue;
        }
        double dt = ac_now() - t1;
        out_vad_result(a.format, argv[i], ac_model_family(vad), r, a.probs, argc - first > 1);
        if (a.timings) {
            double dur = r->sample_rate ? (double)r->n_samples / r->sample_rate : 0;
            fprintf(stderr, "timings: %s: %.3f s of audio in %.1f ms, real-time factor %.5f (%.0fx), "
                            "threads %d\n", argv[i], dur, 1e3 * dt, dur > 0 ? dt / dur : 0,
                    dt > 0 ? dur / dt : 0, ac_get_threads());
        }
        ac_vad_result_free(r);
    }
    if (a.timings) fprintf(stderr, "timings: peak RSS %.1f MB\n", ac_peak_rss_mb());
    ac_model_free(vad);
    return failed;
}
