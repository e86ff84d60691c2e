/* audioc tts / vc / svc: speech and singing in a given voice (Vevo2): from
 * text, or from a source recording along one of Vevo2's routes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "args.h"
#include "audioc.h"
#include "commands.h"
#include "input.h"
#include "options.h"

static const char ROUTES_HELP[] =
    "routes (--route):\n"
    "  zero_shot_tts, text_to_singing, svs   TEXT in the target voice (tts's default is\n"
    "                          zero_shot_tts; add --prosody-ref F for a melody to sing)\n"
    "  style_preserved_vc, style_preserved_svc  SOURCE in the target voice, its words,\n"
    "                          melody and style kept (vc's and svc's default)\n"
    "  style_converted_vc, style_converted_svc  SOURCE's words (--text) and delivery in\n"
    "                          the target voice, with the style of --style-ref\n"
    "  editing                 SOURCE said as --text instead (--source-text: its words)\n"
    "  singing_style_conversion  a song (--text: its lyrics) in the style of --style-ref\n"
    "  humming_to_singing, instrument_to_singing  the melody of SOURCE (or --prosody-ref)\n"
    "                          sung with the words of --text\n";

static void usage(FILE *f, const char *cmd)
{
    int tts = strcmp(cmd, "tts") == 0;
    if (tts)
        fprintf(f, "usage: audioc tts --model DIR --voice REF [--voice-text \"what REF says\"] [options] TEXT... "
                   "-o OUT.wav\n\n"
                   "Says (or sings) TEXT in the voice of REF, a few seconds of the target speaker.\n"
                   "TEXT may also come from --text-file FILE or standard input. Long text is\n"
                   "spoken in chunks of about 20 s, split at sentence and clause ends.\n");
    else
        fprintf(f, "usage: audioc %s --model DIR --target-voice REF [options] SOURCE -o OUT.wav\n\n"
                   "%s SOURCE again in the voice of REF: by default its words, melody and style\n"
                   "kept, the timbre of REF (a few seconds of the target speaker or singer); other\n"
                   "routes change its words or style. vc and svc differ only in their default route.\n",
                cmd, strcmp(cmd, "svc") == 0 ? "Sings" : "Says");
    fprintf(f,
            "Inputs in any format, rate and channel count (- is standard input); the output\n"
            "is 24 kHz mono.\n"
            "\n"
            "model:\n"
            "  -m, --model DIR         a Vevo2 package folder (as published: acoustic_modeling/,\n"
            "                          contentstyle_modeling/, tokenizer/, vocoder/), or\n"
            "                          hf:RMSnow/Vevo2 on the Hugging Face Hub (with the\n"
            "                          openai/whisper-medium encoder)\n"
            "      --whisper PATH      the Whisper-medium encoder: OpenAI's medium.pt, a Hugging\n"
            "                          Face openai/whisper-medium folder, or model.safetensors with\n"
            "                          OpenAI names + config.json (default: whisper-medium/ or\n"
            "                          medium.pt in DIR, else whisper-medium/ beside DIR)\n"
            WEIGHTS_HELP
            "\n"
            "references:\n"
            "  -r, --voice, --target-voice REF  the voice to speak or sing in\n"
            "      --voice-text T      what REF says: with it REF is also the style reference of\n"
            "                          speech from text (unless --style-ref is given)\n"
            "      --style-ref F       whose way of speaking or singing to take\n"
            "      --style-text T      what F says\n"
            "      --prosody-ref F     the melody or delivery to follow (default: SOURCE)\n"
            "      --source-text T     what SOURCE says (editing: the words being replaced)\n"
            "      --text T, --text-file F  what to say or sing (every route through the AR model)\n"
            "      --route NAME        see below\n"
            "      --prosody-code / --no-prosody-code  the prosody reference's tokens in the\n"
            "                          prompt (default: as the route)\n"
            "      --target-duration S stretch the prosody to S seconds\n"
            "      --reference-duration S  use only the first S seconds of REF\n"
            "\n"
            "pitch:\n"
            "  --pitch-shift N|auto    shift the melody of SOURCE or the prosody reference by N\n"
            "                          semitones (-24..24), or by the shift between its median\n"
            "                          pitch and REF's (auto; the default where the route shifts)\n"
            "  --style-pitch-shift N   ... and that of the style reference\n"
            "  --no-pitch-shift        no shift\n"
            "\n"
            "AR sampling (defaults as upstream):\n"
            "  --temperature T (1.0; 0 is greedy)  --top-k K (25)  --top-p P (0.8)\n"
            "  --repetition-penalty R (the package's)  --min-tokens N (15)\n"
            "  --max-tokens N          per text chunk (500, 40 s)\n"
            "\n"
            "flow matching:\n"
            "  --steps N               steps (32)\n"
            "  --seed S                seed of the AR draws and the initial noise (0)\n"
            "  --fm-noise FILE         the initial noise instead: raw little-endian float32,\n"
            "                          [frame][mel] (for comparisons with other implementations)\n"
            "\n"
            "output:\n"
            "  -o, --output OUT        .wav (16-bit PCM unless --float), .flac, .ogg, .opus, .mp3\n"
            "                          or .pcm (raw 16-bit little-endian); - writes to standard\n"
            "                          output in the --format given (wav). The folder and the\n"
            "                          format are checked before the model loads\n"
            "      --format F          wav, flac, ogg, opus, mp3 or pcm, for -o -\n"
            "      --float             32-bit float WAV\n"
            "      --speed S           the pace: the audio stretched to 1/S of its length, pitch\n"
            "                          kept (phase vocoder), 0.25..4 (1)\n"
            "      --timings           print the time of every stage and the real-time factor\n"
            "      --no-limits         no bound on the work: without it, steps are at most 100\n"
            "                          and a request that could make more than 600 s of audio\n"
            "                          (every text chunk at its token limit) is refused, as\n"
            "                          audioc-server does\n"
            "\n"
            "%s\n" COMMON_OPTIONS_HELP "\n"
            "Exit status: 0 ok, 1 the request failed, 2 bad usage.\n",
            ROUTES_HELP);
}

typedef struct {
    const char *cmd, *model, *whisper, *target, *style, *prosody, *noise_file, *source, *out, *text_file;
    const char *format;  /* of the output: --format, else OUT's extension */
    int no_limits;
    char *text;          /* malloc'd */
    ac_weight_type weights;
    int pcm16, timings;
    ac_voice_options opt;
} voice_args;

/* Appends WORD to the text, a space between. */
static int add_text(voice_args *a, const char *word)
{
    size_t n = a->text ? strlen(a->text) : 0, k = strlen(word);
    char *t = realloc(a->text, n + k + 2);
    if (!t) return -1;
    if (n) t[n++] = ' ';
    memcpy(t + n, word, k + 1);
    a->text = t;
    return 0;
}

/* The text of --text-file F or standard input ("-"). */
static int read_text(voice_args *a, const char *file)
{
    FILE *f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
    char *buf;
    size_t len;
    int bad = !f || read_all(f, &buf, &len);
    if (f && f != stdin) fclose(f);
    if (bad) {
        fprintf(stderr, "audioc %s: %s: cannot read the text\n", a->cmd, cli_input_name(file));
        return -1;
    }
    free(a->text);
    a->text = buf;
    return 0;
}

/* The output's format and place, before any work: OUT "-" (standard
 * output, in --format or wav) or a file whose extension names a format
 * this build writes, in a folder that exists and is writable. */
static int check_output(const char *cmd, voice_args *a)
{
    static const char *const known[] = {"wav", "flac", "ogg", "opus", "mp3", "pcm"};
    const char *dot = strrchr(a->out, '.'), *slash = strrchr(a->out, '/');
    int to_stdout = strcmp(a->out, "-") == 0;
    if (a->format && !to_stdout) {
        fprintf(stderr, "%s: --format is for -o - (the extension of '%s' names its format)\n", cmd, a->out);
        return -1;
    }
    const char *fmt = to_stdout ? (a->format ? a->format : "wav") : dot && (!slash || dot > slash) ? dot + 1 : "";
    size_t k = 0;
    while (k < sizeof known / sizeof *known && strcasecmp(fmt, known[k]) != 0) k++;
    static const float blip[480];
    void *data;
    size_t size;
    if (k == sizeof known / sizeof *known || ac_audio_encode(known[k], blip, 480, 1, 24000, 1, &data, &size)) {
        fprintf(stderr, "%s: %s '%s': not a format this build writes (wav, flac, ogg, opus, mp3, pcm)\n", cmd,
                to_stdout ? "--format" : "-o: the extension", fmt);
        return -1;
    }
    ac_free(data);
    a->format = known[k];
    if (to_stdout) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - a->out) + (slash == a->out) : 1, slash ? a->out : ".");
    if (access(dir, W_OK) != 0 || (access(a->out, F_OK) == 0 && access(a->out, W_OK) != 0)) {
        fprintf(stderr, "%s: -o %s: %s\n", cmd, a->out,
                access(dir, F_OK) != 0 ? "its folder does not exist" : "not writable here");
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, voice_args *a)
{
    enum { O_MODEL, O_WHISPER, O_TARGET, O_VOICE_TEXT, O_STYLE, O_STYLE_TEXT, O_PROSODY, O_SOURCE_TEXT, O_TEXT,
           O_TEXT_FILE, O_ROUTE, O_PROSODY_CODE, O_NO_PROSODY_CODE, O_TARGET_DURATION, O_REFERENCE_DURATION,
           O_PITCH_SHIFT, O_STYLE_PITCH_SHIFT, O_NO_PITCH_SHIFT, O_TEMPERATURE, O_TOP_K, O_TOP_P, O_PENALTY,
           O_MIN_TOKENS, O_MAX_TOKENS, O_STEPS, O_SEED, O_FM_NOISE, O_OUTPUT, O_FLOAT, O_TIMINGS, O_SPEED, O_WEIGHTS, O_FORMAT, O_NO_LIMITS };
    static const opt_def defs[] = {
        [O_MODEL] = {"-m|--model", 1}, [O_WHISPER] = {"--whisper", 1},
        [O_TARGET] = {"-r|--voice|--target-voice", 1}, [O_VOICE_TEXT] = {"--voice-text", 1},
        [O_STYLE] = {"--style-ref", 1}, [O_STYLE_TEXT] = {"--style-text", 1}, [O_PROSODY] = {"--prosody-ref", 1},
        [O_SOURCE_TEXT] = {"--source-text", 1}, [O_TEXT] = {"--text", 1}, [O_TEXT_FILE] = {"--text-file", 1},
        [O_ROUTE] = {"--route", 1}, [O_PROSODY_CODE] = {"--prosody-code", 0},
        [O_NO_PROSODY_CODE] = {"--no-prosody-code", 0}, [O_TARGET_DURATION] = {"--target-duration", 1},
        [O_REFERENCE_DURATION] = {"--reference-duration", 1}, [O_PITCH_SHIFT] = {"--pitch-shift", 1},
        [O_STYLE_PITCH_SHIFT] = {"--style-pitch-shift", 1}, [O_NO_PITCH_SHIFT] = {"--no-pitch-shift", 0},
        [O_TEMPERATURE] = {"--temperature", 1}, [O_TOP_K] = {"--top-k", 1}, [O_TOP_P] = {"--top-p", 1},
        [O_PENALTY] = {"--repetition-penalty", 1}, [O_MIN_TOKENS] = {"--min-tokens", 1},
        [O_MAX_TOKENS] = {"--max-tokens", 1}, [O_STEPS] = {"--steps", 1}, [O_SEED] = {"--seed", 1},
        [O_FM_NOISE] = {"--fm-noise", 1}, [O_OUTPUT] = {"-o|--output", 1}, [O_FLOAT] = {"--float", 0},
        [O_TIMINGS] = {"--timings", 0}, [O_SPEED] = {"--speed", 1}, [O_WEIGHTS] = {"--weights", 1},
        [O_FORMAT] = {"--format", 1}, [O_NO_LIMITS] = {"--no-limits", 0}, {0},
    };
    ac_voice_options *o = &a->opt;
    ac_voice_options_default(o);
    const int tts = strcmp(a->cmd, "tts") == 0;
    o->route = tts ? "zero_shot_tts" : strcmp(a->cmd, "svc") == 0 ? "style_preserved_svc" : "style_preserved_vc";
    a->pcm16 = 1;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "audioc %s", a->cmd);
    const char *v;
    int n = 0, bad = 0, shift_given = 0, style_shift_given = 0;
    double d;
    opt_parser p;
    opt_init(&p, cmd, argc, argv);
    for (int k; !bad && (k = opt_next(&p, defs, &v)) != OPT_END;) {
        switch (k) {
        case O_MODEL: a->model = v; break;
        case O_WHISPER: a->whisper = v; break;
        case O_WEIGHTS: bad = arg_weights(p.opt, v, &a->weights); break;
        case O_TARGET: a->target = v; break;
        case O_VOICE_TEXT: o->target_voice_text = v; break;
        case O_STYLE: a->style = v; break;
        case O_STYLE_TEXT: o->style_text = v; break;
        case O_PROSODY: a->prosody = v; break;
        case O_SOURCE_TEXT: o->source_text = v; break;
        case O_TEXT: free(a->text), a->text = NULL, bad = add_text(a, v); break;
        case O_TEXT_FILE: a->text_file = v; break;
        case O_ROUTE: o->route = v; break;
        case O_PROSODY_CODE: o->use_prosody_code = 1; break;
        case O_NO_PROSODY_CODE: o->use_prosody_code = 0; break;
        case O_TARGET_DURATION: bad = arg_float(p.opt, v, 0.1, 120, &d); o->target_duration = d; break;
        case O_REFERENCE_DURATION: bad = arg_float(p.opt, v, 0.5, 60, &d); o->reference_duration = d; break;
        case O_PITCH_SHIFT:
            shift_given++;
            o->use_pitch_shift = 1;
            if (strcmp(v, "auto") == 0) break;
            bad = arg_int(p.opt, v, -24, 24, &o->pitch_shift);
            o->pitch_mode = AC_PITCH_FIXED;
            break;
        case O_STYLE_PITCH_SHIFT: bad = arg_int(p.opt, v, -24, 24, &o->style_pitch_shift); style_shift_given = 1; break;
        case O_NO_PITCH_SHIFT: o->pitch_mode = AC_PITCH_NONE; shift_given++; break;
        case O_TEMPERATURE: bad = arg_float(p.opt, v, 0, 100, &d); o->temperature = (float)d; break;
        case O_TOP_K: bad = arg_int(p.opt, v, 0, 1 << 24, &o->top_k); break;
        case O_TOP_P: bad = arg_float(p.opt, v, 1e-6, 1, &d); o->top_p = (float)d; break;
        case O_PENALTY: bad = arg_float(p.opt, v, 1e-3, 100, &d); o->repetition_penalty = (float)d; break;
        case O_MIN_TOKENS: bad = arg_int(p.opt, v, 0, 4096, &o->min_new_tokens); break;
        case O_MAX_TOKENS: bad = arg_int(p.opt, v, 1, 4096, &o->max_new_tokens); break;
        case O_STEPS: bad = arg_int(p.opt, v, 1, 1000, &o->steps); break;
        case O_SEED: bad = arg_int(p.opt, v, 0, 2147483647, &n); o->seed = (uint64_t)n; break;
        case O_FM_NOISE: a->noise_file = v; break;
        case O_OUTPUT: a->out = v; break;
        case O_FLOAT: a->pcm16 = 0; break;
        case O_TIMINGS: a->timings = 1; break;
        case O_SPEED: bad = arg_float(p.opt, v, 0.25, 4, &o->speed); break;
        case O_FORMAT: a->format = v; break;
        case O_NO_LIMITS: a->no_limits = 1; break;
        case OPT_OPERAND:
            if (tts) {
                bad = add_text(a, v);
            } else if (a->source) {
                fprintf(stderr, "%s: one source at a time ('%s' and '%s')\n", cmd, a->source, v);
                return -1;
            } else {
                a->source = v;
            }
            break;
        case OPT_HELP: usage(stdout, a->cmd); exit(0);
        default: bad = 1;
        }
    }
    if (bad) return -1;
    if (style_shift_given && o->pitch_mode != AC_PITCH_FIXED) {
        fprintf(stderr, "%s: --style-pitch-shift goes with --pitch-shift N\n", cmd);
        return -1;
    }
    if (shift_given > 1) {
        fprintf(stderr, "%s: give --pitch-shift or --no-pitch-shift, not both\n", cmd);
        return -1;
    }
    if (a->text && a->text_file) {
        fprintf(stderr, "%s: give the text or --text-file, not both\n", cmd);
        return -1;
    }
    /* tts without text reads it from standard input, unless that is a terminal */
    const char *text_src = a->text_file ? a->text_file : tts && !a->text && !isatty(0) ? "-" : NULL;
    const char *missing = !a->model                ? "--model DIR"
                          : tts && !a->text && !text_src ? "TEXT (or --text-file FILE)"
                          : !tts && !a->source     ? "a SOURCE audio file"
                          : !a->out                ? "-o OUT"
                                                   : NULL;
    if (missing) {
        fprintf(stderr, "%s: no %s given (see %s --help)\n", cmd, missing, cmd);
        return -1;
    }
    /* the command's own route takes its timbre from the target voice alone */
    const char *own = tts ? "zero_shot_tts" : strcmp(a->cmd, "svc") == 0 ? "style_preserved_svc" : "style_preserved_vc";
    if (!a->target && strcmp(o->route, own) == 0) {
        fprintf(stderr, "%s: no target voice given: give it with --voice REF (or -r, --target-voice)\n", cmd);
        return -1;
    }
    if (!a->no_limits && o->steps > AC_VOICE_MAX_STEPS) {
        fprintf(stderr, "%s: --steps %d: more than %d buy nothing (--no-limits allows it)\n", cmd, o->steps,
                AC_VOICE_MAX_STEPS);
        return -1;
    }
    if (!a->no_limits) o->max_seconds = AC_VOICE_MAX_SECONDS;
    if (check_output(cmd, a)) return -1;
    char *inputs[] = {(char *)a->source, (char *)a->target, (char *)a->style, (char *)a->prosody,
                      (char *)text_src};
    if (cli_stdin_once(cmd, inputs, 5)) return -1;
    if (text_src && read_text(a, text_src)) return -1;
    if (tts && a->text && !a->text[strspn(a->text, " \t\r\n")]) {
        fprintf(stderr, "%s: the text is empty: give the words to say\n", cmd);
        return -1;
    }
    o->text = a->text;
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
    const ac_voice_timings *t = r->timings;
    double dur = (double)r->n_samples / r->sample_rate;
    fprintf(stderr,
            "timings: load %.1f ms; decode %.1f ms, parts %.1f ms, whisper %.1f ms, pitch %.1f ms, chroma %.1f ms, "
            "tokenizer %.1f ms, timbre mel %.1f ms",
            1e3 * load, 1e3 * t->decode, 1e3 * t->parts, 1e3 * t->whisper, 1e3 * t->pitch, 1e3 * t->chroma,
            1e3 * t->tokenizer, 1e3 * t->timbre_mel);
    if (t->ar_tokens)
        fprintf(stderr, ", AR prefill %.1f ms, AR %d tokens %.1f ms (%.1f ms/token)", 1e3 * t->ar_prefill,
                t->ar_tokens, 1e3 * t->ar_decode, 1e3 * t->ar_decode / t->ar_tokens);
    fprintf(stderr, ", flow matching %.1f ms (%d steps, %.1f ms/step), vocoder %.1f ms\n", 1e3 * t->fm, t->fm_steps,
            t->fm_steps ? 1e3 * t->fm / t->fm_steps : 0.0, 1e3 * t->vocoder);
    fprintf(stderr,
            "timings: %s: %.2f s of audio in %.1f ms (%d chunk%s), real-time factor %.3f, pitch shift %+d semitones; "
            "peak RSS %.1f MB, threads %d\n",
            a->out, dur, 1e3 * total, t->chunks, t->chunks == 1 ? "" : "s", dur > 0 ? total / dur : 0.0,
            r->pitch_shift, ac_peak_rss_mb(), ac_get_threads());
}

/* The references named on the command line, read while the request runs. */
typedef struct {
    ac_audio_input in[4];
    char *buf[4];
} clips;

static int open_clips(voice_args *a, clips *c)
{
    const char *paths[4] = {a->source, a->target, a->style, a->prosody};
    const ac_audio_input **dest[4] = {NULL, &a->opt.target_voice, &a->opt.style_ref, &a->opt.prosody_ref};
    for (int i = 0; i < 4; i++) {
        if (!paths[i]) continue;
        if (cli_input_open(paths[i], &c->in[i], &c->buf[i])) return -1;
        if (dest[i]) *dest[i] = &c->in[i];
    }
    return 0;
}

/* The result to -o (a file, or standard output in a->format): 0, or -1 with the message on stderr. */
static int save(const voice_args *a, const ac_voice_result *r)
{
    void *data;
    size_t size;
    int ok = strcmp(a->out, "-") != 0
                 ? ac_audio_save(a->out, r->samples, r->n_samples, 1, r->sample_rate, a->pcm16) == AC_OK
                 : ac_audio_encode(a->format, r->samples, r->n_samples, 1, r->sample_rate, a->pcm16, &data, &size) ==
                       AC_OK;
    if (ok && strcmp(a->out, "-") == 0) {
        ok = fwrite(data, 1, size, stdout) == size && fflush(stdout) == 0;
        ac_free(data);
        if (!ok) fprintf(stderr, "audioc %s: cannot write to standard output\n", a->cmd);
        return ok ? 0 : -1;
    }
    if (!ok) fprintf(stderr, "audioc: %s\n", ac_last_error());
    return ok ? 0 : -1;
}

int cmd_voice(const char *cmd, int argc, char **argv)
{
    voice_args a = {.cmd = cmd};
    if (parse(argc, argv, &a)) {
        free(a.text);
        return 2;
    }
    float *noise = NULL;
    if (a.noise_file && !(noise = read_noise(a.noise_file, &a.opt.n_noise))) {
        free(a.text);
        return 1;
    }
    a.opt.noise = noise;
    double t0 = ac_now();
    ac_load_options lo;
    ac_load_options_default(&lo);
    lo.whisper = a.whisper;
    lo.weights = a.weights;
    ac_model *m = NULL;
    clips c = {0};
    int rc = 1;
    if (ac_model_load_with(a.model, NULL, &lo, &m) != AC_OK) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
    } else if (ac_model_task(m) != AC_TASK_VOICE) {
        fprintf(stderr, "audioc: %s holds a %s model (%s), not a voice model\n", a.model, ac_model_family(m),
                ac_task_name(ac_model_task(m)));
    } else if (open_clips(&a, &c) == 0) {
        double t1 = ac_now();
        ac_voice_result *r;
        if (ac_voice_convert(m, a.source ? &c.in[0] : NULL, &a.opt, &r) != AC_OK) {
            const char *e = ac_last_error();
            if (noise && strstr(e, "noise")) fprintf(stderr, "audioc: --fm-noise %s: %s\n", a.noise_file, e);
            else fprintf(stderr, "audioc: %s\n", e);
            if (!a.target && strstr(e, "no target voice"))
                fprintf(stderr, "audioc %s: give the voice with --target-voice REF (or -r, --voice)\n", cmd);
        } else {
            rc = save(&a, r) ? 1 : 0;
            if (a.timings) print_timings(&a, r, t1 - t0, ac_now() - t1);
            ac_voice_result_free(r);
        }
    }
    ac_model_free(m);
    for (int i = 0; i < 4; i++) free(c.buf[i]);
    free(a.text);
    free(noise);
    return rc;
}
