/* Where the files of a Vevo2 package are (spec vevo2.md §2): the folder as
 * published, or the one GGUF file the ggml audio runtime publishes (every
 * part's tensors under a namespace, every config and tokenizer file
 * embedded; docs/models/vevo2_gguf.md), and the Whisper-medium encoder
 * that Amphion loads from OpenAI's cache, found in or beside it. What
 * loads the parts is vevo2.h; this file says where each one is and opens
 * it. */
#ifndef AC_MODELS_VEVO2_PACKAGE_H
#define AC_MODELS_VEVO2_PACKAGE_H

#include "audioc.h"
#include "io/config.h"
#include "io/weights.h"

#define VEVO2_PATH 4096
#define VEVO2_NS 128

/* The parts with weights, by the names the runtime's package description
 * gives them (its tensor sources). */
typedef enum {
    VEVO2_PART_CONTENT_STYLE,  /* content_style_tokenizer_weights */
    VEVO2_PART_PROSODY,        /* prosody_tokenizer_weights */
    VEVO2_PART_AR,             /* ar_weights */
    VEVO2_PART_FM,             /* fm_weights */
    VEVO2_PART_STATS,          /* fm_whisper_stats */
    VEVO2_PART_VOCODER,        /* vocoder_weights_0 */
    VEVO2_PART_WHISPER,        /* whisper_weights */
    VEVO2_N_PARTS
} vevo2_part;

/* The files read as text, by the description's names. */
typedef enum {
    VEVO2_FILE_FM_CONFIG,      /* fm_config */
    VEVO2_FILE_VOCODER_CONFIG, /* vocoder_config */
    VEVO2_FILE_AR_CONFIG,      /* ar_config */
    VEVO2_FILE_AR_AMPHION,     /* ar_amphion_config */
    VEVO2_FILE_AR_GENERATION,  /* ar_generation_config (optional) */
    VEVO2_FILE_AR_TOKENIZER,   /* ar_tokenizer_json */
    VEVO2_FILE_WHISPER_CONFIG, /* whisper_config */
    VEVO2_N_FILES
} vevo2_file;

typedef struct vevo2_paths {
    char dir[VEVO2_PATH];
    char fm_config[VEVO2_PATH], fm_weights[VEVO2_PATH];   /* acoustic_modeling/fm_emilia101k_singnet7k_repa */
    char whisper_stats[VEVO2_PATH];                       /* beside the FM: .pt or .safetensors */
    char content_style[VEVO2_PATH];                       /* tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors */
    char prosody[VEVO2_PATH];                             /* tokenizer/prosody_fvq512_6.25hz/model.safetensors */
    char vocoder_config[VEVO2_PATH], vocoder_weights[VEVO2_PATH];
    char ar_dir[VEVO2_PATH];                              /* contentstyle_modeling/posttrained */
    char whisper[VEVO2_PATH];                             /* a file or folder; "" until found */
    /* a GGUF package: the file (its folder is DIR), open for the embedded
     * files; each part's namespace ("fm_weights/") and each file's name */
    char gguf[VEVO2_PATH];
    struct ac_tensor_file *gguf_file;
    char ns[VEVO2_N_PARTS][VEVO2_NS];
    char file[VEVO2_N_FILES][VEVO2_PATH];
    int whisper_in_gguf;     /* the encoder loaded is the GGUF's own */
} vevo2_paths;

/* The description's name of a part and of a file, and where a package
 * folder keeps the file (relative to it). */
const char *vevo2_part_key(vevo2_part part);
const char *vevo2_file_key(vevo2_file f);
const char *vevo2_file_default(vevo2_file f);

/* Whether DIR looks like a Vevo2 package (its FM and vocoder configs). */
int vevo2_probe(const char *dir);
/* Whether the open GGUF TF is a Vevo2 package: its package description
 * names the family vevo2, or it embeds the FM config. */
int vevo2_probe_gguf(const struct ac_tensor_file *tf);

/* The paths of the package DIR, a folder or a GGUF file. WHISPER (NULL:
 * search) is the encoder the user named. Checks that the package exists
 * (a GGUF is opened and its description read); files are checked by what
 * loads them. vevo2_paths_close frees what it opened. */
ac_status vevo2_paths_find(const char *dir, const char *whisper, vevo2_paths *p);
void vevo2_paths_close(vevo2_paths *p);

/* Whether the package holds PART (a GGUF may leave Whisper out). */
int vevo2_has_part(const vevo2_paths *p, vevo2_part part);
/* The weights of PART: its file in the folder (PATH), or the GGUF under
 * the part's namespace, which must hold tensors. */
ac_status vevo2_open_part(const vevo2_paths *p, vevo2_part part, const char *path, ac_weights **out);
/* The file F as a relaxed JSON config: PATH in the folder, or the embedded
 * file of the GGUF (named "<gguf>:<file>" in messages). */
ac_status vevo2_read_config(const vevo2_paths *p, vevo2_file f, const char *path, ac_config **out);
/* The embedded file F of a GGUF package, or NULL (also for a folder). */
const struct ac_embedded_file *vevo2_embedded(const vevo2_paths *p, vevo2_file f);

/* Finds the Whisper encoder when it was not named: whisper-medium/ or
 * medium.pt in the package, else whisper-medium/ or medium.pt beside it,
 * else medium.pt in openai-whisper's download folder ($XDG_CACHE_HOME/whisper,
 * ~/.cache/whisper). The error lists where it looked. */
ac_status vevo2_find_whisper(vevo2_paths *p);

#endif
