/* audioc transcribe: speech to text with an ASR model package. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "audioc.h"
#include "batch.h"
#include "commands.h"
#include "default_model.h"
#include "input.h"
#include "options.h"
#include "ordered.h"
#include "transcript_out.h"

static void usage(FILE *f)
{
    fputs(
        "usage: audioc transcribe [--model PATH] [options] FILE...\n"
        "\n"
        "Transcribes speech in audio files (any format and rate; channels are mixed\n"
        "to mono; M4A/MP4, WebM and AAC too). FILE - is standard input. Options may\n"
        "follow the files. A VAD finds the speech first: each stretch of speech is one\n"
        "segment, silence and other sounds give no text. Without it (--no-vad) the\n"
        "audio is cut into chunks at quiet points (35 s at most).\n"
        "\n"
        "model:\n"
        "  -m, --model PATH        model package folder, or a single-file .gguf package,\n"
        "                          or hf:ORG/NAME[@REVISION] on the Hugging Face Hub\n"
        "                          (default: $AUDIOC_ASR_MODEL, else the bundled\n"
        "                          models/hviske-tiny-da: Danish, synthetic speech only)\n"
        "  -l, --language L        spoken language, one the model supports (da)\n"
        "      --no-punctuation    lower case, no punctuation\n"
        "      --vad PATH          the VAD model that finds the speech (Silero or MarbleNet\n"
        "                          weights; default: $AUDIOC_VAD_MODEL, else the bundled\n"
        "                          models/" DEFAULT_VAD_ID ")\n"
        WEIGHTS_HELP
        "      --no-vad            recognize the whole audio, in chunks of 35 s at most\n"
        "\n"
        "decoding (greedy by default):\n"
        "  -b, --beam-size N       beam search with N beams (the model's: 1; hviske_v6: 2)\n"
        "      --length-penalty A  beam score / length^A (1.0)\n"
        "      --temperature T     sample with temperature T > 0 instead of greedy\n"
        "      --top-k K           sample from the K most likely tokens, 0 = all (50)\n"
        "      --top-p P           sample from the smallest set with probability P (1.0)\n"
        "      --seed S            random seed for sampling (0)\n"
        "      --max-new-tokens N  tokens per chunk at most (256)\n"
        "      --min-new-tokens N  no end of text before N tokens (0; for benchmarks)\n"
        "      --no-prompt-prefix  9-token prompt without the leading word marker\n"
        "\n"
        "output (on stdout, or one file per input with --output-dir/--output-format):\n"
        "  -f, --format F          text (default), json, srt or vtt; srt and vtt of\n"
        "                          several inputs need --output-dir or --output-format\n"
        "      --output-dir DIR    write the --format of each input to DIR/NAME.EXT (NAME:\n"
        "                          the input's file name without its extension; stdin for -)\n"
        "      --output-format L   write these formats (txt, json, srt, vtt, all; comma-separated)\n"
        "                          to files, under --output-dir or else beside each input\n"
        "      -otxt, -oj, -osrt, -ovtt  add txt, json, srt or vtt (as whisper.cpp)\n"
        "      --tokens            json: include token ids\n"
        "      --word-timestamps   json: each word's start and end (cross-attention DTW)\n"
        "      --max-segment-length N\n"
        "                          srt, vtt: cues of at most N characters, cut between\n"
        "                          words and timed by them (implies --word-timestamps)\n"
        "      --max-line-width N  srt, vtt: lines of at most N characters, broken between\n"
        "                          words (implies --word-timestamps)\n"
        "      --timings           print load, front end, encoder, prefill and per-token\n"
        "                          decode times and the real-time factor on stderr\n"
        "  -p, --parallel N        transcribe N inputs at once with the one loaded model\n"
        "                          (the threads are shared among them); outputs keep the\n"
        "                          order of the inputs (1)\n"
        "\n"
        "batch runs (on a cluster: a task per shard; each output is written to\n"
        "NAME.EXT.partial and renamed when whole):\n"
        "      --shard I/N         sort the inputs by name and take every N-th from the\n"
        "                          I-th (0 <= I < N): N tasks cover each input once.\n"
        "                          auto[/N]: I from SLURM_ARRAY_TASK_ID (less\n"
        "                          SLURM_ARRAY_TASK_MIN) or JOB_COMPLETION_INDEX, N from\n"
        "                          SLURM_ARRAY_TASK_COUNT when not given\n"
        "      --skip-existing     leave out inputs whose outputs are all there (a killed\n"
        "                          run is resumed by running it again)\n"
        "      --manifest FILE     append a JSON line per input: input, status (ok,\n"
        "                          failed, skipped), seconds, error\n"
        "\n"
        COMMON_OPTIONS_HELP
        "\n"
        "Exit status: 0 ok, 1 a file failed, 2 bad usage.\n",
        f);
}

/* The output formats: their --format name, file extension and writer. */
enum { FMT_TEXT, FMT_JSON, FMT_SRT, FMT_VTT, N_FORMATS };
static const struct {
    const char *name, *ext;
    transcript_format as;
} formats[N_FORMATS] = {
    [FMT_TEXT] = {"text", "txt", TRANSCRIPT_TEXT},
    [FMT_JSON] = {"json", "json", TRANSCRIPT_VERBOSE_JSON},
    [FMT_SRT] = {"srt", "srt", TRANSCRIPT_SRT},
    [FMT_VTT] = {"vtt", "vtt", TRANSCRIPT_VTT},
};

typedef struct {
    const char *model, *vad, *out_dir, *manifest_path;
    int shard, shards;   /* --shard I/N (shards 0: none) */
    int skip_existing;
    FILE *manifest;
    ac_weight_type weights;
    int format;          /* on stdout */
    unsigned files_out;  /* bit per format written to files; 0: stdout */
    int tokens, timings, parallel, max_len, max_line;
    ac_asr_options opt;
    char **files;
    int n_files;
} asr_args;

/* The format named V (its name or extension), or -1 after a message. */
static int parse_format(const char *opt, const char *v, size_t len)
{
    for (int i = 0; i < N_FORMATS; i++)
        if ((strlen(formats[i].name) == len && strncmp(v, formats[i].name, len) == 0) ||
            (strlen(formats[i].ext) == len && strncmp(v, formats[i].ext, len) == 0))
            return i;
    fprintf(stderr, "audioc: %s: '%.*s' is not one of txt, json, srt, vtt\n", opt, (int)len, v);
    return -1;
}

/* "txt,srt" (or "all") as bits of FORMATS; -1 after a message. */
static int parse_format_list(const char *opt, const char *v, unsigned *bits)
{
    if (strcmp(v, "all") == 0) {
        *bits |= (1u << N_FORMATS) - 1;
        return 0;
    }
    for (const char *p = v;; p++) {
        size_t len = strcspn(p, ",");
        int f = parse_format(opt, p, len);
        if (f < 0) return -1;
        *bits |= 1u << f;
        p += len;
        if (!*p) return 0;
    }
}

static int parse(int argc, char **argv, asr_args *a)
{
    enum { O_MODEL, O_LANGUAGE, O_NO_PUNCTUATION, O_VAD, O_BEAM, O_LENGTH_PENALTY, O_TEMPERATURE, O_TOP_K,
           O_TOP_P, O_SEED, O_MAX_NEW, O_MIN_NEW, O_NO_PROMPT_PREFIX, O_FORMAT, O_TOKENS, O_TIMINGS, O_OUTPUT_DIR,
           O_NO_VAD, O_WORD_TIMESTAMPS, O_MAX_SEGMENT_LENGTH, O_MAX_LINE_WIDTH,
           O_OUTPUT_FORMAT, O_OTXT, O_OJ, O_OSRT, O_OVTT, O_PARALLEL, O_WEIGHTS, O_SHARD, O_SKIP_EXISTING,
           O_MANIFEST };
    static const opt_def defs[] = {
        [O_MODEL] = {"-m|--model", 1}, [O_LANGUAGE] = {"-l|--language", 1},
        [O_NO_PUNCTUATION] = {"--no-punctuation", 0}, [O_VAD] = {"--vad", 1}, [O_NO_VAD] = {"--no-vad", 0},
        [O_WORD_TIMESTAMPS] = {"--word-timestamps", 0}, [O_MAX_SEGMENT_LENGTH] = {"--max-segment-length", 1},
        [O_MAX_LINE_WIDTH] = {"--max-line-width", 1}, [O_BEAM] = {"-b|--beam-size", 1},
        [O_LENGTH_PENALTY] = {"--length-penalty", 1}, [O_TEMPERATURE] = {"--temperature", 1},
        [O_TOP_K] = {"--top-k", 1}, [O_TOP_P] = {"--top-p", 1}, [O_SEED] = {"--seed", 1},
        [O_MAX_NEW] = {"--max-new-tokens", 1}, [O_MIN_NEW] = {"--min-new-tokens", 1},
        [O_NO_PROMPT_PREFIX] = {"--no-prompt-prefix", 0}, [O_FORMAT] = {"-f|--format", 1},
        [O_TOKENS] = {"--tokens", 0}, [O_TIMINGS] = {"--timings", 0}, [O_OUTPUT_DIR] = {"--output-dir", 1},
        [O_OUTPUT_FORMAT] = {"--output-format", 1}, [O_OTXT] = {"-otxt", 0}, [O_OJ] = {"-oj", 0},
        [O_OSRT] = {"-osrt", 0}, [O_OVTT] = {"-ovtt", 0}, [O_PARALLEL] = {"-p|--parallel", 1},
        [O_WEIGHTS] = {"--weights", 1}, [O_SHARD] = {"--shard", 1}, [O_SKIP_EXISTING] = {"--skip-existing", 0},
        [O_MANIFEST] = {"--manifest", 1}, {0},
    };
    a->parallel = 1;
    ac_asr_options_default(&a->opt);
    a->model = default_asr_model();
    a->vad = default_vad_model();
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
        case O_WEIGHTS: bad = arg_weights(p.opt, v, &a->weights); break;
        case O_LANGUAGE: a->opt.language = v; break;
        case O_NO_PUNCTUATION: a->opt.punctuation = 0; break;
        case O_VAD: a->vad = v; break;
        case O_NO_VAD: a->vad = NULL; break;
        case O_WORD_TIMESTAMPS: a->opt.word_timestamps = 1; break;
        case O_MAX_SEGMENT_LENGTH: bad = arg_int(p.opt, v, 1, 1 << 20, &a->max_len); a->opt.word_timestamps = 1; break;
        case O_MAX_LINE_WIDTH: bad = arg_int(p.opt, v, 1, 1 << 20, &a->max_line); a->opt.word_timestamps = 1; break;
        case O_BEAM: bad = arg_int(p.opt, v, 1, AC_MAX_BEAM_SIZE, &a->opt.beam_size); break;
        case O_LENGTH_PENALTY: bad = arg_float(p.opt, v, 0, 10, &d); a->opt.length_penalty = (float)d; break;
        case O_TEMPERATURE: bad = arg_float(p.opt, v, 0, 100, &d); a->opt.temperature = (float)d; break;
        case O_TOP_K: bad = arg_int(p.opt, v, 0, 1 << 30, &a->opt.top_k); sampling_opts = 1; break;
        case O_TOP_P: bad = arg_float(p.opt, v, 1e-6, 1, &d); a->opt.top_p = (float)d; sampling_opts = 1; break;
        case O_SEED: bad = arg_int(p.opt, v, 0, 2147483647, &n); a->opt.seed = (uint64_t)n; break;
        case O_MAX_NEW: bad = arg_int(p.opt, v, 1, 1 << 20, &a->opt.max_new_tokens); break;
        case O_MIN_NEW: bad = arg_int(p.opt, v, 0, 1 << 20, &a->opt.min_new_tokens); break;
        case O_NO_PROMPT_PREFIX: a->opt.prompt_prefix = 0; break;
        case O_FORMAT: bad = (a->format = parse_format(p.opt, v, strlen(v))) < 0; break;
        case O_OUTPUT_DIR: a->out_dir = v; break;
        case O_OUTPUT_FORMAT: bad = parse_format_list(p.opt, v, &a->files_out); break;
        /* -otxt, -oj, -osrt, -ovtt are in the order of FORMATS */
        case O_OTXT: case O_OJ: case O_OSRT: case O_OVTT: a->files_out |= 1u << (k - O_OTXT); break;
        case O_PARALLEL: bad = arg_int(p.opt, v, 1, 256, &a->parallel); break;
        case O_TOKENS: a->tokens = 1; break;
        case O_TIMINGS: a->timings = 1; break;
        case O_SHARD: bad = batch_shard_parse(v, &a->shard, &a->shards); break;
        case O_SKIP_EXISTING: a->skip_existing = 1; break;
        case O_MANIFEST: a->manifest_path = v; break;
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
    if (a->out_dir && !a->files_out) a->files_out = 1u << a->format;
    if ((a->shards || a->skip_existing) && !a->files_out) {
        fprintf(stderr, "audioc transcribe: --shard and --skip-existing write a file per input: give --output-dir DIR "
                        "or --output-format\n");
        return -1;
    }
    if (a->shards) a->n_files = batch_shard(a->files, a->n_files, a->shard, a->shards);
    if (!a->files_out && a->n_files > 1 && (a->format == FMT_SRT || a->format == FMT_VTT)) {
        fprintf(stderr, "audioc transcribe: %s of %d files on stdout would be one file of cues with the times of "
                        "different inputs: give --output-dir DIR or --output-format %s (a file per input)\n",
                formats[a->format].name, a->n_files, formats[a->format].ext);
        return -1;
    }
    if (!a->model) {
        fprintf(stderr, "audioc transcribe: no model: give --model PATH (a cohere_asr package folder or .gguf) or set "
                        "AUDIOC_ASR_MODEL (the bundled models/" DEFAULT_MODEL_ID " was not found)\n");
        return -1;
    }
    return 0;
}

/* ---- one file per input and format ------------------------------------------ */

/* DIR/NAME.EXT for input FILE: DIR is --output-dir, else the input's folder;
 * NAME its file name without the extension ("stdin" for -). */
static void out_path(const asr_args *a, const char *file, const char *ext, char *buf, size_t size)
{
    const char *name = cli_input_name(file), *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot > base ? (int)(dot - base) : (int)strlen(base);
    if (a->out_dir) snprintf(buf, size, "%s/%.*s.%s", a->out_dir, stem, base, ext);
    else snprintf(buf, size, "%.*s%.*s.%s", (int)(base - name), name, stem, base, ext);
}

/* Usage errors of the files to write: two inputs (a/x.wav, b/x.flac) that
 * would write the same file, or an output that is an input. */
static int check_out_paths(const asr_args *a)
{
    char **stems = calloc((size_t)a->n_files, sizeof *stems), path[4096];
    int bad = !stems;
    for (int i = 0; i < a->n_files && !bad; i++) {
        out_path(a, a->files[i], "", path, sizeof path);
        if (!(stems[i] = strdup(path))) bad = 1;
        for (int j = 0; j < i && !bad; j++)
            if (strcmp(stems[i], stems[j]) == 0) {
                fprintf(stderr, "audioc transcribe: '%s' and '%s' would write the same files (%sEXT)\n",
                        a->files[j], a->files[i], path);
                bad = 1;
            }
        for (int f = 0; f < N_FORMATS && !bad; f++) {
            out_path(a, a->files[i], formats[f].ext, path, sizeof path);
            if ((a->files_out >> f & 1) && strcmp(path, a->files[i]) == 0) {
                fprintf(stderr, "audioc transcribe: the %s output of '%s' would overwrite it\n", formats[f].ext,
                        a->files[i]);
                bad = 1;
            }
        }
    }
    for (int i = 0; stems && i < a->n_files; i++) free(stems[i]);
    free(stems);
    return bad ? -1 : 0;
}

/* --output-dir made when missing; -1 after a message. */
static int make_out_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    if (mkdir(dir, 0777) == 0) return 0;
    fprintf(stderr, "audioc: --output-dir %s: cannot create it (%s)\n", dir, strerror(errno));
    return -1;
}

/* Each output is written to PATH.partial and renamed when whole: a run
 * killed midway leaves no output that looks finished. */
static int write_files(const asr_args *a, const char *file, const ac_asr_result *r, const transcript_meta *m)
{
    int failed = 0;
    for (int f = 0; f < N_FORMATS; f++) {
        if (!(a->files_out >> f & 1)) continue;
        char path[4096], part[4200];
        out_path(a, file, formats[f].ext, path, sizeof path);
        snprintf(part, sizeof part, "%s.partial", path);
        FILE *out = fopen(part, "w");
        if (out) transcript_write(out, formats[f].as, r, m);
        if (!out || ferror(out) | fclose(out) || rename(part, path) != 0) {
            fprintf(stderr, "audioc: %s: cannot write it (%s)\n", path, strerror(errno));
            remove(part);
            failed = 1;
        }
    }
    return failed;
}

/* Whether every output of FILE is there (--skip-existing). */
static int outputs_exist(const asr_args *a, const char *file)
{
    for (int f = 0; f < N_FORMATS; f++) {
        char path[4096];
        out_path(a, file, formats[f].ext, path, sizeof path);
        if ((a->files_out >> f & 1) && access(path, F_OK) != 0) return 0;
    }
    return 1;
}

/* --skip-existing: the inputs whose outputs are all there are left out (a manifest line each). */
static void skip_existing(asr_args *a)
{
    int k = 0;
    for (int i = 0; i < a->n_files; i++) {
        if (!outputs_exist(a, a->files[i])) a->files[k++] = a->files[i];
        else if (a->manifest) batch_manifest_line(a->manifest, a->files[i], "skipped", 0, NULL);
    }
    a->n_files = k;
}

/* ---- the inputs, one at a time or several at once ------------------------------ */

typedef struct {
    ac_asr_result *result;
    char *error;       /* the message when it failed (NULL: already printed) */
    int failed;
    double seconds;
} asr_job;

typedef struct {
    const asr_args *a;
    ac_model *asr;
    asr_job *jobs;
    int failed;
    int files_done, count_files; /* several at once: one line counting finished files, not a bar per file */
} asr_run;

static void work(int i, void *user)
{
    asr_run *run = user;
    asr_job *j = &run->jobs[i];
    double t0 = ac_now();
    ac_audio_input in;
    char *buf;
    if (cli_input_open(run->a->files[i], &in, &buf)) {
        j->failed = 1;
        return;
    }
    if (ac_asr_transcribe(run->asr, &in, &run->a->opt, &j->result) != AC_OK) {
        j->failed = 1;
        j->error = strdup(ac_last_error());
    }
    free(buf);
    j->seconds = ac_now() - t0;
}

static void print_timings(const char *name, const ac_asr_result *r, double dt)
{
    const ac_asr_timings *t = r->timings;
    fprintf(stderr,
            "timings: %s: %.2f s of audio in %zu chunk(s): front end %.1f ms, encoder %.1f ms, prefill "
            "%.1f ms, decode %.1f ms for %d steps (%.2f ms/token); total %.1f ms, real-time factor %.4f\n",
            name, r->duration, r->n_segments, 1e3 * t->frontend, 1e3 * t->encoder, 1e3 * t->prefill,
            1e3 * t->decode, t->decode_steps, t->decode_steps ? 1e3 * t->decode / t->decode_steps : 0.0, 1e3 * dt,
            r->duration > 0 ? dt / r->duration : 0.0);
}

static void write_result(asr_run *run, int i, const char *name)
{
    const asr_args *a = run->a;
    asr_job *j = &run->jobs[i];
    transcript_meta m = {name, a->opt.language, a->opt.temperature, a->tokens, a->opt.word_timestamps, a->max_len,
                         a->max_line};
    if (a->files_out) {
        run->failed |= write_files(a, a->files[i], j->result, &m);
    } else {
        if (a->format == FMT_TEXT && a->n_files > 1) printf("%s:\n", name);
        transcript_write(stdout, formats[a->format].as, j->result, &m);
        fflush(stdout);
    }
    if (a->timings) print_timings(name, j->result, j->seconds);
    ac_asr_result_free(j->result);
    j->result = NULL;
}

static void done(int i, void *user)
{
    asr_run *run = user;
    const asr_args *a = run->a;
    asr_job *j = &run->jobs[i];
    const char *name = cli_input_name(a->files[i]);
    if (run->count_files) fputs("\r\033[K", stderr); /* the count line gives way to what follows */
    int failed_before = run->failed;
    if (j->failed) {
        if (j->error) fprintf(stderr, "audioc: %s\n", j->error);
        run->failed = 1;
    } else {
        write_result(run, i, name);
    }
    if (a->manifest)
        batch_manifest_line(a->manifest, a->files[i], j->failed || run->failed > failed_before ? "failed" : "ok",
                            j->seconds, j->error ? j->error : j->failed ? "cannot read it" : NULL);
    free(j->error);
    if (run->count_files) {
        fprintf(stderr, "\rtranscribed %d of %d files", ++run->files_done, a->n_files);
        if (run->files_done == a->n_files) fputc('\n', stderr);
        fflush(stderr);
    }
}

/* A usage error (2) for options the model cannot run with, as the language. */
static int check_model_options(ac_model *asr, const ac_asr_options *o)
{
    ac_status s = ac_asr_check_options(asr, o);
    if (s == AC_OK) return 0;
    if (s != AC_ERR_ARG) {
        fprintf(stderr, "audioc: %s\n", ac_last_error());
        return 1;
    }
    fprintf(stderr, "audioc transcribe: %s%s\n", ac_last_error(),
            strcmp(o->language, "auto") == 0 ? "; the language is not detected: give -l with one of them" : "");
    return 2;
}

int cmd_transcribe(int argc, char **argv)
{
    asr_args a = {0};
    if (parse(argc, argv, &a) || (a.files_out && check_out_paths(&a))) {
        free(a.files);
        return 2;
    }
    int rc = 1;
    if (a.out_dir && make_out_dir(a.out_dir)) goto out;
    if (a.manifest_path && !(a.manifest = fopen(a.manifest_path, "a"))) {
        fprintf(stderr, "audioc: --manifest %s: cannot open it (%s)\n", a.manifest_path, strerror(errno));
        goto out;
    }
    if (a.skip_existing) skip_existing(&a);
    if (!a.n_files) {   /* an empty shard, or everything done already */
        rc = 0;
        goto out;
    }
    double t0 = ac_now();
    ac_model *asr = load_model(a.model, NULL, a.weights, AC_TASK_ASR, "");
    if (!asr || (a.vad && !(a.opt.vad = load_model(a.vad, NULL, a.weights, AC_TASK_VAD, "--vad: not a VAD model: ")))) {
        ac_model_free(asr);
        goto out;
    }
    if ((rc = check_model_options(asr, &a.opt)) == 0) {
        if (a.timings) fprintf(stderr, "timings: load %s: %.1f ms\n", a.model, 1e3 * (ac_now() - t0));
        asr_run run = {&a, asr, calloc((size_t)a.n_files, sizeof(asr_job)), 0, 0, 0};
        if (a.parallel > 1 && a.n_files > 1) { /* bars of files decoded at once would overwrite each other */
            run.count_files = opt_progress_shown();
            ac_set_progress(0);
        }
        if (run.jobs) run_ordered(a.n_files, a.parallel, work, done, &run);
        rc = !run.jobs || run.failed;
        free(run.jobs);
        if (a.timings) fprintf(stderr, "timings: peak RSS %.1f MB, threads %d\n", ac_peak_rss_mb(), ac_get_threads());
    }
    ac_model_free(a.opt.vad);
    ac_model_free(asr);
out:
    if (a.manifest) fclose(a.manifest);
    free(a.files);
    return rc;
}
