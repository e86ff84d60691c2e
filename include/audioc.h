/* audio.c public API: opaque handles, plain C types.
 * Every call returns an ac_status; on failure ac_last_error() says what was
 * wrong and with which input.
 *
 * Threading
 * - A loaded ac_model is read-only: any number of threads may run calls on
 *   one handle at once (ac_asr_transcribe, ac_vad_run, ac_model_family, ...).
 *   A transcription borrows scratch memory from the handle and returns it
 *   when done, so the memory is reused by the next call and grows only with
 *   the number of calls at once; a voice call (ac_voice_convert,
 *   ac_voice_speak) and a VAD run make their scratch for the call and free
 *   it when it returns. ac_model_free must not overlap any call on
 *   the handle (nor on a transcription that uses it as its VAD).
 * - Callbacks (ac_asr_options.on_segment) run on the calling thread, before
 *   the call returns, in order. The segment they get is valid only during
 *   the callback: copy what you keep.
 * - Results (ac_asr_result, ac_vad_result) belong to the caller from the
 *   moment the call returns until their _free; they do not depend on the
 *   model (it may be freed first) and may be read from any thread.
 * - Inputs and options are read during the call only.
 * - ac_last_error() is per thread (thread-local storage), and every call
 *   that returns an ac_status clears it first: after a success it is empty,
 *   after a failure it is that failure's message. A binding that runs the
 *   call on a worker thread (a Node N-API async worker, a thread pool) must
 *   read ac_last_error() on that worker, right after the failed call and
 *   before the worker makes another, and carry the copy back with the
 *   status; read on any other thread it is that thread's message.
 * - ac_set_threads, ac_set_log_level, ac_set_log_callback and
 *   ac_set_progress are process-wide: set them before starting threads.
 *   ac_set_local_threads applies to the calling thread.
 * - Loading and using the library leaves the host process as it was: no
 *   code runs at load, and OpenBLAS's thread count (process-wide) is set to
 *   one only while the library's own products run, then restored.
 *
 * Versions of structs
 * Options, inputs and results begin with struct_size. Fill options with
 * their _default() function and inputs with ac_input_*(): these inline
 * functions record the size of the struct your program was compiled with, so
 * a library with more fields gives the missing ones their defaults. They
 * call exported functions (ac_*_options_init, ac_input_*_init) that take
 * that size, which a binding without a C compiler (ctypes, cffi's ABI mode,
 * koffi) calls with the size of its own copy of the struct. Results are
 * allocated by the library; their struct_size tells which fields it
 * filled. The element structs of result arrays (ac_asr_segment,
 * ac_vad_segment) do not change size: new per-segment data would come as new
 * arrays in the result. Timings are reached through a pointer from the
 * result (ac_asr_result.timings, ac_voice_result.timings) and begin with
 * their own struct_size, so results and timings grow apart. */
#ifndef AUDIOC_H
#define AUDIOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUDIOC_VERSION "0.1.0"
#define AUDIOC_VERSION_MAJOR 0
#define AUDIOC_VERSION_MINOR 1
#define AUDIOC_VERSION_PATCH 0

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

/* The last error message of the calling thread ("" when none): see
 * Threading above for a binding that calls on worker threads. */
AC_API const char *ac_last_error(void);
/* The name of STATUS: "ok", "arg", "io", "format", "model", "unsupported",
 * "nomem", "cancelled" ("unknown" for another value). */
AC_API const char *ac_status_name(ac_status status);

/* The version of the library loaded (AUDIOC_VERSION is the header's): its
 * string, and its numbers in *MAJOR, *MINOR, *PATCH (each may be NULL). */
AC_API const char *ac_version(int *major, int *minor, int *patch);

/* Size of the process-wide thread pool (default: the physical cores the
 * process may run on). */
AC_API ac_status ac_set_threads(int n);
/* Gives the calling thread its own pool of N threads for the work it runs
 * (a server's workers share the cores this way); 0 frees it and returns the
 * thread to the process-wide pool. Call with 0 before the thread exits. */
AC_API ac_status ac_set_local_threads(int n);
/* The size of the pool the calling thread uses. */
AC_API int ac_get_threads(void);

/* Log verbosity: 0 errors only, 1 warnings (default), 2 info. */
AC_API void ac_set_log_level(int level);

enum { AC_LOG_ERROR = 0, AC_LOG_WARN = 1, AC_LOG_INFO = 2, AC_LOG_DEBUG = 3 };
/* Where the library's log messages go: FN gets each message the log level
 * lets through, its level (AC_LOG_*) and USER; the message has no newline
 * and is valid during the call only. FN is called on whichever thread logs
 * (a caller's, or a thread of the pool) and possibly from several at once,
 * and must not call the library. FN NULL restores the default: stderr,
 * as "audioc: warning: MESSAGE". */
typedef void (*ac_log_fn)(int level, const char *message, void *user);
AC_API void ac_set_log_callback(ac_log_fn fn, void *user);

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

/* Writes FRAMES interleaved frames of PCM to PATH, whose extension picks
 * the format as in ac_audio_convert; a .wav holds 16-bit PCM when PCM16,
 * else 32-bit float. */
AC_API ac_status ac_audio_save(const char *path, const float *pcm, int64_t frames, int channels, int rate,
                               int pcm16);

/* Encodes FRAMES interleaved frames of PCM as a file image in memory:
 * FORMAT is an extension as in ac_audio_save ("wav", "flac", "ogg", "opus",
 * "mp3") or "pcm" (headerless 16-bit little-endian). *DATA (free with
 * ac_free) holds *SIZE bytes. */
AC_API ac_status ac_audio_encode(const char *format, const float *pcm, int64_t frames, int channels, int rate,
                                 int pcm16, void **data, size_t *size);

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

/* Fill the first SIZE bytes of IN (SIZE: the struct_size to record) as a
 * file, PCM or a file image in memory; use ac_input_file, ac_input_pcm and
 * ac_input_memory. */
AC_API void ac_input_file_init(ac_audio_input *in, size_t size, const char *path);
AC_API void ac_input_pcm_init(ac_audio_input *in, size_t size, const float *pcm, int64_t frames, int channels,
                              int sample_rate);
AC_API void ac_input_memory_init(ac_audio_input *in, size_t size, const void *data, size_t data_size,
                                 const char *name);

static inline ac_audio_input ac_input_file(const char *path)
{
    ac_audio_input in;
    ac_input_file_init(&in, sizeof in, path);
    return in;
}

static inline ac_audio_input ac_input_pcm(const float *pcm, int64_t frames, int channels, int sample_rate)
{
    ac_audio_input in;
    ac_input_pcm_init(&in, sizeof in, pcm, frames, channels, sample_rate);
    return in;
}

static inline ac_audio_input ac_input_memory(const void *data, size_t size, const char *name)
{
    ac_audio_input in;
    ac_input_memory_init(&in, sizeof in, data, size, name);
    return in;
}

/* ac_audio_convert for any audio input (a file, PCM, or a file image in
 * memory such as standard input). OUT is created only once its format is
 * known to hold the rate, and removed when the conversion fails. */
AC_API ac_status ac_audio_convert_input(const ac_audio_input *in, int rate, const char *out, ac_audio_info *info);

/* The whole of IN decoded, mixed to mono and resampled to RATE (0 = keep)
 * into *PCM (*FRAMES samples, free with ac_free); INFO (may be NULL)
 * receives what the source was. */
AC_API ac_status ac_audio_decode(const ac_audio_input *in, int rate, float **pcm, int64_t *frames,
                                 ac_audio_info *info);

/* ---- Models ----------------------------------------------------------- */

/* What a model does. */
typedef enum {
    AC_TASK_ANY = 0,   /* in ac_families: every task */
    AC_TASK_ASR,       /* speech to text: ac_asr_transcribe */
    AC_TASK_VAD,       /* speech segments: ac_vad_run */
    AC_TASK_VOICE,     /* speech and singing in a given voice: ac_voice_convert, ac_voice_speak */
} ac_task;

typedef struct ac_model ac_model;

/* "transcription", "vad", "voice" ("any" for AC_TASK_ANY). */
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

/* The type a model's weight matrices are held and multiplied in. STORED
 * keeps each tensor in the type its file stores it in; the others convert,
 * when the model loads, the matrices its family's rule allows (the product
 * matrices of its linear layers; norms, biases, embeddings, codebooks and
 * the other tensors its docs/models page names keep their precision).
 * Q8_0 converts only matrices whose rows are a multiple of 32 values; the
 * others stay as stored. */
typedef enum {
    AC_WEIGHTS_STORED = 0,
    AC_WEIGHTS_F32,
    AC_WEIGHTS_F16,
    AC_WEIGHTS_BF16,
    AC_WEIGHTS_Q8_0,
} ac_weight_type;

/* "stored", "f32", "f16", "bf16", "q8_0" ("?" for another value). */
AC_API const char *ac_weight_type_name(ac_weight_type t);
/* The type of NAME (the names above, case-insensitive); an unknown name is
 * an error that lists them. */
AC_API ac_status ac_weight_type_parse(const char *name, ac_weight_type *out);

/* What a model needs besides its package. */
typedef struct ac_load_options {
    size_t struct_size;
    /* Vevo2: the Whisper-medium encoder it runs on (OpenAI's medium.pt, a
     * Hugging Face openai/whisper-medium folder, or model.safetensors with
     * OpenAI names + config.json). NULL: a whisper-medium folder or
     * medium.pt inside the package, else a whisper-medium folder beside it. */
    const char *whisper;
    /* The type the weight matrices are held in (AC_WEIGHTS_STORED). */
    ac_weight_type weights;
} ac_load_options;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_load_options_default. */
AC_API void ac_load_options_init(ac_load_options *opt, size_t size);
static inline void ac_load_options_default(ac_load_options *opt) { ac_load_options_init(opt, sizeof *opt); }
/* ac_model_load with options (OPT NULL: the defaults). */
AC_API ac_status ac_model_load_with(const char *path, const char *family, const ac_load_options *opt,
                                    ac_model **out);
AC_API const char *ac_model_family(const ac_model *model);
AC_API ac_task ac_model_task(const ac_model *model);
AC_API void ac_model_free(ac_model *model);

/* ---- Writing a model as one GGUF file ---------------------------------- */

typedef struct ac_quantize_options {
    size_t struct_size;
    /* Vevo2: the Whisper-medium encoder, as ac_load_options.whisper. */
    const char *whisper;
    /* Called after each tensor is written, on the calling thread; a
     * nonzero return stops with AC_ERR_CANCELLED (no output is left). */
    int (*on_progress)(int done, int total, void *user);
    void *user;
} ac_quantize_options;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_quantize_options_default. */
AC_API void ac_quantize_options_init(ac_quantize_options *opt, size_t size);
static inline void ac_quantize_options_default(ac_quantize_options *opt)
{
    ac_quantize_options_init(opt, sizeof *opt);
}

/* Writes the model at IN (any path ac_model_load takes: a package folder,
 * a weights file, a .gguf, "hf:...") as one GGUF file OUT, in the layout
 * the ggml audio runtime publishes: its tensors (a many-part package's
 * under each part's namespace), its configs and tokenizers embedded, and
 * its package description where the family has one. TYPE ("f16", "bf16",
 * "q8_0", "q4_k", "q6_k") is what the weight matrices become, by the
 * family's rule as a load with ac_load_options.weights applies it (the
 * K-quants take the matrices q8_0 would, where rows are whole blocks of
 * 256, else q8_0); every other tensor keeps its stored type. A package
 * that already holds Q8_0 or K-quant tensors is refused. OUT is written
 * under a temporary name in its folder and renamed when complete. OPT
 * NULL: the defaults; progress shows on stderr as ac_set_progress says. */
AC_API ac_status ac_model_quantize(const char *in, const char *out, const char *type,
                                   const ac_quantize_options *opt);

/* ---- Models from the Hugging Face Hub --------------------------------- */

/* Wherever a model path is taken (ac_model_probe, ac_model_load,
 * ac_model_load_with), "hf:REPO[@REVISION][/SUBFOLDER|/FILE]" names a model on the
 * Hub, REPO being ORG/NAME and REVISION a branch, tag or commit (default
 * main): the files its family needs (told from the repository's file list;
 * a FILE of the repository: that file alone, as a .gguf package) are downloaded into the Hugging Face cache, or found there, and the model
 * is loaded from the cache. A Vevo2 package brings the Whisper-medium
 * encoder it runs on (openai/whisper-medium) unless ac_load_options.whisper
 * names one. The cache is huggingface_hub's, shared with Python tools:
 * $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. The
 * Hub is $HF_ENDPOINT (default https://huggingface.co); $HF_TOKEN, or the
 * token file huggingface-cli login writes, is sent for gated and private
 * repositories. With $HF_HUB_OFFLINE=1 or ac_hub_set_offline(1) only the
 * cache is read, and a missing file is an error that names it. */
typedef struct ac_hub_options {
    size_t struct_size;
    /* NULL-terminated patterns (fnmatch, as huggingface_hub's
     * allow_patterns: '*' also matches '/'): fetch the repository's files
     * that match one, instead of the family's. NULL: the family's. */
    const char *const *include;
    int offline;   /* 1: only the cache, as ac_hub_set_offline */
} ac_hub_options;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_hub_options_default. */
AC_API void ac_hub_options_init(ac_hub_options *opt, size_t size);
static inline void ac_hub_options_default(ac_hub_options *opt) { ac_hub_options_init(opt, sizeof *opt); }

/* Fetches SPEC, "REPO[@REVISION][/SUBFOLDER|/FILE]" (an "hf:" before it is
 * allowed), into the cache as "hf:" does; *PATH (free with ac_free) is the
 * local folder of the model. OPT NULL: the defaults. Progress of each file
 * shows on stderr as ac_set_progress says. */
AC_API ac_status ac_hub_pull(const char *spec, const ac_hub_options *opt, char **path);

/* Process-wide: 1 never uses the network for the Hub, only the cache (as
 * HF_HUB_OFFLINE=1). */
AC_API void ac_hub_set_offline(int offline);

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
    /* Called after each block of audio is read: DONE seconds of TOTAL (0
     * when the length is unknown); a nonzero return stops the run with
     * AC_ERR_CANCELLED. On the calling thread. May be NULL. */
    int (*on_progress)(double done, double total, void *user);
    void *user;
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
    ac_vad_segment *speech; /* segments[i] before speech_pad_ms: where the model
                               heard speech begin and end (n_segments of them) */
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

#define AC_MAX_BEAM_SIZE 64

typedef struct ac_asr_options {
    size_t struct_size;
    const char *language;   /* "da" */
    int punctuation;        /* punctuation and casing (1) */
    int beam_size;          /* 1: greedy (or sampling); > 1: beam search, at most AC_MAX_BEAM_SIZE;
                               0: the model's default (1; hviske_v6: 2) (0) */
    float length_penalty;   /* beam search (1.0) */
    float temperature;      /* 0: greedy; > 0: sampling (beam size 1) */
    int top_k;              /* sampling: 0 = all (50) */
    float top_p;            /* sampling (1.0) */
    uint64_t seed;          /* sampling (0) */
    int max_new_tokens;     /* per chunk (256) */
    int min_new_tokens;     /* per chunk: no end before this many (0) */
    int prompt_prefix;      /* lead the prompt with the "▁" piece (1) */
    /* Recognize only the speech this VAD model finds (NULL: the whole
     * audio); vad_options NULL means ac_asr_vad_options_default. */
    ac_model *vad;
    const ac_vad_options *vad_options;
    /* Called as each segment is finished, in order; a nonzero return stops
     * the transcription with AC_ERR_CANCELLED. */
    int (*on_segment)(const ac_asr_segment *segment, void *user);
    void *user;
    /* Per-word times (ac_asr_result.words) from the decoder's
     * cross-attention, aligned by dynamic time warping (0). */
    int word_timestamps;
} ac_asr_options;

struct ac_asr_segment {
    double start, end;      /* seconds in the input */
    char *text;
    int *tokens;
    int n_tokens;
    double avg_logprob;
};

typedef struct ac_asr_word {
    double start, end;      /* seconds in the input */
    char *text;             /* with its punctuation, without spaces */
    size_t segment;         /* index of its segment */
} ac_asr_word;

typedef struct ac_asr_timings {
    size_t struct_size;
    double frontend, encoder, prefill, decode;  /* seconds */
    int decode_steps;
} ac_asr_timings;

typedef struct ac_asr_result {
    size_t struct_size;
    char *text;             /* the segments' texts joined */
    ac_asr_segment *segments;   /* one per audio chunk (or speech segment) */
    size_t n_segments;
    double duration;        /* seconds of audio */
    const ac_asr_timings *timings;  /* owned by the result */
    ac_asr_word *words;     /* with word_timestamps, in order */
    size_t n_words;
} ac_asr_result;

/* The VAD settings a transcription uses when it is given none: the VAD
 * defaults with 400 ms padding, 500 ms minimum silence and speech split
 * before 30 s. Use ac_asr_vad_options_default. */
AC_API void ac_asr_vad_options_init(ac_vad_options *opt, size_t size);
static inline void ac_asr_vad_options_default(ac_vad_options *opt) { ac_asr_vad_options_init(opt, sizeof *opt); }

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
/* AC_OK when ASR can transcribe with OPT (NULL: the defaults), else
 * AC_ERR_ARG with a message naming the option: a language the model does
 * not support lists those it does. Reads no audio: a front end checks its
 * options once before the first file. ac_asr_transcribe checks the same. */
AC_API ac_status ac_asr_check_options(const ac_model *asr, const ac_asr_options *opt);

/* ---- Voice: conversion, speech and singing from text --------------- */

/* Pitch shift of the source's (or the prosody reference's) melody, its
 * chromagram, on routes that shift it. */
typedef enum {
    AC_PITCH_ESTIMATE = 0,  /* the semitones between the clip's median F0 and the target voice's (upstream's) */
    AC_PITCH_FIXED,         /* pitch_shift (and style_pitch_shift) semitones as given */
    AC_PITCH_NONE,          /* no shift, whatever the route does by default */
} ac_pitch_mode;

/* A request to a voice model (Vevo2). The route names what it does:
 *   zero_shot_tts, text_to_singing, svs      TEXT in the target voice
 *   style_preserved_vc, style_preserved_svc  the source in the target voice, its style kept
 *   style_converted_vc, style_converted_svc  the source's words (TEXT) and delivery, the style of style_ref
 *   editing                                  the source said as TEXT instead of style_text
 *   singing_style_conversion                 a song (TEXT its lyrics) in the style of style_ref
 *   humming_to_singing, instrument_to_singing  the melody of the source (or prosody_ref) sung as TEXT
 * A reference not given falls back as Vevo2's routes define it (the
 * source, or the target voice); one the route cannot do without is an
 * error that names it. */
typedef struct ac_voice_options {
    size_t struct_size;
    /* The voice to speak or sing in: a few seconds of it. */
    const ac_audio_input *target_voice;
    ac_pitch_mode pitch_mode;         /* AC_PITCH_ESTIMATE */
    int pitch_shift;                  /* AC_PITCH_FIXED: semitones in [-24, 24] (0) */
    int steps;                        /* flow-matching steps (32) */
    uint64_t seed;                    /* of the AR draws and the initial noise (0); text chunk i uses seed + i */
    /* The initial noise instead of the seeded one: [frames][mel] floats,
     * exactly as many as the request needs (an error says how many). */
    const float *noise;
    size_t n_noise;
    /* Called between stages, after each AR token (STAGE "ar") and each
     * flow-matching step (STAGE "fm": DONE of TOTAL steps); a nonzero
     * return stops the call with AC_ERR_CANCELLED. On the calling thread. */
    int (*on_progress)(const char *stage, int done, int total, void *user);
    void *user;
    const char *route;                /* NULL: style_preserved_vc (ac_voice_convert), zero_shot_tts (ac_voice_speak) */
    const char *text;                 /* what to say or sing (every route but style_preserved_*) */
    const ac_audio_input *style_ref;  /* whose way of speaking or singing */
    /* What the clips say: each is used when its clip serves as the style
     * reference (unless style_ref is given, the target voice does for
     * speech from text when its transcript is given, the source for
     * editing). */
    const char *style_text, *target_voice_text, *source_text;
    const ac_audio_input *prosody_ref;  /* the melody or delivery to follow (NULL: the source) */
    double target_duration;           /* seconds the prosody is stretched to (0: its own length) */
    double reference_duration;        /* seconds of the target voice used (0: all of it) */
    int use_prosody_code;             /* the prosody reference's tokens in the prompt: -1 the route's, 0, 1 */
    int use_pitch_shift;              /* -1 the route's, 0, 1 (AC_PITCH_NONE: 0) */
    int style_pitch_shift;            /* AC_PITCH_FIXED: semitones for the style reference (0) */
    /* The AR model's sampling (HF generate); negative: upstream's values */
    float temperature;                /* 1.0; 0 is greedy */
    int top_k;                        /* 25; 1 is greedy */
    float top_p;                      /* 0.8 */
    float repetition_penalty;         /* the package's generation_config.json */
    int min_new_tokens;               /* 15 */
    int max_new_tokens;               /* 500 (40 s) per text chunk */
    /* Each text chunk's audio as soon as it is made (long text is spoken
     * in chunks of about 20 s); a nonzero return cancels. May be NULL. */
    int (*on_audio)(const float *samples, int64_t n, int chunk, int n_chunks, void *user);
    /* The pace: the audio time-stretched to 1/speed of its length, pitch
     * kept (librosa's phase-vocoder time_stretch), in [0.25, 4] (1). */
    double speed;
    /* Bounded work: a request whose audio could be longer than this many
     * seconds (every text chunk at its token limit, at this speed) is
     * refused before any work (0: no limit). Each text chunk's tokens are
     * also held to what its text can need (about half a second a
     * character), and min_new_tokens above that is refused. */
    double max_seconds;
} ac_voice_options;

/* The limits the tools hold a voice request to unless told there are
 * none: flow-matching steps beyond which more buy nothing (upstream uses
 * 32), and the max_seconds of audio one request may make. */
#define AC_VOICE_MAX_STEPS 100
#define AC_VOICE_MAX_SECONDS 600

/* Seconds per stage, every clip together where a stage sees several. */
typedef struct ac_voice_timings {
    size_t struct_size;
    double decode;        /* reading and resampling the inputs to 24 kHz */
    double whisper;       /* 16 kHz resampling, log-mel and the Whisper encoder */
    double pitch;         /* F0 estimate and the pitch shift */
    double chroma, tokenizer, timbre_mel;
    double fm;            /* the whole flow matching (fm / fm_steps per step) */
    double vocoder;
    int fm_steps;
    double ar_prefill, ar_decode;   /* the AR model's prompts and its tokens */
    int ar_tokens;
    int chunks;           /* text chunks spoken */
    double parts;         /* the model's parts read (and converted to --weights) on its first request */
} ac_voice_timings;

typedef struct ac_voice_result {
    size_t struct_size;
    float *samples;       /* mono */
    int64_t n_samples;
    int sample_rate;      /* 24000 */
    int pitch_shift;      /* the semitones applied to the source or prosody reference */
    const ac_voice_timings *timings;  /* owned by the result */
    int style_pitch_shift;  /* ... and to the style reference */
} ac_voice_result;

/* Fills the first SIZE bytes of OPT with the defaults; use ac_voice_options_default. */
AC_API void ac_voice_options_init(ac_voice_options *opt, size_t size);
static inline void ac_voice_options_default(ac_voice_options *opt) { ac_voice_options_init(opt, sizeof *opt); }

/* The route of OPT on SOURCE (speech, singing, humming; NULL for the
 * routes from text): by default SOURCE said or sung again in the target
 * voice, its words, melody and style kept (Vevo2's style-preserved voice
 * and singing conversion). *OUT is the caller's, freed with
 * ac_voice_result_free. */
AC_API ac_status ac_voice_convert(ac_model *model, const ac_audio_input *source, const ac_voice_options *opt,
                                  ac_voice_result **out);
/* TEXT said (or sung) in the target voice of OPT: ac_voice_convert with
 * no source, OPT's route (zero_shot_tts when NULL) and TEXT. */
AC_API ac_status ac_voice_speak(ac_model *model, const char *text, const ac_voice_options *opt,
                                ac_voice_result **out);
AC_API void ac_voice_result_free(ac_voice_result *res);
/* The routes MODEL runs, NULL-terminated (NULL for a model of another task). */
AC_API const char *const *ac_voice_routes(const ac_model *model);
/* Whether CLIP would serve MODEL as a target voice, checked as a request
 * would check it (its length, not silent), and recorded at no less than
 * AC_VOICE_MIN_RATE Hz (below that the timbre is lost): AC_OK, or an
 * error saying why. For a server to refuse a reference at start-up that
 * every request would fail on. */
#define AC_VOICE_MIN_RATE 16000
AC_API ac_status ac_voice_check_reference(ac_model *model, const ac_audio_input *clip);

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
/* Frees a buffer the library returned (ac_tokenize, ac_detokenize,
 * ac_audio_encode, ac_audio_decode). */
AC_API void ac_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
