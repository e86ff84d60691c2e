/* audio.c public API: opaque handles, plain C types.
 * Every call returns an ac_status; on failure ac_last_error() says what was
 * wrong and with which input. */
#ifndef AUDIOC_H
#define AUDIOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUDIOC_VERSION "0.1.0"

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
const char *ac_last_error(void);

/* Size of the process-wide thread pool (default: number of cores). */
ac_status ac_set_threads(int n);
/* Gives the calling thread its own pool of N threads for the work it runs
 * (a server's workers share the cores this way); 0 frees it and returns the
 * thread to the process-wide pool. Call with 0 before the thread exits. */
ac_status ac_set_local_threads(int n);
/* The size of the pool the calling thread uses. */
int ac_get_threads(void);

/* Log verbosity on stderr: 0 errors only, 1 warnings (default), 2 info. */
void ac_set_log_level(int level);

/* Progress of long work on stderr: -1 when stderr is a terminal (default),
 * 0 never, 1 always. */
void ac_set_progress(int mode);

/* Seconds on a monotonic clock, and the process's peak resident memory. */
double ac_now(void);
double ac_peak_rss_mb(void);

/* ---- Audio ------------------------------------------------------------ */

typedef struct ac_audio_info {
    int sample_rate;   /* of the source */
    int channels;      /* of the source */
    int64_t frames;    /* of the source; -1 when unknown */
    char format[32];   /* e.g. "WAV", "FLAC", "MP3" */
} ac_audio_info;

/* Decodes FILE, mixes it to mono and resamples it to RATE (0 = keep), and
 * writes the result to OUT, whose extension picks the format: .wav (32-bit
 * float), .flac, .ogg, .opus, .mp3. Streams in bounded memory. */
ac_status ac_audio_convert(const char *file, int rate, const char *out,
                           ac_audio_info *info);

/* ---- Voice activity detection ---------------------------------------- */

typedef struct ac_vad ac_vad;

typedef struct ac_vad_options {
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
    ac_vad_segment *segments;
    size_t n_segments;
    float *probs;         /* one per hop, when keep_probs */
    size_t n_probs;
    double hop_seconds;   /* time between probabilities */
    int sample_rate;      /* of the input: the unit of segment samples */
    int channels;         /* of the input */
    int64_t n_samples;    /* input length in samples at sample_rate */
} ac_vad_result;

void ac_vad_options_default(ac_vad_options *opt);

/* PATH is a weights file or a model folder. FAMILY is "silero_vad",
 * "marblenet_vad", or NULL to detect it from the weights. */
ac_status ac_vad_load(const char *path, const char *family, ac_vad **out);
const char *ac_vad_family(const ac_vad *vad);
ac_status ac_vad_run_file(ac_vad *vad, const char *file,
                          const ac_vad_options *opt, ac_vad_result *out);
/* Interleaved float PCM of any rate and channel count. */
ac_status ac_vad_run_pcm(ac_vad *vad, const float *pcm, int64_t frames,
                         int channels, int rate, const ac_vad_options *opt,
                         ac_vad_result *out);
/* An encoded audio file image in memory (e.g. an upload). */
ac_status ac_vad_run_memory(ac_vad *vad, const void *data, size_t size,
                            const ac_vad_options *opt, ac_vad_result *out);
void ac_vad_result_free(ac_vad_result *res);
void ac_vad_free(ac_vad *vad);

/* Names of the VAD families this build runs, NULL-terminated. */
const char *const *ac_vad_families(void);

/* ---- Speech recognition --------------------------------------------- */

typedef struct ac_asr ac_asr;
typedef struct ac_asr_segment ac_asr_segment;

typedef struct ac_asr_options {
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
    /* Recognize only the speech this VAD finds (NULL: the whole audio);
     * vad_options NULL means the VAD defaults. */
    ac_vad *vad;
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
    char *text;             /* the chunks' texts joined */
    ac_asr_segment *segments;   /* one per audio chunk (or speech segment) */
    size_t n_segments;
    double duration;        /* seconds of audio */
    ac_asr_timings timings;
} ac_asr_result;

void ac_asr_options_default(ac_asr_options *opt);
/* PATH is a model package folder (config.json, tokenizer.model,
 * model.safetensors) or a single-file GGUF package. The loaded model is
 * read-only: several threads may transcribe with one handle at once (each
 * call has its own scratch memory). */
ac_status ac_asr_load(const char *path, ac_asr **out);
const char *ac_asr_family(const ac_asr *asr);
ac_status ac_asr_transcribe_file(ac_asr *asr, const char *file, const ac_asr_options *opt,
                                 ac_asr_result *out);
ac_status ac_asr_transcribe_pcm(ac_asr *asr, const float *pcm, int64_t frames, int channels,
                                int rate, const ac_asr_options *opt, ac_asr_result *out);
/* An encoded audio file image in memory (e.g. an upload). */
ac_status ac_asr_transcribe_memory(ac_asr *asr, const void *data, size_t size,
                                   const ac_asr_options *opt, ac_asr_result *out);
void ac_asr_result_free(ac_asr_result *res);
void ac_asr_free(ac_asr *asr);

#ifdef __cplusplus
}
#endif
#endif
