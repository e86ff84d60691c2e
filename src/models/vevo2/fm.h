/* Vevo2's flow-matching transformer (Amphion FlowMatchingTransformer with
 * its DiffLlama estimator, spec vevo2.md §4.9): content-style ids become a
 * 50 Hz condition (embedding + two stride-2 transposed convolutions), and a
 * CFG-rescaled Euler sampler integrates the estimator's velocity from
 * Gaussian noise to a normalized log-mel, continuing a prompt mel.
 *
 * The estimator v(x, t, c) over L frames: h = mel_mlp(x) + cond_mlp(c);
 * layers of bidirectional RoPE attention and a SwiGLU MLP, each behind an
 * RMSNorm whose scale is a Linear of the timestep embedding (one vector
 * for every frame); a last such norm and mel_out_mlp. Sequences are
 * time-major [frame][channel]. */
#ifndef AC_MODELS_VEVO2_FM_H
#define AC_MODELS_VEVO2_FM_H

#include <stdint.h>

#include "audioc.h"
#include "base/arena.h"
#include "io/config.h"
#include "io/weights.h"
#include "tensor/mat.h"

typedef struct vevo2_fm_config {
    int mel_dim;            /* mel_dim (128) */
    int hidden;             /* hidden_size (1024); the MLPs are 4x wider */
    int layers;             /* num_layers (16) */
    int heads;              /* num_heads (16) */
    int cond_codebook;      /* cond_codebook_size (16384) */
    int cond_scale_factor;  /* cond_scale_factor: 4, two stride-2 upsamplers */
    int text_condition;     /* use_text_as_condition: parsed, never run */
} vevo2_fm_config;

/* The object model.flow_matching_transformer of the FM config.json (WHERE
 * names it in messages). Training-only keys (cfg_scale, sigma,
 * time_scheduler, repa) are accepted and unused. */
ac_status vevo2_fm_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_fm_config *out);
/* The whole FM config.json (relaxed JSON): model.flow_matching_transformer,
 * checked against preprocess.num_mels. */
ac_status vevo2_fm_config_load(const char *path, vevo2_fm_config *out);

typedef struct vevo2_fm_layer {
    ac_mat norm_in, norm_post;        /* to_weight Linears [hidden][hidden] */
    const float *norm_in_b, *norm_post_b;
    ac_mat wq, wk, wv, wo, gate, up, down;
} vevo2_fm_layer;

/* A two-Linear MLP with SiLU between: Linear(in, 4h) -> SiLU -> Linear(4h, out). */
typedef struct vevo2_fm_mlp {
    ac_mat w0, w2;
    const float *b0, *b2;
} vevo2_fm_mlp;

typedef struct vevo2_fm {
    vevo2_fm_config cfg;
    ac_weights *weights;
    ac_mat cond_emb;                  /* [cond_codebook][hidden] */
    const float *up_w[2], *up_b[2];   /* ConvTranspose1d weights as [k][out][in] */
    vevo2_fm_mlp mel_mlp, cond_mlp, step_mlp, out_mlp;
    vevo2_fm_layer *layer;
    ac_mat norm;                      /* the final to_weight */
    const float *norm_b;
} vevo2_fm;

/* model.safetensors of the FM folder; every tensor's shape is checked
 * against CFG (copied). Weights stay in their stored type. */
ac_status vevo2_fm_load(const char *weights_path, const vevo2_fm_config *cfg, ac_weight_type type, vevo2_fm **out);
/* The same over weights W opened by the caller (a part of a GGUF package); W is
 * the model's from here on, freed on error too. */
ac_status vevo2_fm_load_from(ac_weights *w, const vevo2_fm_config *cfg, vevo2_fm **out);
void vevo2_fm_free(vevo2_fm *m);

/* The condition of N ids: COND[4N][hidden]. Scratch from A. */
ac_status vevo2_fm_cond(const vevo2_fm *m, const int *ids, int n, float *cond, ac_arena *a);

/* The estimator's velocity OUT[L][mel_dim] for X[L][mel_dim] at time T
 * under COND[L][hidden] (NULL: zeros). Scratch from A. */
ac_status vevo2_fm_estimate(const vevo2_fm *m, const float *x, int L, float t, const float *cond, float *out,
                            ac_arena *a);

/* Called after each sampler step (1-based STEP of STEPS); nonzero stops
 * the sampler with AC_ERR_CANCELLED. */
typedef int (*vevo2_fm_progress_fn)(void *user, int step, int steps);

typedef struct vevo2_fm_options {
    int steps;                        /* 32 */
    float cfg, rescale;               /* 1.0, 0.75 (upstream's fixed guidance) */
    uint64_t seed;                    /* the noise, when NOISE is NULL */
    const float *noise;               /* [F][mel_dim] initial noise, or NULL */
    vevo2_fm_progress_fn progress;    /* may be NULL */
    void *progress_user;
} vevo2_fm_options;

vevo2_fm_options vevo2_fm_defaults(void);

/* Frames the sampler makes: cond frames minus prompt frames (may be <= 0,
 * which vevo2_fm_sample refuses). */
static inline int vevo2_fm_frames(int cond_frames, int prompt_frames) { return cond_frames - prompt_frames; }

/* The seeded initial noise: F*mel_dim standard normals in [frame][mel]
 * order, the same on every thread count. */
void vevo2_fm_noise_seeded(uint64_t seed, size_t n, float *out);

/* The mel MEL[F][mel_dim] (normalized log-mel) that continues
 * PROMPT[Tt][mel_dim] under COND[Lc][hidden], F = Lc - Tt > 0. Tt may be 0
 * (PROMPT NULL). Scratch from A. */
ac_status vevo2_fm_sample(const vevo2_fm *m, const float *cond, int Lc, const float *prompt, int Tt,
                          const vevo2_fm_options *o, float *mel, ac_arena *a);

#endif
