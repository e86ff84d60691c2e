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
} ac_status;

/* The last error message of the calling thread ("" when none). */
const char *ac_last_error(void);

/* Size of the process-wide thread pool (default: number of cores). */
ac_status ac_set_threads(int n);
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
void ac_vad_result_free(ac_vad_result *res);
void ac_vad_free(ac_vad *vad);

/* Names of the VAD families this build runs, NULL-terminated. */
const char *const *ac_vad_families(void);

#ifdef __cplusplus
}
#endif
#endif
