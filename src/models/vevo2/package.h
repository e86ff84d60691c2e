/* Where the files of a Vevo2 package are (spec vevo2.md §2): the folder as
 * published, and the Whisper-medium encoder that Amphion loads from
 * OpenAI's cache, found in or beside it. Only paths: what loads them is
 * vevo2.h. */
#ifndef AC_MODELS_VEVO2_PACKAGE_H
#define AC_MODELS_VEVO2_PACKAGE_H

#include "audioc.h"

#define VEVO2_PATH 4096

typedef struct vevo2_paths {
    char dir[VEVO2_PATH];
    char fm_config[VEVO2_PATH], fm_weights[VEVO2_PATH];   /* acoustic_modeling/fm_emilia101k_singnet7k_repa */
    char whisper_stats[VEVO2_PATH];                       /* beside the FM: .pt or .safetensors */
    char content_style[VEVO2_PATH];                       /* tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors */
    char prosody[VEVO2_PATH];                             /* tokenizer/prosody_fvq512_6.25hz/model.safetensors */
    char vocoder_config[VEVO2_PATH], vocoder_weights[VEVO2_PATH];
    char ar_dir[VEVO2_PATH];                              /* contentstyle_modeling/posttrained */
    char whisper[VEVO2_PATH];                             /* a file or folder; "" until found */
} vevo2_paths;

/* Whether DIR looks like a Vevo2 package (its FM and vocoder configs). */
int vevo2_probe(const char *dir);

/* The paths of the package DIR. WHISPER (NULL: search) is the encoder the
 * user named. Checks that the package's folder exists; files are checked
 * by what loads them. */
ac_status vevo2_paths_find(const char *dir, const char *whisper, vevo2_paths *p);

/* Finds the Whisper encoder when it was not named: whisper-medium/ or
 * medium.pt in the package, else whisper-medium/ or medium.pt beside it,
 * else medium.pt in openai-whisper's download folder ($XDG_CACHE_HOME/whisper,
 * ~/.cache/whisper). The error lists where it looked. */
ac_status vevo2_find_whisper(vevo2_paths *p);

#endif
