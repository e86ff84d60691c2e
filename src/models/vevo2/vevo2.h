/* Vevo2 (Amphion): a published package and the routes that run on it
 * (spec vevo2.md §3). Loading reads the configs and checks that the parts
 * fit each other; the weights of a part are mapped the first time a route
 * needs it (a conversion maps no AR weights), under a lock, so one loaded
 * model serves any number of calls at once.
 *
 * Style-preserved voice and singing conversion (path S): the source's
 * Whisper features and chromagram (pitch-shifted towards the target) and
 * the target voice's become content-style tokens; the flow matching
 * continues the target's mel under the tokens of both; the vocoder makes
 * the 24 kHz audio. */
#ifndef AC_MODELS_VEVO2_H
#define AC_MODELS_VEVO2_H

#include <pthread.h>
#include <stdint.h>

#include "audio/resample_sinc.h"
#include "models/vevo2/coco.h"
#include "models/vevo2/fm.h"
#include "models/vevo2/package.h"
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

    pthread_mutex_t lock;          /* guards the parts below while they load (the vocoder last) */
    whisper_encoder *whisper;
    whisper_stats *stats;
    vevo2_coco *content;
    vevo2_fm *fm;
    vevo2_vocoder *vocoder;
    vevo2_timbre_mel timbre;
    ac_sinc_resampler to_whisper;  /* 24 -> 16 kHz as torchaudio */
} vevo2_model;

/* The package folder DIR; WHISPER the encoder the user named (NULL: found
 * in or beside the package when first needed). */
ac_status vevo2_load(const char *dir, const char *whisper, vevo2_model **out);
void vevo2_free(vevo2_model *m);

/* Maps the weights the conversion needs, once. */
ac_status vevo2_load_conversion(vevo2_model *m);

typedef enum { VEVO2_PITCH_ESTIMATE, VEVO2_PITCH_FIXED, VEVO2_PITCH_NONE } vevo2_pitch_mode;

typedef int (*vevo2_progress_fn)(void *user, const char *stage, int done, int total);

typedef struct vevo2_convert_options {
    vevo2_pitch_mode pitch_mode;
    int pitch_shift;               /* VEVO2_PITCH_FIXED */
    int steps;
    uint64_t seed;
    const float *noise;            /* [F][mel] or NULL */
    size_t n_noise;
    vevo2_progress_fn progress;    /* may be NULL */
    void *progress_user;
} vevo2_convert_options;

typedef struct vevo2_timings {
    double whisper, pitch, chroma, tokenizer, timbre_mel, fm, vocoder;
    int fm_steps;
} vevo2_timings;

/* SOURCE[n] in the voice of TARGET[n_target] (both mono at the package's
 * rate) into *WAV[*N_WAV] (malloc'd), the semitones applied in *SHIFT. */
ac_status vevo2_convert(vevo2_model *m, const float *source, int64_t n, const float *target, int64_t n_target,
                        const vevo2_convert_options *o, float **wav, int64_t *n_wav, int *shift, vevo2_timings *t);

/* The content-style ids of X[n] (the package's rate): Whisper features of
 * X, the chromagram of X shifted by SHIFT semitones. IDS[vevo2_coco_tokens]
 * from OUT, scratch from A (reset on success); the time of each stage
 * added to T. */
ac_status vevo2_content_style_ids(vevo2_model *m, const float *x, int64_t n, int shift, ac_arena *out,
                                  ac_arena *a, int32_t **ids, int *n_ids, vevo2_timings *t);

#endif
