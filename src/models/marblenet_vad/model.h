/* MarbleNet internals shared by its loader, front end and encoder. */
#ifndef AC_MODELS_MARBLENET_MODEL_H
#define AC_MODELS_MARBLENET_MODEL_H

#include "audio/mel.h"
#include "io/weights.h"
#include "models/marblenet_vad/marblenet_vad.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

#define MARBLENET_MAX_BLOCKS 32
#define MARBLENET_MAX_REPEAT 8

typedef struct {
    ac_conv1d_shape shape;   /* depthwise (separable) or full conv */
    float *dw;               /* [kernel][cin] depthwise weight, separable only */
    ac_mat pw;               /* [cout][cin] pointwise, separable only */
    float *conv;             /* [cout][kernel][cin], non-separable only */
    float *bn_scale, *bn_shift;
} mb_repeat;

typedef struct {
    int filters, repeat, kernel, stride, dilation, residual, separable;
    int cin;
    mb_repeat rep[MARBLENET_MAX_REPEAT];
    ac_mat res_pw;           /* [filters][cin] */
    float *res_scale, *res_shift;
} mb_block;

struct ac_marblenet {
    ac_weights *weights;
    char config[4200];       /* its config's path; "" when the GGUF embeds it */
    int rate, n_fft, win, hop, n_mels, pad_to, n_classes;
    const float *window;     /* [win] */
    ac_melbank mel;
    int n_blocks;
    mb_block blocks[MARBLENET_MAX_BLOCKS];
    int stride;              /* product of block strides */
    int margin;              /* output frames of context each side of a window */
    int max_channels;
    ac_mat dec_w;
    const float *dec_b;
};

ac_status ac_marblenet_load_config(ac_marblenet *m, const char *config_path);
/* The same from the file's text (NAME names it in messages). */
ac_status ac_marblenet_parse_config(ac_marblenet *m, const char *text, size_t len, const char *name);
ac_status ac_marblenet_load_weights(ac_marblenet *m);
/* Output frames for T feature frames. */
size_t ac_marblenet_out_len(const ac_marblenet *m, size_t T);

#endif
