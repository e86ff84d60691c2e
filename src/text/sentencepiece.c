#define _POSIX_C_SOURCE 200809L
#include "text/sentencepiece.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "text/utf8.h"

#define MAX_FILE (1u << 30)   /* real models are < 10 MB */
#define MAX_GROUP_DEPTH 64    /* protobuf's own recursion limit is 100 */
#define SPACE_SYMBOL "\xE2\x96\x81" /* U+2581 '▁' */

struct ac_sp {
    int n;
    char *strings;     /* every piece, NUL-terminated, back to back */
    const char **piece;
    uint32_t *len;
    float *score;
    uint8_t *type;
    uint8_t *byte;     /* value of a BYTE piece */
    int32_t *slots;    /* open-addressing table of ids, -1 = empty */
    size_t mask;
    ac_sp_info info;
};

/* ---- UTF-8 -------------------------------------------------------------- */

/* Bytes of the whitespace character (Python's str.isspace) that starts at
 * S, 0 if none. S is valid UTF-8 with N bytes. */
static size_t space_at(const uint8_t *s, size_t n)
{
    if (n >= 1 && ((s[0] >= 0x09 && s[0] <= 0x0D) || (s[0] >= 0x1C && s[0] <= 0x20))) return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n < 3) return 0;
    if (s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3;            /* U+1680 */
    if (s[0] == 0xE2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8A) || /* U+2000..200A */
                                         s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
        return 3;                                                          /* U+2028/9, 202F */
    if (s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3;            /* U+205F */
    if (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3;            /* U+3000 */
    return 0;
}

/* The same for the character that ends at S + N. */
static size_t space_before(const uint8_t *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++)
        if (space_at(s + n - k, k) == k) return k;
    return 0;
}

/* ---- protobuf wire format ----------------------------------------------- */

typedef struct {
    const uint8_t *buf;
    const char *name;
} source;

typedef struct {
    uint32_t num;
    int wt;       /* 0 varint, 1 fixed64, 2 length-delimited, 3/4 group, 5 fixed32 */
    uint64_t v;   /* the value, or the length of a length-delimited field */
    size_t at;    /* offset of the tag */
    size_t data;  /* offset of a length-delimited field's bytes */
} field;

static ac_status bad(const source *s, size_t at, const char *fmt, ...) AC_PRINTF(3, 4);

static ac_status bad(const source *s, size_t at, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return ac_error(AC_ERR_FORMAT, "%s: not a SentencePiece model (byte %zu: %s)", s->name, at, detail);
}

/* 0 ok, -1 runs past END, -2 longer than 64 bits. */
static int read_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= end) return -1;
        uint8_t c = b[(*pos)++];
        if (shift == 63 && c > 1) return -2;
        x |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -2;
}

static uint64_t read_le(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

/* Reads the field at *POS (< END) and moves past it; a group is skipped
 * whole. An end-of-group tag is returned to the caller as wire type 4. */
static ac_status read_field(const source *s, size_t *pos, size_t end, field *f, int depth)
{
    f->at = *pos;
    uint64_t tag;
    int r = read_varint(s->buf, pos, end, &tag);
    if (r) return bad(s, f->at, r == -1 ? "truncated field tag" : "field tag longer than 64 bits");
    if (tag > UINT32_MAX || tag >> 3 == 0) return bad(s, f->at, "invalid field tag %" PRIu64, tag);
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    f->v = 0;
    f->data = *pos;
    switch (f->wt) {
    case 0:
        r = read_varint(s->buf, pos, end, &f->v);
        if (r)
            return bad(s, f->at, "field %u: %s", f->num, r == -1 ? "truncated varint" : "varint longer than 64 bits");
        return AC_OK;
    case 1:
    case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if (end - *pos < w) return bad(s, f->at, "field %u: truncated %zu-byte value", f->num, w);
        f->v = read_le(s->buf + *pos, (int)w);
        *pos += w;
        return AC_OK;
    }
    case 2:
        r = read_varint(s->buf, pos, end, &f->v);
        if (r)
            return bad(s, f->at, "field %u: %s", f->num, r == -1 ? "truncated length" : "length longer than 64 bits");
        if (f->v > end - *pos)
            return bad(s, f->at, "field %u claims %" PRIu64 " bytes but only %zu are left, truncated?", f->num, f->v,
                       end - *pos);
        f->data = *pos;
        *pos += (size_t)f->v;
        return AC_OK;
    case 3:
        if (depth >= MAX_GROUP_DEPTH) return bad(s, f->at, "groups nested more than %d deep", MAX_GROUP_DEPTH);
        for (;;) {
            field g;
            if (*pos >= end) return bad(s, f->at, "group %u has no end", f->num);
            AC_TRY(read_field(s, pos, end, &g, depth + 1));
            if (g.wt != 4) continue;
            if (g.num != f->num) return bad(s, g.at, "group %u is closed as group %u", f->num, g.num);
            return AC_OK;
        }
    case 4:
        return AC_OK;
    default:
        return bad(s, f->at, "field %u has wire type %d", f->num, f->wt);
    }
}

static ac_status next_field(const source *s, size_t *pos, size_t end, field *f)
{
    AC_TRY(read_field(s, pos, end, f, 0));
    if (f->wt == 4) return bad(s, f->at, "field %u has wire type 4 (end of group) outside a group", f->num);
    return AC_OK;
}

static ac_status expect(const source *s, const field *f, int wt, const char *what)
{
    if (f->wt == wt) return AC_OK;
    return bad(s, f->at, "%s (field %u) has wire type %d, expected %d", what, f->num, f->wt, wt);
}

/* ---- ModelProto --------------------------------------------------------- */

/* SentencePiece {1 piece, 2 score, 3 type}; the string goes to *W. */
static ac_status parse_piece(ac_sp *sp, const source *s, size_t pos, size_t end, int id, char **w)
{
    size_t str_at = 0, str_len = 0;
    int has_str = 0;
    uint64_t type = AC_SP_NORMAL;
    float score = 0;
    while (pos < end) {
        field f;
        AC_TRY(next_field(s, &pos, end, &f));
        if (f.num == 1) {
            AC_TRY(expect(s, &f, 2, "piece string"));
            str_at = f.data, str_len = (size_t)f.v, has_str = 1;
        } else if (f.num == 2) {
            AC_TRY(expect(s, &f, 5, "piece score"));
            uint32_t u = (uint32_t)f.v;
            memcpy(&score, &u, sizeof score);
        } else if (f.num == 3) {
            AC_TRY(expect(s, &f, 0, "piece type"));
            type = f.v;
        }
    }
    const char *name = s->name;
    if (!has_str || str_len == 0) return ac_error(AC_ERR_FORMAT, "%s: piece %d has an empty string", name, id);
    if (str_len > AC_SP_MAX_PIECE_LEN)
        return ac_error(AC_ERR_FORMAT, "%s: piece %d is %zu bytes long (at most %d)", name, id, str_len,
                        AC_SP_MAX_PIECE_LEN);
    if (type < AC_SP_NORMAL || type > AC_SP_BYTE)
        return ac_error(AC_ERR_FORMAT, "%s: piece %d has unknown type %" PRIu64, name, id, type);
    const uint8_t *p = s->buf + str_at;
    for (size_t i = 0, k; i < str_len; i += k) {
        k = ac_utf8_char(p + i, str_len - i, NULL);
        if (k == 0 || p[i] == 0)
            return ac_error(AC_ERR_FORMAT, "%s: piece %d is not valid UTF-8 (%s at byte %zu)", name, id,
                            k ? "NUL" : "bad sequence", str_at + i);
    }
    memcpy(*w, p, str_len);
    (*w)[str_len] = 0;
    sp->piece[id] = *w;
    sp->len[id] = (uint32_t)str_len;
    sp->score[id] = score;
    sp->type[id] = (uint8_t)type;
    *w += str_len + 1;
    if (type == AC_SP_BYTE) {
        /* libsentencepiece only knows "<0xNN>" with upper-case hex */
        static const char hex[] = "0123456789ABCDEF";
        const char *h1 = str_len == 6 && memcmp(p, "<0x", 3) == 0 && p[5] == '>' ? memchr(hex, p[3], 16) : NULL;
        const char *h2 = h1 ? memchr(hex, p[4], 16) : NULL;
        if (!h1 || !h2)
            return ac_error(AC_ERR_FORMAT, "%s: piece %d ('%s') has type BYTE but is not of the form <0xNN>", name,
                            id, sp->piece[id]);
        sp->byte[id] = (uint8_t)((h1 - hex) * 16 + (h2 - hex));
    }
    return AC_OK;
}

/* TrainerSpec: 3 model_type, 35 byte_fallback. */
static ac_status parse_trainer(ac_sp *sp, const source *s, size_t pos, size_t end)
{
    while (pos < end) {
        field f;
        AC_TRY(next_field(s, &pos, end, &f));
        if (f.num == 3) {
            AC_TRY(expect(s, &f, 0, "trainer_spec.model_type"));
            if (f.v < AC_SP_UNIGRAM || f.v > AC_SP_CHAR)
                return ac_error(AC_ERR_FORMAT, "%s: unknown model_type %" PRIu64, s->name, f.v);
            sp->info.model_type = (int)f.v;
        } else if (f.num == 35) {
            AC_TRY(expect(s, &f, 0, "trainer_spec.byte_fallback"));
            sp->info.byte_fallback = f.v != 0;
        }
    }
    return AC_OK;
}

/* NormalizerSpec: 3 add_dummy_prefix, 4 remove_extra_whitespaces,
 * 5 escape_whitespaces. */
static ac_status parse_normalizer(ac_sp *sp, const source *s, size_t pos, size_t end)
{
    while (pos < end) {
        field f;
        AC_TRY(next_field(s, &pos, end, &f));
        int *flag = f.num == 3 ? &sp->info.add_dummy_prefix
                  : f.num == 4 ? &sp->info.remove_extra_whitespaces
                  : f.num == 5 ? &sp->info.escape_whitespaces
                               : NULL;
        if (!flag) continue;
        AC_TRY(expect(s, &f, 0, "normalizer_spec flag"));
        *flag = f.v != 0;
    }
    return AC_OK;
}

static uint64_t hash(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
    return h;
}

/* The piece table; duplicates and a missing or second <unk> are errors,
 * as in libsentencepiece. */
static ac_status index_pieces(ac_sp *sp, const char *name)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)sp->n) cap *= 2;
    sp->slots = ac_malloc(cap * sizeof *sp->slots);
    if (!sp->slots) return AC_ERR_NOMEM;
    memset(sp->slots, 0xFF, cap * sizeof *sp->slots);
    sp->mask = cap - 1;
    sp->info.unk_id = -1;
    for (int id = 0; id < sp->n; id++) {
        size_t i = (size_t)hash(sp->piece[id], sp->len[id]) & sp->mask;
        for (; sp->slots[i] >= 0; i = (i + 1) & sp->mask)
            if (strcmp(sp->piece[sp->slots[i]], sp->piece[id]) == 0)
                return ac_error(AC_ERR_FORMAT, "%s: piece '%s' appears twice (ids %d and %d)", name, sp->piece[id],
                                sp->slots[i], id);
        sp->slots[i] = id;
        if (sp->type[id] != AC_SP_UNKNOWN) continue;
        if (sp->info.unk_id >= 0)
            return ac_error(AC_ERR_FORMAT, "%s: two UNKNOWN pieces (ids %d and %d)", name, sp->info.unk_id, id);
        sp->info.unk_id = id;
    }
    if (sp->info.unk_id < 0) return ac_error(AC_ERR_FORMAT, "%s: no UNKNOWN piece (<unk>)", name);
    return AC_OK;
}

static ac_status parse(ac_sp *sp, const source *s, size_t n)
{
    /* pass 1: the framing, the number of pieces and their total size */
    size_t count = 0, bytes = 0;
    for (size_t pos = 0; pos < n;) {
        field f;
        AC_TRY(next_field(s, &pos, n, &f));
        if (f.num == 1) {
            AC_TRY(expect(s, &f, 2, "piece"));
            if (++count > AC_SP_MAX_PIECES)
                return ac_error(AC_ERR_FORMAT, "%s: more than %d pieces", s->name, AC_SP_MAX_PIECES);
            bytes += (size_t)f.v; /* <= n: every field lies inside the buffer */
        } else if (f.num == 2 || f.num == 3) {
            AC_TRY(expect(s, &f, 2, f.num == 2 ? "trainer_spec" : "normalizer_spec"));
        }
    }
    if (count == 0) return ac_error(AC_ERR_FORMAT, "%s: not a SentencePiece model (no pieces)", s->name);
    sp->n = (int)count;
    sp->strings = ac_malloc(bytes + count);
    sp->piece = ac_calloc(count, sizeof *sp->piece);
    sp->len = ac_calloc(count, sizeof *sp->len);
    sp->score = ac_calloc(count, sizeof *sp->score);
    sp->type = ac_calloc(count, sizeof *sp->type);
    sp->byte = ac_calloc(count, sizeof *sp->byte);
    if (!sp->strings || !sp->piece || !sp->len || !sp->score || !sp->type || !sp->byte) return AC_ERR_NOMEM;

    /* pass 2: the contents; a message that appears twice is merged */
    char *w = sp->strings;
    int id = 0;
    for (size_t pos = 0; pos < n;) {
        field f;
        AC_TRY(next_field(s, &pos, n, &f));
        size_t end = f.data + (size_t)f.v;
        if (f.num == 1) AC_TRY(parse_piece(sp, s, f.data, end, id++, &w));
        else if (f.num == 2) AC_TRY(parse_trainer(sp, s, f.data, end));
        else if (f.num == 3) AC_TRY(parse_normalizer(sp, s, f.data, end));
    }
    return index_pieces(sp, s->name);
}

ac_status ac_sp_parse(const void *buf, size_t n, const char *name, ac_sp **out)
{
    if (!out) return ac_error(AC_ERR_ARG, "ac_sp_parse: no output pointer");
    *out = NULL;
    if (!name) name = "SentencePiece model";
    if (!buf || n == 0) return ac_error(AC_ERR_FORMAT, "%s: empty file, not a SentencePiece model", name);
    ac_sp *sp = ac_calloc(1, sizeof *sp);
    if (!sp) return AC_ERR_NOMEM;
    sp->info = (ac_sp_info){.model_type = AC_SP_UNIGRAM, .add_dummy_prefix = 1, .remove_extra_whitespaces = 1,
                            .escape_whitespaces = 1, .unk_id = -1};
    source s = {buf, name};
    ac_status st = parse(sp, &s, n);
    if (st != AC_OK) {
        ac_sp_free(sp);
        return st;
    }
    *out = sp;
    return AC_OK;
}

ac_status ac_sp_load(const char *path, ac_sp **out)
{
    if (!out) return ac_error(AC_ERR_ARG, "ac_sp_load: no output pointer");
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "ac_sp_load: no path");
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, MAX_FILE, &buf, &n));
    ac_status st = ac_sp_parse(buf, n, path, out);
    free(buf);
    return st;
}

void ac_sp_free(ac_sp *sp)
{
    if (!sp) return;
    free(sp->strings);
    free(sp->piece);
    free(sp->len);
    free(sp->score);
    free(sp->type);
    free(sp->byte);
    free(sp->slots);
    free(sp);
}

/* ---- lookups ------------------------------------------------------------ */

int ac_sp_size(const ac_sp *sp) { return sp ? sp->n : 0; }
const ac_sp_info *ac_sp_get_info(const ac_sp *sp) { return sp ? &sp->info : NULL; }

static int valid_id(const ac_sp *sp, int id) { return sp && id >= 0 && id < sp->n; }

const char *ac_sp_piece(const ac_sp *sp, int id) { return valid_id(sp, id) ? sp->piece[id] : NULL; }
int ac_sp_type(const ac_sp *sp, int id) { return valid_id(sp, id) ? sp->type[id] : 0; }
float ac_sp_score(const ac_sp *sp, int id) { return valid_id(sp, id) ? sp->score[id] : 0.0f; }

int ac_sp_piece_to_id(const ac_sp *sp, const char *piece)
{
    if (!sp || !piece) return -1;
    size_t i = (size_t)hash(piece, strlen(piece)) & sp->mask;
    for (; sp->slots[i] >= 0; i = (i + 1) & sp->mask)
        if (strcmp(sp->piece[sp->slots[i]], piece) == 0) return sp->slots[i];
    return -1;
}

/* ---- decoding ----------------------------------------------------------- */

/* Raw bytes of a BYTE run as UTF-8; each byte that does not start a valid
 * character becomes U+FFFD on its own (libsentencepiece, not Python's
 * maximal-subpart rule: E2 82 gives two U+FFFD). <0x00> is dropped: the
 * result is a C string. Returns bytes written. */
static size_t put_bytes(char *out, const uint8_t *b, size_t n)
{
    size_t o = 0;
    for (size_t i = 0, k; i < n; i += k) {
        k = ac_utf8_char(b + i, n - i, NULL);
        if (k == 1 && b[i] == 0) continue;
        if (k) {
            memcpy(out + o, b + i, k);
            o += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            k = 1;
        }
    }
    return o;
}

/* A NORMAL piece with every '▁' turned into ' '. */
static size_t put_piece(char *out, const char *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (n - i >= 3 && memcmp(p + i, SPACE_SYMBOL, 3) == 0) {
            out[o++] = ' ';
            i += 3;
        } else {
            out[o++] = p[i++];
        }
    }
    return o;
}

ac_status ac_sp_decode(const ac_sp *sp, const int *ids, size_t n, char **text)
{
    if (!text) return ac_error(AC_ERR_ARG, "ac_sp_decode: no output pointer");
    *text = NULL;
    if (!sp || (n && !ids)) return ac_error(AC_ERR_ARG, "ac_sp_decode: no model or no ids");
    /* kept ids first: a dropped special between two BYTE pieces does not
     * break their run (upstream filters before decoding too) */
    int *kept = ac_calloc(n, sizeof *kept);
    uint8_t *run = ac_malloc(n);
    if (!kept || !run) {
        free(kept);
        free(run);
        return AC_ERR_NOMEM;
    }
    size_t m = 0, bound = 1;
    for (size_t i = 0; i < n; i++) {
        int id = ids[i];
        if (!valid_id(sp, id)) {
            free(kept);
            free(run);
            return ac_error(AC_ERR_ARG, "SentencePiece decode: id %d at position %zu is out of range [0, %d)", id, i,
                            sp->n);
        }
        if (sp->type[id] != AC_SP_NORMAL && sp->type[id] != AC_SP_BYTE) continue;
        kept[m++] = id;
        if (bound > SIZE_MAX / 2) bound = SIZE_MAX; /* ac_malloc fails below */
        else bound += sp->type[id] == AC_SP_BYTE ? 3 : sp->len[id];
    }
    char *out = ac_malloc(bound);
    if (!out) {
        free(kept);
        free(run);
        return AC_ERR_NOMEM;
    }
    size_t o = 0;
    int strip_first = sp->info.add_dummy_prefix || sp->info.remove_extra_whitespaces;
    for (size_t i = 0; i < m;) {
        int id = kept[i];
        if (sp->type[id] == AC_SP_BYTE) {
            size_t k = 0;
            for (; i < m && sp->type[kept[i]] == AC_SP_BYTE; i++) run[k++] = sp->byte[kept[i]];
            o += put_bytes(out + o, run, k);
            continue;
        }
        const char *p = sp->piece[id];
        size_t len = sp->len[id];
        /* the space the dummy prefix put before the first word */
        if (i == 0 && strip_first && len >= 3 && memcmp(p, SPACE_SYMBOL, 3) == 0) p += 3, len -= 3;
        o += put_piece(out + o, p, len);
        i++;
    }
    free(kept);
    free(run);
    const uint8_t *u = (const uint8_t *)out;
    size_t a = 0, k;
    while (a < o && (k = space_at(u + a, o - a))) a += k;
    while (o > a && (k = space_before(u + a, o - a))) o -= k;
    memmove(out, out + a, o - a);
    out[o - a] = 0;
    *text = out;
    return AC_OK;
}
