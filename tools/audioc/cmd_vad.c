/* audioc vad: speech segments (or per-hop probabilities) of audio files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "default_model.h"
#include "input.h"
#include "options.h"
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
        "  -m, --model PATH        weights file or model folder, or hf:ORG/NAME[@REVISION]\n"
        "                          on the Hugging Face Hub (default: $AUDIOC_VAD_MODEL,\n"
        "                          else the bundled models/" DEFAULT_VAD_ID ")\n"
        "      --family NAME       silero_vad or marblenet_vad (default: detected)\n"
        WEIGHTS_HELP
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
    ac_weight_type weights;
    out_format format;
    int probs, timings;
    ac_vad_options opt;
    char **files;
    int n_files;
} vad_args;

static int parse(int argc, char **argv, vad_args *a)
{
    enum { O_MODEL, O_FAMILY, O_FORMAT, O_PROBS, O_TIMINGS, O_THRESHOLD, O_NEG_THRESHOLD, O_MIN_SPEECH,
           O_MIN_SILENCE, O_PAD, O_MAX_SPEECH, O_MIN_SILENCE_AT_MAX, O_NO_SPLIT_LONGEST, O_WEIGHTS };
    static const opt_def defs[] = {
        [O_MODEL] = {"-m|--model", 1}, [O_FAMILY] = {"--family", 1}, [O_FORMAT] = {"--format", 1},
        [O_PROBS] = {"--probs", 0}, [O_TIMINGS] = {"--timings", 0}, [O_THRESHOLD] = {"--threshold", 1},
        [O_NEG_THRESHOLD] = {"--neg-threshold", 1}, [O_MIN_SPEECH] = {"--min-speech-ms", 1},
        [O_MIN_SILENCE] = {"--min-silence-ms", 1}, [O_PAD] = {"--speech-pad-ms", 1},
        [O_MAX_SPEECH] = {"--max-speech-s", 1}, [O_MIN_SILENCE_AT_MAX] = {"--min-silence-at-max-speech-ms", 1},
        [O_NO_SPLIT_LONGEST] = {"--no-split-at-longest-silence", 0}, [O_WEIGHTS] = {"--weights", 1}, {0},
    };
    ac_vad_options_default(&a->opt);
    a->model = default_vad_model();
    a->files = malloc(((size_t)argc + 1) * sizeof *a->files);
    if (!a->files) return -1;
    const char *v;
    double d = 0;
    int bad = 0;
    opt_parser p;
    opt_init(&p, "audioc vad", argc, argv);
    for (int k; !bad && (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_MODEL: a->model = v; break;
        case O_FAMILY: a->family = v; break;
        case O_WEIGHTS: bad = arg_weights(p.opt, v, &a->weights); break;
        case O_FORMAT: bad = out_format_parse(v, &a->format); break;
        case O_PROBS: a->probs = 1; break;
        case O_TIMINGS: a->timings = 1; break;
        case O_THRESHOLD: bad = arg_float(p.opt, v, 0, 1, &d); a->opt.threshold = (float)d; break;
        case O_NEG_THRESHOLD: bad = arg_float(p.opt, v, -1, 1, &d); a->opt.neg_threshold = (float)d; break;
        case O_MIN_SPEECH: bad = arg_int(p.opt, v, 0, 86400000, &a->opt.min_speech_ms); break;
        case O_MIN_SILENCE: bad = arg_int(p.opt, v, 0, 86400000, &a->opt.min_silence_ms); break;
        case O_PAD: bad = arg_int(p.opt, v, 0, 86400000, &a->opt.speech_pad_ms); break;
        case O_MAX_SPEECH: bad = arg_float(p.opt, v, 0.1, 1e9, &a->opt.max_speech_s); break;
        case O_MIN_SILENCE_AT_MAX: bad = arg_int(p.opt, v, 0, 86400000, &a->opt.min_silence_at_max_speech_ms); break;
        case O_NO_SPLIT_LONGEST: a->opt.use_max_poss_sil_at_max_speech = 0; break;
        case OPT_OPERAND: a->files[a->n_files++] = (char *)v; break;
        case OPT_HELP: usage(stdout); exit(0);
        default: bad = 1;
        }
    }
    if (bad || cli_stdin_once(p.cmd, a->files, a->n_files)) return -1;
    if (!a->n_files) {
        fprintf(stderr, "audioc vad: no input files (see audioc vad --help)\n");
        return -1;
    }
    if (!a->model) {
        fprintf(stderr, "audioc vad: no model: give --model PATH (a silero_vad_16k.safetensors or "
                        "marblenet_vad.safetensors file, or its folder) or set AUDIOC_VAD_MODEL (the bundled "
                        "models/" DEFAULT_VAD_ID " was not found)\n");
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
    if (parse(argc, argv, &a)) {
        free(a.files);
        return 2;
    }

    double t0 = ac_now();
    ac_model *vad = !a.family || is_vad_family(a.family) ? load_model(a.model, a.family, a.weights, AC_TASK_VAD, "") : NULL;
    if (!vad) {
        free(a.files);
        return 1;
    }
    double t_load = ac_now() - t0;
    if (a.timings) fprintf(stderr, "timings: load %s (%s): %.1f ms\n", a.model, ac_model_family(vad), 1e3 * t_load);

    int failed = 0;
    out_begin(a.format, a.probs);
    for (int i = 0; i < a.n_files; i++) {
        ac_vad_result *r;
        double t1 = ac_now();
        const char *name = cli_input_name(a.files[i]);
        ac_audio_input in;
        char *buf;
        if (cli_input_open(a.files[i], &in, &buf)) {
            failed = 1;
            continue;
        }
        ac_status s = ac_vad_run(vad, &in, &a.opt, &r);
        free(buf);
        if (s != AC_OK) {
            fprintf(stderr, "audioc: %s\n", ac_last_error());
            failed = 1;
            continue;
        }
        double dt = ac_now() - t1;
        out_vad_result(a.format, name, ac_model_family(vad), r, a.probs, a.n_files > 1);
        if (a.timings) {
            double dur = r->sample_rate ? (double)r->n_samples / r->sample_rate : 0;
            fprintf(stderr, "timings: %s: %.3f s of audio in %.1f ms, real-time factor %.5f (%.0fx), "
                            "threads %d\n", name, dur, 1e3 * dt, dur > 0 ? dt / dur : 0,
                    dt > 0 ? dur / dt : 0, ac_get_threads());
        }
        ac_vad_result_free(r);
    }
    if (a.timings) fprintf(stderr, "timings: peak RSS %.1f MB\n", ac_peak_rss_mb());
    ac_model_free(vad);
    free(a.files);
    return failed;
}
