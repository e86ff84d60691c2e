/* audioc vc / svc: speech or singing said again in another voice (Vevo2's
 * style-preserved conversion). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "input.h"
#include "options.h"

static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
            "usage: audioc %s --model DIR --target-voice REF [options] SOURCE -o OUT.wav\n"
            "\n"
            "%s SOURCE again in the voice of REF: the words, melody and style of SOURCE,\n"
            "the timbre of REF (a few seconds of the target speaker or singer). Inputs in any\n"
            "format, rate and channel count; the output is 24 kHz mono. vc and svc run the\n"
            "same conversion (Vevo2's style-preserved voice and singing conversion).\n"
            "\n"
            "model:\n"
            "  -m, --model DIR         a Vevo2 package folder (as published: acoustic_modeling/,\n"
            "                          tokenizer/, vocoder/, ...)\n"
            "      --whisper PATH      the Whisper-medium encoder: OpenAI's medium.pt, a Hugging\n"
            "                          Face openai/whisper-medium folder, or model.safetensors with\n"
            "                          OpenAI names + config.json (default: whisper-medium/ or\n"
            "                          medium.pt in DIR, else whisper-medium/ beside DIR)\n"
            "\n"
            "conversion:\n"
            "  -r, --target-voice REF  the voice to convert to (required)\n"
            "      --pitch-shift N     shift the source's melody by N semitones (-24..24)\n"
            "      --no-pitch-shift    keep the source's melody as it is\n"
            "                          (default: the shift between the two voices' median pitch)\n"
            "      --steps N           flow-matching steps (32)\n"
            "      --seed S            seed of the initial noise (0)\n"
            "      --fm-noise FILE     the initial noise instead: raw little-endian float32,\n"
            "                          [frame][mel] (for comparisons with other implementations)\n"
            "\n"
            "output:\n"
            "  -o, --output OUT        the converted audio; .wav (16-bit PCM unless --float),\n"
            "                          .flac, .ogg, .opus or .mp3 by its extension\n"
            "      --float             32-bit float WAV\n"
            "      --timings           print the time of every stage and the real-time factor\n"
            "\n"
            COMMON_OPTIONS_HELP
            "\n"
            "Exit status: 0 ok, 1 the conversion failed, 2 bad usage.\n",
            cmd, strcmp(cmd, "svc") == 0 ? "Sings" : "Says");
}

typedef struct {
    const char *cmd, *model, *whisper, *target, *noise_file, *source, *out;
    int pcm16, timings;
    ac_voice_options opt;
} voice_args;

static int parse(int argc, char **argv, voice_args *a)
{
    enum { O_MODEL, O_WHISPER, O_TARGET, O_PITCH_SHIFT, O_NO_PITCH_SHIFT, O_STEPS, O_SEED, O_FM_NOISE, O_OUTPUT,
           O_FLOAT, O_TIMINGS };
    static const opt_def defs[] = {
        [O_MODEL] = {"-m|--model", 1}, [O_WHISPER] = {"--whisper", 1}, [O_TARGET] = {"-r|--target-voice", 1},
        [O_PITCH_SHIFT] = {"--pitch-shift", 1}, [O_NO_PITCH_SHIFT] = {"--no-pitch-shift", 0},
        [O_STEPS] = {"--steps", 1}, [O_SEED] = {"--seed", 1}, [O_FM_NOISE] = {"--fm-noise", 1},
        [O_OUTPUT] = {"-o|--output", 1}, [O_FLOAT] = {"--float", 0}, [O_TIMINGS] = {"--timings", 0}, {0},
    };
    ac_voice_options_default(&a->opt);
    a->pcm16 = 1;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "audioc %s", a->cmd);
    const char *v;
    int n = 0, bad = 0, shift_given = 0;
    opt_parser p;
    opt_init(&p, cmd, argc, argv);
    for (int k; !bad && (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_MODEL: a->model = v; break;
        case O_WHISPER: a->whisper = v; break;
        case O_TARGET: a->target = v; break;
        case O_PITCH_SHIFT:
            bad = arg_int(p.opt, v, -24, 24, &a->opt.pitch_shift);
            a->opt.pitch_mode = AC_PITCH_FIXED;
            shift_given++;
            break;
        case O_NO_PITCH_SHIFT:
            a->opt.pitch_mode = AC_PITCH_NONE;
            shift_given++;
            break;
        case O_STEPS: bad = arg_int(p.opt, v, 1, 1000, &a->opt.steps); break;
        case O_SEED: bad = arg_int(p.opt, v, 0, 2147483647, &n); a->opt.seed = (uint64_t)n; break;
        case O_FM_NOISE: a->noise_file = v; break;
        case O_OUTPUT: a->out = v; break;
        case O_FLOAT: a->pcm16 = 0; break;
        case O_TIMINGS: a->timings = 1; break;
        case OPT_OPERAND:
            if (a->source) {
                fprintf(stderr, "%s: one source at a time ('%s' and '%s')\n", cmd, a->source, v);
                return -1;
            }
            a->source = v;
            break;
        case OPT_HELP: usage(stdout, a->cmd); exit(0);
        default: bad = 1;
        }
    }
    if (bad) return -1;
    const char *missing = !a->model    ? "--model DIR"
                          : !a->target ? "--target-voice REF"
                          : !a->source ? "a SOURCE audio file"
                          : !a->out    ? "-o OUT"
                                       : NULL;
    if (missing) {
        fprintf(stderr, "audioc %s: no %s given (see audioc %s --help)\n", a->cmd, missing, a->cmd);
        return -1;
    }
    char *inputs[] = {(char *)a->source, (char *)a->target};
    if (cli_stdin_once(cmd, inputs, 2)) return -1;
    if (shift_given > 1) {
        fprintf(stderr, "audioc %s: give --pitch-shift N or --no-pitch-shift, not both\n", a->cmd);
        return -1;
    }
    return 0;
}

/* The whole of FILE as floats (raw little-endian f32). */
static float *read_noise(const char *file, size_t *n)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "audioc: --fm-noise %s: cannot open it\n", file);
        return NULL;
    }
    float *x = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size <= 0 || size % 4 || size > (1L << 30)) {
        fprintf(stderr, "audioc: --fm-noise %s: %ld bytes is not a whole number of float32 values (or is empty)\n",
                file, size);
    } else if ((x = malloc((size_t)size)) && (rewind(f), fread(x, 1, (size_t)size, f) == (size_t)size)) {
        *n = (size_t)size / 4;
    } else {
        fprintf(stderr, "audioc: --fm-noise %s: cannot read it\n", file);
        free(x);
        x = NULL;
    }
    fclose(f);
    return x;
}

static void print_timings(const voice_args *a, const ac_voice_result *r, double load, double total)
{
    const ac_voice_timings *t = &r->timings;
    double dur = (double)r->n_samples / r->sample_rate;
    fprintf(stderr,
            "timings: load %.1f ms; decode %.1f ms, whisper %.1f ms, pitch %.1f ms, chroma %.1f ms, tokenizer "
            "%.1f ms, timbre mel %.1f ms, flow matching %.1f ms (%d steps, %.1f ms/step), vocoder %.1f ms\n",
            1e3 * load, 1e3 * t->decode, 1e3 * t->whisper, 1e3 * t->pitch, 1e3 * t->chroma, 1e3 * t->tokenizer,
            1e3 * t->timbre_mel, 1e3 * t->fm, t->fm_steps, t->fm_steps ? 1e3 * t->fm / t->fm_steps : 0.0,
            1e3 * t->vocoder);
    fprintf(stderr,
            "timings: %s: %.2f s of audio in %.1f ms, real-time factor %.3f, pitch shift %+d semitones; peak RSS "
            "%.1f MB, threads %d\n",
            a->out, dur, 1e3 * total, dur > 0 ? total / dur : 0.0, r->pitch_shift, ac_peak_rss_mb(),
            ac_get_threads());
}

int cmd_voice(const char *cmd, int argc, char **argv)
{
    voice_args a = {.cmd = cmd};
    if (parse(argc, argv, &a)) return 2;
    float *noise = NULL;
    if (a.noise_file && !(noise = read_noise(a.noise_file, &a.opt.n_noise))) return 1;
    a.opt.noise = noise;
    double t0 = ac_now();
    ac_load_options lo;
    ac_load_options_default(&lo);
    lo.whisper = a.whisper;
    ac_model *m = NULL;
    char *src_buf = NULL, *tgt_buf = NULL;
    int rc = 1;
    if (ac_model_load_with(a.model, NULL, &lo, &m) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
    } else if (ac_model_task(m) != AC_TASK_VOICE) {
        fprintf(stderr, "audioc: %s holds a %s model (%s), not one for voice conversion\n", a.model,
                ac_model_family(m), ac_task_name(ac_model_task(m)));
    } else {
        double t1 = ac_now();
        ac_audio_input src, tgt;
        a.opt.target_voice = &tgt;
        ac_voice_result *r;
        if (cli_input_open(a.source, &src, &src_buf) || cli_input_open(a.target, &tgt, &tgt_buf)) {
            /* reported */
        } else if (ac_voice_convert(m, &src, &a.opt, &r) != AC_OK) {
            const char *e = ac_last_error();
            if (noise && strstr(e, "noise")) fprintf(stderr, "audioc: --fm-noise %s: %s\n", a.noise_file, e);
            else fprintf(stderr, "audioc: %s\n", e);
        } else {
            if (ac_audio_save(a.out, r->samples, r->n_samples, 1, r->sample_rate, a.pcm16) != AC_OK)
                fprintf(stderr, "audioc: %s\n", ac_last_error());
            else rc = 0;
            if (a.timings) print_timings(&a, r, t1 - t0, ac_now() - t1);
            ac_voice_result_free(r);
        }
    }
    ac_model_free(m);
    free(src_buf);
    free(tgt_buf);
    free(noise);
    return rc;
}
