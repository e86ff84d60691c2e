/* audio.c public API: opaque handles, plain C types.
 * Every call returns an ac_status; on failure ac_last_error() says what was
 * wrong and with which input.
 *
 * Threading
 * - A loaded ac_model is read-only: any number of threads may run calls on
 *   one handle at once (ac_asr_transcribe, ac_vad_run, ac_model_family, ...).
 *   Each running call borrows scratch memory from the handle and returns it
 *   when done, so the memory is reused by the next call and grows only with
 *   the number of calls at once. ac_model_free must not overlap any call on
 *   the handle (nor on a transcription that uses it as its VAD).
 * - Callbacks (ac_asr_options.on_segment) run on the calling thread, before
 *   the call returns, in order. The segment they get is valid only during
 *   the callback: copy what you keep.
 * - Results (ac_asr_result, ac_vad_result) belong to the caller from the
 *   moment the call returns until their _free; they do not depend on the
 *   model (it may be freed first) and may be read from any thread.
 * - Inputs and options are read during the call only.
 * - ac_last_error() is per thread. ac_set_threads, ac_set_log_level and
 *   ac_set_progress are process-wide: set them before starting threads.
 *   ac_set_local_threads applies to the calling thread.
 *
 * Versions of structs
 * Options, inputs and results begin with struct_size. Fill options with
 * their _default() function and inputs with ac_input_*(): these inline
 * functions record the size of the struct your program was compiled with, so
 * a library with more fields gives the missing ones their defaults. Results
 * are allocated by the library; their struct_size tells which fields it
 * filled. The element structs of result arrays (ac_asr_segment,
 * ac_vad_segment) do not change size: new per-segment data would come as new
 * arrays in the result. */
#ifndef AUDIOC_H
#define AUDIOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUDIOC_VERSION "0.1.0"

/* Marks what a shared libaudioc exports (the library builds with hidden
 * visibility). */
#if defined(__GNUC__)
#define AC_API __attribute__((visibility("default")))
#else
#define AC_API
#endif

typedef enum {
    AC_OK = 0,
    AC_ERR_ARG,         /* a bad argument or option value */
    AC_ERR_IO,          /* a file could not be opened, read or written */
    AC_ERR_FORMAT,      /* input bytes are not what they claim to be */
    AC_ERR_MODEL,       /* weights/config do not fit the model */
    AC_ERR_UNSUPPORTED, /* valid input that audio.c does not handle */
    AC_ERR_NOMEM,
    AC_ERR_CANCELLED,   /* a callback asked to stop */
} ac_status;

/* The last error message of the calling thread ("" when none). */
AC_API const char *ac_last_error(void);

/* Size of the process-wide thread pool (default: number of cores). */
AC_API ac_status ac_set_threads(int n);
/* Gives the calling thread its own pool of N threads for the work it runs
 * (a server's workers share the cores this way); 0 frees it and returns the
 * thread to the process-wide pool. Call with 0 before the thread exits. */
AC_API ac_status ac_set_local_threads(int n);
/* The size of the pool the calling thread uses. */
AC_API int ac_get_threads(void);

/* Log verbosity on stderr: 0 errors only, 1 warnings (default), 2 info. */
AC_API void ac_set_log_level(int level);

/* Progress of long work on stderr: -1 when stderr is a terminal (default),
 * 0 never, 1 always. */
AC_API void ac_set_progress(int mode);

/* Seconds on a monotonic clock, and the process's peak resident memory. */
AC_API double ac_now(void);
AC_API double ac_peak_rss_mb(void);

/* ---- Audio ------------------------------------------------------------ */

typedef struct ac_audio_info {
    int sample_rate;   /* of the source */
    int channels;      /* of the source */
    int64_t frames;    /* of the source; -1 when unknown */
    char format[32];   /* e.g. "WAV", "FLAC", "MP3" */
} ac_audio_info;

/* Decodes FILE, mixes it to mono and resamples it to RATE (0 = keep), and
 * writes the result to OUT, whose extension picks the format: .wav (32-bit
 * float), .flac, .ogg, .opus, .mp3. Streams in bounded memory. INFO (may be
 * NULL) receives what the source was. */
AC_API ac_status ac_audio_convert(const char *file, int rate, const char *out, ac_audio_info *info);

/* Audio for a model: a file, interleaved float PCM of any rate and channel
 * count, or an encoded file image in memory (e.g. an upload). Every model
 * decodes, mixes to mono and resamples it to the rate it runs at. The
 * memory it points to must stay valid during the call. */
typedef enum { AC_INPUT_FILE, AC_INPUT_PCM, AC_INPUT_MEMORY } ac_input_kind;

typedef struct ac_audio_input {
    size_t struct_size;
    ac_input_kind kind;
    const char *path;        /* FILE */
    const float *pcm;        /* PCM: FRAMES x CHANNELS samples at SAMPLE_RATE */
    int64_t frames;
    int channels, sample_rate;
    const void *data;        /* MEMORY: SIZE bytes of an audio file */
    size_t size;
    const char *name;        /* MEMORY: what messages call it (NULL: "upload") */
} ac_audio_input;

static inline ac_audio_input ac_input_file(const char *path)
{
    ac_audio_input in = {sizeof in, AC_INPUT_FILE, path, NULL, 0, 0, 0, NULL, 0, NULL};
    return in;
}

static inline ac_audio_input ac_input_pcm(const float *pcm, int64_t frames, int channels, int sample_rate)
{
    ac_audio_input in = {sizeof in, AC_INPUT_PCM, NULL, pcm, frames, channels, sample_rate, NULL, 0, NULL};
    return in;
}

static inline ac_audio_input ac_input_memory(const void *data, size_t size, const char *name)
{
    ac_audio_input in = {sizeof in, AC_INPUT_MEMORY, NULL, NULL, 0, 0, 0, data, size, name};
    return in;
}

/* ---- Models ----------------------------------------------------------- */

/* What a model does. */
typedef enum {
    AC_TASK_ANY = 0,   /* in ac_families: every task */
    AC_TASK_ASR,       /* speech to text: ac_asr_transcribe */
    AC_TASK_VAD,       /* speech segments: ac_vad_run */
} ac_task;

typedef struct ac_model ac_model;

/* "transcription", "vad" ("any" for AC_TASK_ANY). */
AC_API const char *ac_task_name(ac_task task);
/* Names of the families this build runs for TASK, NULL-terminated. */
AC_API const char *const *ac_families(ac_task task);

/* Which family and task PATH holds: a weights file (safetensors), a
 * single-file GGUF package, or a package folder. Reads only what it needs
 * to tell (file names, tensor names, embedded files), not the weights.
 * *FAMILY is a static string; FAMILY or TASK may be NULL. A missing path, or
 * a file or folder of no family this build runs, is an error that says so. */
AC_API ac_status ac_model_probe(const char *path, const char **family, ac_task *task);
/* Loads the model at PATH. FAMILY names its family (one of ac_families), or
 * NULL to probe for it. */
AC_API ac_status ac_model_load(const char *path, const char *family, ac_model **out);
AC_API const char *ac_model_family(const ac_model *model);
AC_API ac_task ac_model_task(const ac_model *model);
AC_API void ac_model_free(ac_model *model);

/* ---- Voice activity detection ---------------------------------------- */

typedef struct ac_vad_options {
    size_t struct_size;
    float threshold;                  /* speech when p >= threshold (0.5) */
    float neg_threshold;              /* silence when p < this; <0: threshold-0.15 */
    int min_speech_ms;                /* 250 */
    int min_silence_ms;               /* 100 */
    int speech_pad_ms;                /* 30 */
    double max_speech_s;              /* 1e9 (no split) */
    int min_silence_at_max_speech_ms; /* 98 */
    int use_max_poss_sil_at_max_speech; /* 1 */
    int keep_probs;                   /* fill ac_vad_result.probs */
} ac_vad_options;

typedef struct ac_vad_segment {
    int64_t start, end;   /* samples at the input rate, [start, end) */
    float confidence;
} ac_vad_segment;

typedef struct ac_vad_result {
    size_t struct_size;
    ac_vad_segment *segments;
    size_t n_segments;
    float *probs;         /* one per hop, when keep_probs */
    size_t n_probs;
    double hop_seconds;   /* time between probabilities */
    int sample_rate;      /* of the input: the unit of segment samples */
    int channels;         /* of the input */
    int64_t n_samples;    /* input length in samples at sample_rate */
} ac_vad_result;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_vad_options_default. */
AC_API void ac_vad_options_init(ac_vad_options *opt, size_t size);
static inline void ac_vad_options_default(ac_vad_options *opt) { ac_vad_options_init(opt, sizeof *opt); }

/* Speech segments of IN with a VAD model (task AC_TASK_VAD); OPT NULL means
 * the defaults. *OUT is the caller's, freed with ac_vad_result_free. */
AC_API ac_status ac_vad_run(ac_model *vad, const ac_audio_input *in, const ac_vad_options *opt,
                            ac_vad_result **out);
AC_API void ac_vad_result_free(ac_vad_result *res);

/* ---- Speech recognition --------------------------------------------- */

typedef struct ac_asr_segment ac_asr_segment;

typedef struct ac_asr_options {
    size_t struct_size;
    const char *language;   /* "da" */
    int punctuation;        /* punctuation and casing (1) */
    int beam_size;          /* 1: greedy (or sampling); > 1: beam search */
    float length_penalty;   /* beam search (1.0) */
    float temperature;      /* 0: greedy; > 0: sampling (beam size 1) */
    int top_k;              /* sampling: 0 = all (50) */
    float top_p;            /* sampling (1.0) */
    uint64_t seed;          /* sampling (0) */
    int max_new_tokens;     /* per chunk (256) */
    int min_new_tokens;     /* per chunk: no end before this many (0) */
    int prompt_prefix;      /* lead the prompt with the "▁" piece (1) */
    /* Recognize only the speech this VAD model finds (NULL: the whole
     * audio); vad_options NULL means the VAD defaults. */
    ac_model *vad;
    const ac_vad_options *vad_options;
    /* Called as each segment is finished, in order; a nonzero return stops
     * the transcription with AC_ERR_CANCELLED. */
    int (*on_segment)(const ac_asr_segment *segment, void *user);
    void *user;
} ac_asr_options;

struct ac_asr_segment {
    double start, end;      /* seconds in the input */
    char *text;
    int *tokens;
    int n_tokens;
    double avg_logprob;
};

typedef struct ac_asr_timings {
    double frontend, encoder, prefill, decode;  /* seconds */
    int decode_steps;
} ac_asr_timings;

typedef struct ac_asr_result {
    size_t struct_size;
    char *text;             /* the segments' texts joined */
    ac_asr_segment *segments;   /* one per audio chunk (or speech segment) */
    size_t n_segments;
    double duration;        /* seconds of audio */
    ac_asr_timings timings;
} ac_asr_result;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_asr_options_default. */
AC_API void ac_asr_options_init(ac_asr_options *opt, size_t size);
static inline void ac_asr_options_default(ac_asr_options *opt) { ac_asr_options_init(opt, sizeof *opt); }

/* Transcribes IN with a speech recognition model (task AC_TASK_ASR). Long
 * audio is cut into chunks as the model's family does (bounded memory).
 * OPT NULL means the defaults. *OUT is the caller's, freed with
 * ac_asr_result_free. */
AC_API ac_status ac_asr_transcribe(ac_model *asr, const ac_audio_input *in, const ac_asr_options *opt,
                                   ac_asr_result **out);
AC_API void ac_asr_result_free(ac_asr_result *res);

/* ---- Text tokenizers ------------------------------------------------- */

/* A byte-level BPE tokenizer (Qwen2's, with Hugging Face tokenizers'
 * behaviour). Read-only once loaded: any number of threads may use it. */
typedef struct ac_tokenizer ac_tokenizer;

/* The tokenizer of PATH: a tokenizer.json file, a folder with tokenizer.json
 * or vocab.json + merges.txt (+ tokenizer_config.json, added_tokens.json),
 * or a Vevo2 package (its contentstyle_modeling/posttrained folder). */
AC_API ac_status ac_tokenizer_load(const char *path, ac_tokenizer **out);
AC_API void ac_tokenizer_free(ac_tokenizer *tok);
/* One more than the largest token id. */
AC_API int ac_tokenizer_size(const ac_tokenizer *tok);
/* The ids of TEXT (LEN bytes of UTF-8) in *IDS, *N of them (free *IDS with
 * ac_free). Added tokens in the text ("<|im_start|>") become their ids. */
AC_API ac_status ac_tokenize(const ac_tokenizer *tok, const char *text, size_t len, int **ids, size_t *n);
/* The text of IDS in *TEXT (NUL-terminated UTF-8, free with ac_free), its
 * length in *LEN (may be NULL). Special tokens are kept when KEEP_SPECIAL. */
AC_API ac_status ac_detokenize(const ac_tokenizer *tok, const int *ids, size_t n, int keep_special, char **text,
                               size_t *len);
/* Frees a buffer the library returned (ac_tokenize, ac_detokenize). */
AC_API void ac_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
