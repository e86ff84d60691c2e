/* Vevo2 (Amphion): a published package and the routes that run on it
 * (spec vevo2.md §3). Loading reads the configs and checks that the parts
 * fit each other; the weights of a part are mapped the first time a route
 * needs it (a conversion maps no AR weights), under a lock, so one loaded
 * model serves any number of calls at once.
 *
 * Path S (style-preserved voice and singing conversion): the source's
 * Whisper features and chromagram (pitch-shifted towards the target) and
 * the target voice's become content-style tokens; the flow matching
 * continues the target's mel under the tokens of both; the vocoder makes
 * the 24 kHz audio. Path A (speech and singing from text, style
 * conversion, editing): the AR model continues a chat prompt of the text,
 * the prosody and style references' tokens into content-style tokens,
 * which the flow matching and vocoder turn into audio in the target voice. */
#ifndef AC_MODELS_VEVO2_H
#define AC_MODELS_VEVO2_H

#include <pthread.h>
#include <stdint.h>

#include "audio/resample_sinc.h"
#include "base/trace.h"
#include "models/vevo2/coco.h"
#include "models/vevo2/fm.h"
#include "models/vevo2/package.h"
#include "models/vevo2/routes.h"
#include "models/qwen2/qwen2.h"
#include "nn/sampler.h"
#include "text/bpe.h"
#include "models/vevo2/timbre_mel.h"
#include "models/vevo2/vocoder.h"
#include "models/whisper/whisper.h"

#define VEVO2_WHISPER_RATE 16000

typedef struct vevo2_model {
    vevo2_paths paths;
    vevo2_mel_config mel;          /* the FM config's preprocess: rate, hop, n_fft, mel */
    vevo2_fm_config fm_cfg;
    vevo2_coco_config content_cfg; /* the FM config's model.coco, as upstream builds it */
    vevo2_vocoder_config vocoder_cfg;

    ac_weight_type weights;        /* the type every part's matrices are held in (set before the first run) */
    pthread_mutex_t lock;          /* guards the parts below while they load (the vocoder last) */
    whisper_encoder *whisper;
    whisper_stats *stats;
    vevo2_coco *content;
    vevo2_fm *fm;
    vevo2_vocoder *vocoder;
    /* the AR routes' parts, loaded under the same lock (the AR model last) */
    vevo2_coco_config prosody_cfg;
    vevo2_coco *prosody;
    ac_bpe *text;
    int im_end;                    /* the id of <|im_end|> */
    qwen2_model *ar;
    vevo2_timbre_mel timbre;
    ac_sinc_resampler to_whisper;  /* 24 -> 16 kHz as torchaudio */
} vevo2_model;

/* The package DIR: its folder, or the single GGUF file the ggml runtime
 * publishes (package.h); WHISPER the encoder the user named (NULL: the
 * GGUF's own, else found in or beside the package when first needed). */
ac_status vevo2_load(const char *dir, const char *whisper, vevo2_model **out);
void vevo2_free(vevo2_model *m);

/* Maps the weights the conversion needs, once. */
ac_status vevo2_load_conversion(vevo2_model *m);
/* ... and those of the AR routes: the text tokenizer, the AR model and the
 * prosody tokenizer (amphion_config.json's model.coco_style), checked
 * against each other and the flow matching. */
ac_status vevo2_load_ar(vevo2_model *m);

typedef enum { VEVO2_PITCH_ESTIMATE, VEVO2_PITCH_FIXED } vevo2_pitch_mode;

typedef int (*vevo2_progress_fn)(void *user, const char *stage, int done, int total);
/* A nonzero return stops the request (AC_ERR_CANCELLED). */
typedef int (*vevo2_audio_fn)(void *user, const float *wav, int64_t n, int chunk, int n_chunks);

typedef struct vevo2_options {
    const vevo2_route *route;
    int use_prosody_code;          /* -1: the route's */
    int use_pitch_shift;           /* -1: the route's */
    vevo2_pitch_mode pitch_mode;   /* with the pitch shift on */
    int pitch_shift;               /* FIXED: semitones for the source or the prosody reference */
    int style_pitch_shift;         /* FIXED: for the style reference */
    double target_duration;        /* seconds the prosody is stretched to (0: its own) */
    double reference_duration;     /* seconds of the timbre clip used (0: all) */
    ac_sampler_options sampler;    /* the AR's processors; its eos is <|im_end|> */
    int max_new_tokens;            /* per text chunk, within what its text can need (speak.c) */
    double max_seconds;            /* a request whose audio could be longer is refused before any work (0: no limit) */
    int chunk_units;               /* text longer than this many words is spoken in pieces */
    int steps;                     /* flow matching */
    double speed;                  /* the audio time-stretched to 1/speed of its length (1: as made) */
    uint64_t seed;                 /* of the AR draws and the FM noise (chunk i: seed + i) */
    const float *noise;            /* [F][mel] or NULL (one text chunk only) */
    size_t n_noise;
    ac_uniform_fn uniform;         /* the AR's draws instead of the seeded ones (tests) */
    void *uniform_ctx;
    vevo2_progress_fn progress;    /* each may be NULL */
    void *progress_user;
    vevo2_audio_fn on_audio;       /* each chunk's audio as it is made */
    void *audio_user;
    /* Intermediate results by name, for tests (layer -1): "prosody_ids",
     * "style_ids", "timbre_ids", "source_ids" (int32), "prompt" (text),
     * "prompt_ids", "generated_ids", "ids" (int32), "logprobs" (float32:
     * each generated id's log-softmax under the raw logits), "fm_mel"
     * (float32 [frames][mels]: the flow matching's output), per text chunk. */
    ac_trace trace;
} vevo2_options;

/* The defaults of route R: upstream's AR sampling (top-k 25, top-p 0.8,
 * temperature 1, at least 15 and at most 500 tokens, the package's
 * repetition penalty), 32 FM steps, pitch estimated where the route shifts. */
vevo2_options vevo2_defaults(const vevo2_route *r);

typedef struct vevo2_timings {
    double parts; /* loading the parts a route needs (a model's first request) */
    double whisper, pitch, chroma, tokenizer, timbre_mel, ar_prefill, ar_decode, fm, vocoder;
    int fm_steps, ar_tokens, chunks;
} vevo2_timings;

typedef struct vevo2_output {
    float *wav;                    /* malloc'd, mono at the package's rate */
    int64_t n;
    int shift, style_shift;        /* the semitones applied */
    vevo2_timings t;
} vevo2_output;

/* The route of O on IN (every clip mono at the package's rate). */
ac_status vevo2_run(vevo2_model *m, const vevo2_inputs *in, const vevo2_options *o, vevo2_output *out);

/* The content-style ids of X[n] (the package's rate): Whisper features of
 * X, the chromagram of X shifted by SHIFT semitones. IDS[vevo2_coco_tokens]
 * from OUT, scratch from A (reset on success); the time of each stage
 * added to T. */
ac_status vevo2_content_style_ids(vevo2_model *m, const float *x, int64_t n, int shift, ac_arena *out,
                                  ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t);
/* The prosody ids of X[n]: its chromagram shifted by SHIFT, stretched in
 * time by RATIO (1: not), through the prosody tokenizer. */
ac_status vevo2_prosody_ids(vevo2_model *m, const float *x, int64_t n, int shift, double ratio, ac_arena *out,
                            ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t);

/* What the FM takes from the timbre clip, computed once per request. */
typedef struct vevo2_timbre {
    int32_t *ids;
    int n_ids;
    float *mel;                    /* [frames][mel]: the prompt */
    int frames;
} vevo2_timbre;

ac_status vevo2_timbre_prepare(vevo2_model *m, const float *x, int64_t n, ac_arena *out, ac_arena *a,
                               vevo2_timbre *tb, vevo2_timings *t);
/* Audio from content-style IDS[n] in the voice of TB: the FM (steps and
 * noise of O, else SEED) then the vocoder. The condition and the mel from
 * KEEP, each stage's scratch from A (reset after it); *WAV malloc'd. */
ac_status vevo2_synthesize(vevo2_model *m, const vevo2_timbre *tb, const int32_t *ids, int n, const vevo2_options *o,
                           uint64_t seed, ac_arena *keep, ac_arena *a, float **wav, int64_t *n_wav,
                           vevo2_timings *t);

/* Path S on the references R, the shift estimated or fixed when USE_PITCH. */
ac_status vevo2_convert(vevo2_model *m, const vevo2_refs *r, const vevo2_options *o, int use_pitch,
                        vevo2_output *out);
/* Path A: the AR continues the prompt for each chunk of the text. */
ac_status vevo2_speak(vevo2_model *m, const vevo2_refs *refs, const char *text, const vevo2_options *o,
                      int use_prosody, int use_pitch, vevo2_output *out);

/* Spec §4.4: the semitones from X's median F0 to the timbre's. */
ac_status vevo2_estimate_shift(const vevo2_model *m, const float *x, int64_t n, const float *timbre, int64_t nt,
                               int *shift);
/* Whether clip X[n] can be read at all: long enough, finite, not silent. */
ac_status vevo2_check_clip(const float *x, int64_t n, int rate, const char *what);
int vevo2_report(const vevo2_options *o, const char *stage, int done, int total);
/* *WAV[*N] (malloc'd) time-stretched by O's speed, in place of the original. */
ac_status vevo2_pace(const vevo2_options *o, float **wav, int64_t *n);

#endif
