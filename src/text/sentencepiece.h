/* SentencePiece models (tokenizer.model, a ModelProto protobuf): the piece
 * table and the detokenizer. No encoder: our prompts are made of special
 * pieces looked up by string. The file is untrusted and fully validated. */
#ifndef AC_TEXT_SENTENCEPIECE_H
#define AC_TEXT_SENTENCEPIECE_H

#include <stddef.h>

#include "audioc.h"

#define AC_SP_MAX_PIECES 1000000
#define AC_SP_MAX_PIECE_LEN 65535 /* bytes of one piece string */

/* SentencePiece.Type */
enum {
    AC_SP_NORMAL = 1,
    AC_SP_UNKNOWN = 2,
    AC_SP_CONTROL = 3,
    AC_SP_USER_DEFINED = 4,
    AC_SP_UNUSED = 5,
    AC_SP_BYTE = 6,
};

/* TrainerSpec.ModelType */
enum { AC_SP_UNIGRAM = 1, AC_SP_BPE = 2, AC_SP_WORD = 3, AC_SP_CHAR = 4 };

typedef struct ac_sp ac_sp;

/* What the model says about itself (protobuf defaults when absent). */
typedef struct ac_sp_info {
    int model_type;               /* trainer_spec.model_type, AC_SP_UNIGRAM.. */
    int byte_fallback;            /* trainer_spec.byte_fallback (0) */
    int add_dummy_prefix;         /* normalizer_spec (1) */
    int remove_extra_whitespaces; /* normalizer_spec (1) */
    int escape_whitespaces;       /* normalizer_spec (1) */
    int unk_id;                   /* the one UNKNOWN piece */
} ac_sp_info;

/* Reads and validates PATH. On error *OUT is NULL and the message names
 * the file and the problem. */
ac_status ac_sp_load(const char *path, ac_sp **out);
/* The same on a file image in memory; NAME is used in messages. BUF is
 * not referenced after the call. */
ac_status ac_sp_parse(const void *buf, size_t n, const char *name, ac_sp **out);
void ac_sp_free(ac_sp *sp);

int ac_sp_size(const ac_sp *sp);
const ac_sp_info *ac_sp_get_info(const ac_sp *sp);
/* The piece string of ID (NUL-terminated UTF-8), NULL when out of range. */
const char *ac_sp_piece(const ac_sp *sp, int id);
/* AC_SP_NORMAL..AC_SP_BYTE, 0 when ID is out of range. */
int ac_sp_type(const ac_sp *sp, int id);
float ac_sp_score(const ac_sp *sp, int id);
/* The id of PIECE, -1 when absent. */
int ac_sp_piece_to_id(const ac_sp *sp, const char *piece);

/* Text of IDS (malloc'd, NUL-terminated, valid UTF-8; free() it). Keeps
 * only NORMAL and BYTE pieces, turns runs of BYTE pieces into UTF-8 (each
 * byte that is not part of a valid character becomes U+FFFD, as
 * libsentencepiece does; U+0000 from <0x00> is dropped), '▁' into ' ',
 * drops the dummy-prefix space of the first piece and strips leading and
 * trailing whitespace as Python's str.strip() does. An id out of range is
 * an AC_ERR_ARG. */
ac_status ac_sp_decode(const ac_sp *sp, const int *ids, size_t n, char **text);

#endif
