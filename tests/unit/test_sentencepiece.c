/* src/text/sentencepiece: hand-built models (every wire type, every check
 * of the reader), the real Cohere tokenizer.model, broken files, and the
 * decoder against libsentencepiece (tests/ref/sp_oracle.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audioc.h"
#include "base/error.h"
#include "test_util.h"
#include "text/sentencepiece.h"

#define SP "\xE2\x96\x81" /* '▁' */

/* ---- a small protobuf writer -------------------------------------------- */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} pb;

static void pb_raw(pb *p, const void *d, size_t n)
{
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
    }
    if (n) memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void pb_varint(pb *p, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v) c |= 0x80;
        pb_raw(p, &c, 1);
    } while (v);
}

static void pb_tag(pb *p, uint32_t num, int wt) { pb_varint(p, (uint64_t)num << 3 | (uint64_t)wt); }

static void pb_uint(pb *p, uint32_t num, uint64_t v)
{
    pb_tag(p, num, 0);
    pb_varint(p, v);
}

static void pb_bytes(pb *p, uint32_t num, const void *d, size_t n)
{
    pb_tag(p, num, 2);
    pb_varint(p, n);
    pb_raw(p, d, n);
}

static void pb_msg(pb *p, uint32_t num, pb *m)
{
    pb_bytes(p, num, m->b, m->n);
    free(m->b);
    *m = (pb){0};
}

static void pb_fixed(pb *p, uint32_t num, uint64_t v, int bytes)
{
    pb_tag(p, num, bytes == 8 ? 1 : 5);
    for (int i = 0; i < bytes; i++) pb_raw(p, &(uint8_t){(uint8_t)(v >> (8 * i))}, 1);
}

/* Unknown fields of every wire type, a nested group among them. */
static void pb_junk(pb *p)
{
    pb_uint(p, 1000, 123456789);
    pb_fixed(p, 1001, 0x0123456789abcdefull, 8);
    pb_bytes(p, 1002, "\x01\x02\x03", 3);
    pb_fixed(p, 1003, 0xdeadbeef, 4);
    pb_tag(p, 1004, 3);
    pb_uint(p, 1, 5);
    pb_tag(p, 1005, 3);
    pb_bytes(p, 2, "xyz", 3);
    pb_tag(p, 1005, 4);
    pb_fixed(p, 3, 7, 4);
    pb_tag(p, 1004, 4);
}

static void pb_piece(pb *p, const char *s, int type, int junk)
{
    pb m = {0};
    if (junk) pb_junk(&m);
    if (s) pb_bytes(&m, 1, s, strlen(s));
    uint32_t score;
    float f = -1.5f;
    memcpy(&score, &f, 4);
    pb_fixed(&m, 2, score, 4);
    if (type) pb_uint(&m, 3, (uint64_t)type);
    pb_msg(p, 1, &m);
}

/* ---- hand-built models ------------------------------------------------- */

enum { UNK, BOS, USER, UNUSED, B00, B0A, B20, B41, B80, B82, BA0, BA5, BC2, BC3, BE2, BE3, HE, LLO, WORLD, NPIECES };
static const char *const PIECES[NPIECES] = {"<unk>", "<s>", "<|x|>", "unused", "<0x00>", "<0x0A>", "<0x20>", "<0x41>",
                                            "<0x80>", "<0x82>", "<0xA0>", "<0xA5>", "<0xC2>", "<0xC3>", "<0xE2>",
                                            "<0xE3>", SP "he", "llo", SP "wor" SP "ld"};

static int piece_type(int i)
{
    return i == UNK ? AC_SP_UNKNOWN : i == BOS ? AC_SP_CONTROL : i == USER ? AC_SP_USER_DEFINED
         : i == UNUSED ? AC_SP_UNUSED : i >= B00 && i <= BE3 ? AC_SP_BYTE : 0;
}

/* The model above with unknown fields everywhere; non-default specs. */
static pb good_model(void)
{
    pb p = {0}, m = {0};
    pb_junk(&p);
    for (int i = 0; i < NPIECES; i++) pb_piece(&p, PIECES[i], piece_type(i), i % 3 == 0);
    pb_junk(&m);
    pb_bytes(&m, 1, "unigram?", 8);
    pb_uint(&m, 3, AC_SP_BPE);
    pb_uint(&m, 35, 1);
    pb_msg(&p, 2, &m);
    pb_bytes(&m, 1, "nmt_nfkc", 8);
    pb_uint(&m, 3, 0);
    pb_junk(&m);
    pb_uint(&m, 4, 0);
    pb_uint(&m, 5, 0);
    pb_msg(&p, 3, &m);
    pb_bytes(&p, 4, "self test", 9);
    return p;
}

static char *decode(const ac_sp *sp, const int *ids, size_t n)
{
    char *text = NULL;
    ac_status s = ac_sp_decode(sp, ids, n, &text);
    CHECK(s == AC_OK, "decode: %s", ac_last_error());
    return text ? text : calloc(1, 1);
}

#define DECODES(sp, expect, ...)                                                  \
    do {                                                                          \
        const int ids_[] = {__VA_ARGS__};                                         \
        char *t_ = decode(sp, ids_, sizeof ids_ / sizeof *ids_);                  \
        CHECK(strcmp(t_, expect) == 0, "decoded '%s', expected '%s'", t_, expect); \
        free(t_);                                                                 \
    } while (0)

static void test_small_model(void)
{
    pb p = good_model();
    ac_sp *sp = NULL;
    ac_status s = ac_sp_parse(p.b, p.n, "small.model", &sp);
    CHECK(s == AC_OK && sp, "parse: %s", ac_last_error());
    if (!sp) {
        free(p.b);
        return;
    }
    CHECK(ac_sp_size(sp) == NPIECES, "size %d", ac_sp_size(sp));
    for (int i = 0; i < NPIECES; i++) {
        int t = piece_type(i) ? piece_type(i) : AC_SP_NORMAL;
        CHECK(strcmp(ac_sp_piece(sp, i), PIECES[i]) == 0, "piece %d", i);
        CHECK(ac_sp_type(sp, i) == t, "type of %d: %d", i, ac_sp_type(sp, i));
        CHECK(ac_sp_piece_to_id(sp, PIECES[i]) == i, "piece_to_id %d", i);
        CHECK(ac_sp_score(sp, i) == -1.5f, "score %d", i);
    }
    CHECK(ac_sp_piece(sp, -1) == NULL && ac_sp_piece(sp, NPIECES) == NULL, "piece out of range");
    CHECK(ac_sp_type(sp, NPIECES) == 0, "type out of range");
    CHECK(ac_sp_piece_to_id(sp, "nope") == -1 && ac_sp_piece_to_id(sp, "") == -1, "absent piece");
    CHECK(ac_sp_piece_to_id(sp, NULL) == -1, "NULL piece");
    const ac_sp_info *in = ac_sp_get_info(sp);
    CHECK(in->model_type == AC_SP_BPE && in->byte_fallback == 1, "trainer spec %d %d", in->model_type,
          in->byte_fallback);
    CHECK(in->add_dummy_prefix == 0 && in->remove_extra_whitespaces == 0 && in->escape_whitespaces == 0,
          "normalizer spec");
    CHECK(in->unk_id == UNK, "unk id %d", in->unk_id);

    DECODES(sp, "hello wor ld", HE, LLO, WORLD);
    DECODES(sp, "hello", BOS, HE, USER, LLO, UNK, UNUSED);
    DECODES(sp, "", BOS, USER, UNK);
    DECODES(sp, "");
    DECODES(sp, "\xC3\xA5", BC3, USER, BA5);               /* a dropped id does not split a run */
    DECODES(sp, "A\xC3\xA5 wor ld", B41, BC3, BA5, WORLD); /* no dummy prefix after bytes */
    DECODES(sp, "\xEF\xBF\xBD", BC3);
    DECODES(sp, "\xEF\xBF\xBD\xEF\xBF\xBD", BE2, B82);     /* per byte, as libsentencepiece */
    DECODES(sp, "\xEF\xBF\xBD" "A", B80, B41);
    DECODES(sp, "A he", B00, B20, B41, B00, HE, B00); /* U+0000 is dropped */
    /* Python's strip(): ASCII, NBSP, U+3000 at both ends, kept inside */
    DECODES(sp, "he\xC2\xA0llo", B20, B0A, BC2, BA0, HE, BC2, BA0, LLO, BE3, B80, B80, B0A, B20);
    const int bad_ids[] = {HE, NPIECES};
    char *text = (char *)1;
    s = ac_sp_decode(sp, bad_ids, 2, &text);
    CHECK(s == AC_ERR_ARG && text == NULL && error_has("out of range"), "bad id: %d %s", s, ac_last_error());
    s = ac_sp_decode(sp, (const int[]){-1}, 1, &text);
    CHECK(s == AC_ERR_ARG && error_has("-1"), "negative id: %s", ac_last_error());
    ac_sp_free(sp);
    ac_sp_free(NULL);

    /* the defaults when the specs are absent */
    pb q = {0};
    pb_piece(&q, "<unk>", AC_SP_UNKNOWN, 0);
    pb_piece(&q, SP "a", 0, 0);
    CHECK(ac_sp_parse(q.b, q.n, "min.model", &sp) == AC_OK, "minimal model: %s", ac_last_error());
    if (sp) {
        in = ac_sp_get_info(sp);
        CHECK(in->model_type == AC_SP_UNIGRAM && !in->byte_fallback && in->add_dummy_prefix &&
                  in->remove_extra_whitespaces && in->escape_whitespaces,
              "defaults");
        DECODES(sp, "a a", 1, 1);
        ac_sp_free(sp);
    }
    free(q.b);
    free(p.b);
}

/* ---- malformed models -------------------------------------------------- */

static void expect_bad(const pb *p, const char *needle, const char *what)
{
    ac_sp *sp = (ac_sp *)1;
    ac_status s = ac_sp_parse(p->b, p->n, "bad.model", &sp);
    CHECK(s == AC_ERR_FORMAT && sp == NULL, "%s: status %d", what, s);
    CHECK(error_has("bad.model: ") && error_has(needle), "%s: message '%s' lacks '%s'", what, ac_last_error(),
          needle);
}

/* A model of <unk> and PIECE of TYPE (0: none given); tests append more. */
static pb with_piece(const char *piece, int type)
{
    pb p = {0};
    pb_piece(&p, "<unk>", AC_SP_UNKNOWN, 0);
    pb_piece(&p, piece, type, 0);
    return p;
}

static void test_bad_models(void)
{
    pb p;
    p = with_piece("", 0), expect_bad(&p, "piece 1 has an empty string", "empty piece"), free(p.b);
    p = with_piece(NULL, 0), expect_bad(&p, "piece 1 has an empty string", "no piece string"), free(p.b);
    p = with_piece("a\xC3", 0), expect_bad(&p, "piece 1 is not valid UTF-8", "bad UTF-8"), free(p.b);
    p = with_piece("\xED\xA0\x80", 0), expect_bad(&p, "not valid UTF-8", "surrogate"), free(p.b);
    p = with_piece("\xC0\x80", 0), expect_bad(&p, "not valid UTF-8", "overlong"), free(p.b);
    p = with_piece("<0x4a>", AC_SP_BYTE), expect_bad(&p, "not of the form <0xNN>", "lower-case byte"), free(p.b);
    p = with_piece("<0x4G>", AC_SP_BYTE), expect_bad(&p, "not of the form <0xNN>", "bad hex"), free(p.b);
    p = with_piece("<0x4>", AC_SP_BYTE), expect_bad(&p, "not of the form <0xNN>", "short byte"), free(p.b);
    p = with_piece("a", 7), expect_bad(&p, "unknown type 7", "type 7"), free(p.b);
    p = with_piece("a", -1), expect_bad(&p, "unknown type", "type -1"), free(p.b);
    p = with_piece("<unk>", 0), expect_bad(&p, "appears twice (ids 0 and 1)", "duplicate"), free(p.b);
    p = with_piece("<u>", AC_SP_UNKNOWN), expect_bad(&p, "two UNKNOWN pieces", "two unk"), free(p.b);

    p = (pb){0};
    pb_piece(&p, "a", 0, 0);
    expect_bad(&p, "no UNKNOWN piece", "no unk");
    free(p.b);
    p = with_piece("a", 0);
    pb m = {0};
    pb_bytes(&m, 1, "b\0c", 3);
    pb_msg(&p, 1, &m);
    expect_bad(&p, "piece 2 is not valid UTF-8 (NUL", "NUL in piece");
    free(p.b);

    p = with_piece("a", 0);
    pb_tag(&p, 7, 6);
    expect_bad(&p, "field 7 has wire type 6", "wire type 6");
    free(p.b);
    p = with_piece("a", 0);
    pb_tag(&p, 7, 4);
    expect_bad(&p, "field 7 has wire type 4 (end of group) outside a group", "stray end group");
    free(p.b);
    p = with_piece("a", 0);
    pb_tag(&p, 7, 3);
    pb_tag(&p, 8, 4);
    expect_bad(&p, "group 7 is closed as group 8", "mismatched group");
    free(p.b);
    p = with_piece("a", 0);
    pb_tag(&p, 7, 3);
    pb_uint(&p, 1, 1);
    expect_bad(&p, "group 7 has no end", "open group");
    free(p.b);
    p = with_piece("a", 0);
    for (int i = 0; i < 100000; i++) pb_tag(&p, 7, 3);
    expect_bad(&p, "nested more than", "deep groups");
    free(p.b);
    p = with_piece("a", 0);
    pb_raw(&p, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11);
    expect_bad(&p, "varint longer than 64 bits", "long varint");
    free(p.b);
    p = with_piece("a", 0);
    pb_raw(&p, "\x08\xff", 2);
    expect_bad(&p, "truncated varint", "truncated varint");
    free(p.b);
    p = with_piece("a", 0);
    pb_tag(&p, 9, 2);
    pb_varint(&p, UINT64_MAX);
    expect_bad(&p, "field 9 claims 18446744073709551615 bytes", "huge length");
    free(p.b);
    p = with_piece("a", 0);
    pb_fixed(&p, 9, 0, 8);
    p.n -= 3;
    expect_bad(&p, "truncated 8-byte value", "truncated fixed64");
    free(p.b);
    p = with_piece("a", 0);
    pb_raw(&p, "\x00", 1);
    expect_bad(&p, "invalid field tag 0", "field 0");
    free(p.b);
    p = with_piece("a", 0);
    pb_tag(&p, 1, 0);
    pb_varint(&p, 3);
    expect_bad(&p, "piece (field 1) has wire type 0, expected 2", "pieces as varint");
    free(p.b);

    /* wrong wire types inside the messages */
    p = (pb){0};
    pb_bytes(&m, 1, "<unk>", 5);
    pb_uint(&m, 2, 0);
    pb_msg(&p, 1, &m);
    expect_bad(&p, "piece score (field 2) has wire type 0, expected 5", "score as varint");
    free(p.b);
    p = with_piece("a", 0);
    pb_uint(&m, 3, 9);
    pb_msg(&p, 2, &m);
    CHECK(ac_sp_parse(p.b, p.n, "bad.model", &(ac_sp *){0}) == AC_ERR_FORMAT && error_has("unknown model_type 9"),
          "model_type 9: %s", ac_last_error());
    free(p.b);
    p = with_piece("a", 0);
    pb_fixed(&m, 3, 1, 4);
    pb_msg(&p, 3, &m);
    expect_bad(&p, "normalizer_spec flag (field 3) has wire type 5", "flag as fixed32");
    free(p.b);
    p = with_piece("a", 0);
    pb_uint(&p, 2, 1);
    expect_bad(&p, "trainer_spec (field 2) has wire type 0", "trainer spec as varint");
    free(p.b);

    /* no pieces at all; too many pieces */
    p = (pb){0};
    pb_junk(&p);
    expect_bad(&p, "not a SentencePiece model (no pieces)", "no pieces");
    free(p.b);
    p = (pb){0};
    for (int i = 0; i <= AC_SP_MAX_PIECES; i++) pb_raw(&p, "\x0a\x03\x0a\x01" "a", 5);
    expect_bad(&p, "more than 1000000 pieces", "too many pieces");
    free(p.b);
    p = with_piece("a", 0);
    char *big = malloc(AC_SP_MAX_PIECE_LEN + 1);
    memset(big, 'a', AC_SP_MAX_PIECE_LEN + 1);
    pb_bytes(&m, 1, big, AC_SP_MAX_PIECE_LEN + 1);
    pb_msg(&p, 1, &m);
    expect_bad(&p, "piece 2 is 65536 bytes long", "long piece");
    free(big);
    free(p.b);

    ac_sp *sp = (ac_sp *)1;
    CHECK(ac_sp_parse(NULL, 0, "empty.model", &sp) == AC_ERR_FORMAT && !sp && error_has("empty.model: empty"),
          "empty buffer: %s", ac_last_error());
    CHECK(ac_sp_parse("x", 1, "x", NULL) == AC_ERR_ARG, "no out pointer");
}

/* ---- the real Cohere tokenizer ----------------------------------------- */

static const char *real_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/cohere_asr_base/tokenizer.model", test_data_dir);
    return access(path, R_OK) == 0 ? path : NULL;
}

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)size + 1);
    *n = fread(b, 1, (size_t)size, f);
    fclose(f);
    return b;
}

static void test_real_model(void)
{
    const char *path = real_path();
    if (!path) {
        fprintf(stderr, "skip: no %s/cohere_asr_base/tokenizer.model\n", test_data_dir);
        return;
    }
    ac_sp *sp = NULL;
    ac_status s = ac_sp_load(path, &sp);
    CHECK(s == AC_OK && sp, "load: %s", ac_last_error());
    if (!sp) return;
    CHECK(ac_sp_size(sp) == 16384, "size %d", ac_sp_size(sp));
    const ac_sp_info *in = ac_sp_get_info(sp);
    CHECK(in->model_type == AC_SP_BPE && in->byte_fallback && in->add_dummy_prefix &&
              !in->remove_extra_whitespaces && in->unk_id == 0,
          "specs: type %d fallback %d prefix %d rew %d unk %d", in->model_type, in->byte_fallback,
          in->add_dummy_prefix, in->remove_extra_whitespaces, in->unk_id);
    static const struct {
        int id;
        const char *piece;
        int type;
    } known[] = {{0, "<unk>", AC_SP_UNKNOWN},
                 {1, "<|nospeech|>", AC_SP_USER_DEFINED},
                 {3, "<|endoftext|>", AC_SP_USER_DEFINED},
                 {7, "<|startofcontext|>", AC_SP_USER_DEFINED},
                 {58, "<|da|>", AC_SP_USER_DEFINED},
                 {62, "<|en|>", AC_SP_USER_DEFINED},
                 {255, "<0x00>", AC_SP_BYTE},
                 {510, "<0xFF>", AC_SP_BYTE},
                 {13764, SP, AC_SP_NORMAL}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        const char *p = ac_sp_piece(sp, known[i].id);
        CHECK(p && strcmp(p, known[i].piece) == 0, "piece %d is '%s'", known[i].id, p ? p : "(null)");
        CHECK(ac_sp_type(sp, known[i].id) == known[i].type, "type of %d", known[i].id);
        CHECK(ac_sp_piece_to_id(sp, known[i].piece) == known[i].id, "id of %s", known[i].piece);
    }
    int counts[7] = {0}, roundtrip = 1;
    for (int id = 0; id < ac_sp_size(sp); id++) {
        counts[ac_sp_type(sp, id)]++;
        roundtrip &= ac_sp_piece_to_id(sp, ac_sp_piece(sp, id)) == id;
    }
    CHECK(roundtrip, "piece_to_id(piece(id)) != id for some id");
    CHECK(counts[AC_SP_UNKNOWN] == 1 && counts[AC_SP_USER_DEFINED] == 254 && counts[AC_SP_BYTE] == 256 &&
              counts[AC_SP_NORMAL] == 16384 - 511,
          "type counts %d %d %d %d", counts[1], counts[2], counts[4], counts[6]);

    DECODES(sp, "Hej med dig, hvordan g\xC3\xA5r det?", 1247, 13794, 1574, 2577, 13784, 532, 13787, 853, 526, 549,
            450, 420, 13772, 3491, 13819);
    DECODES(sp, "Hej med dig, hvordan g\xC3\xA5r det?", 13764, 7, 4, 16, 58, 58, 5, 9, 11, 13, 1247, 13794, 1574,
            2577, 13784, 532, 13787, 853, 526, 549, 450, 420, 13772, 3491, 13819, 3);
    DECODES(sp, "\xEF\xBF\xBD", 450);
    DECODES(sp, "", 0, 1, 2, 3, 7, 58, 62, 254, 13764);
    ac_sp_free(sp);
}

/* ---- broken files ------------------------------------------------------ */

static void load_bad(const char *name, const void *data, size_t n, ac_status want, const char *needle)
{
    const char *path = work_path(name);
    CHECK(write_file(path, data, n) == 0, "cannot write %s", path);
    ac_sp *sp = (ac_sp *)1;
    ac_status s = ac_sp_load(path, &sp);
    CHECK(s == want && sp == NULL, "%s: status %d (%s)", name, s, ac_last_error());
    CHECK(error_has(path) && error_has(needle), "%s: message '%s' lacks '%s'", name, ac_last_error(), needle);
}

static void test_bad_files(void)
{
    load_bad("sp_empty.model", "", 0, AC_ERR_FORMAT, "empty");
    const char text[] = "{\n  \"this\": \"is a JSON file, not a model\"\n}\n";
    load_bad("sp_text.model", text, sizeof text - 1, AC_ERR_FORMAT, "not a SentencePiece model");
    const char text2[] = "hello world\n";
    load_bad("sp_text2.model", text2, sizeof text2 - 1, AC_ERR_FORMAT, "not a SentencePiece model");
    uint8_t rnd[4096];
    uint32_t seed = 99;
    for (int k = 0; k < 20; k++) {
        size_t n = 1 + (size_t)k * 200;
        for (size_t i = 0; i < n; i++) rnd[i] = (uint8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
        char name[64];
        snprintf(name, sizeof name, "sp_random%d.model", k);
        load_bad(name, rnd, n, AC_ERR_FORMAT, ""); /* which check fires depends on the bytes */
    }
    ac_sp *sp = (ac_sp *)1;
    CHECK(ac_sp_load(work_path("sp_missing.model"), &sp) == AC_ERR_IO && !sp && error_has("cannot open"),
          "missing file: %s", ac_last_error());
    CHECK(ac_sp_load(test_work_dir, &sp) == AC_ERR_IO && error_has("not a regular file"), "folder: %s",
          ac_last_error());

    const char *path = real_path();
    if (!path) return;
    size_t n;
    uint8_t *real = read_all(path, &n);
    CHECK(real != NULL, "cannot read %s", path);
    if (!real) return;
    /* cut inside the first piece, in the middle, inside the specs at the end */
    const size_t cuts[] = {1, 2, 5, 17, 1000, n / 2, n - 4000, n - 300, n - 100, n - 20, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char name[64];
        snprintf(name, sizeof name, "sp_cut%zu.model", cuts[i]);
        load_bad(name, real, cuts[i], AC_ERR_FORMAT, "truncated");
    }
    /* every cut fails, or (at a field boundary, which protobuf cannot
     * tell from the end) gives a smaller model that still holds <unk> */
    for (size_t cut = 0; cut < n; cut += 97) {
        ac_sp *q = NULL;
        ac_status st = ac_sp_parse(real, cut, "cut", &q);
        CHECK(st == AC_OK ? q && ac_sp_size(q) > 0 : !q && error_has("cut: "), "cut at %zu: %s", cut,
              ac_last_error());
        ac_sp_free(q);
    }
    free(real);
}

/* ---- libsentencepiece as the oracle ------------------------------------ */

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    if (strcmp(h, "-") == 0) return 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1) break;
        out[n++] = (uint8_t)v;
    }
    return n;
}

static const char *oracle_script(void) { return AUDIOC_SOURCE_DIR "/tests/ref/sp_oracle.py"; }

static void test_oracle(void)
{
    const char *model = real_path();
    if (!model) return; /* said above */
    if (access("/usr/bin/python3", X_OK) != 0) {
        fprintf(stderr, "skip: no /usr/bin/python3 for the SentencePiece oracle\n");
        return;
    }
    const char *script = oracle_script();
    CHECK(script && access(script, R_OK) == 0, "oracle script not found from %s", __FILE__);
    if (!script || access(script, R_OK) != 0) return;
    ac_sp *sp = NULL;
    CHECK(ac_sp_load(model, &sp) == AC_OK, "load: %s", ac_last_error());
    if (!sp) return;
    char cmd[8192];
    /* SP_ORACLE_N=100000 for a longer run by hand */
    const char *n_env = getenv("SP_ORACLE_N");
    int n_random = n_env ? atoi(n_env) : 300;
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' %d", script, model, n_random);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL, "cannot run %s", cmd);
    if (!f) {
        ac_sp_free(sp);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    int n_pieces = 0, n_cases = 0, bad_pieces = 0, bad_cases = 0;
    int *ids = malloc(4096 * sizeof *ids);
    size_t n_ids = 0;
    uint8_t *want = malloc(1 << 16);
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'P') {
            int id, type;
            char hex[1024];
            if (sscanf(line, "P %d %1023s %d", &id, hex, &type) != 3) continue;
            size_t k = unhex(hex, want);
            const char *p = ac_sp_piece(sp, id);
            n_pieces++;
            if ((!p || strlen(p) != k || memcmp(p, want, k) != 0 || ac_sp_type(sp, id) != type) && bad_pieces++ < 5)
                CHECK(0, "piece %d: '%s' type %d, oracle type %d", id, p ? p : "(null)", ac_sp_type(sp, id), type);
        } else if (line[0] == 'D') {
            char *s = line + 2, *end;
            long cnt = strtol(s, &end, 10);
            n_ids = 0;
            for (s = end; n_ids < (size_t)cnt && n_ids < 4096; s = end) ids[n_ids++] = (int)strtol(s, &end, 10);
        } else if (line[0] == 'T') {
            size_t k = unhex(line + 2, want);
            char *text = NULL;
            ac_status st = ac_sp_decode(sp, ids, n_ids, &text);
            n_cases++;
            if ((st != AC_OK || strlen(text) != k || memcmp(text, want, k) != 0) && bad_cases++ < 5) {
                char idl[256] = "";
                for (size_t i = 0, o = 0; i < n_ids && o < sizeof idl - 8; i++)
                    o += (size_t)snprintf(idl + o, sizeof idl - o, "%d ", ids[i]);
                CHECK(0, "case %d [%s]: got '%s', oracle '%.*s'", n_cases, idl, text ? text : ac_last_error(), (int)k,
                      (const char *)want);
            }
            free(text);
        }
    }
    int rc = pclose(f);
    int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    if (code == 77) {
        fprintf(stderr, "skip: python3-sentencepiece is not installed (oracle)\n");
    } else {
        CHECK(code == 0, "oracle exited with %d", code);
        CHECK(n_pieces == ac_sp_size(sp), "oracle listed %d pieces", n_pieces);
        CHECK(n_cases >= n_random, "oracle gave %d cases", n_cases);
        CHECK(bad_pieces == 0 && bad_cases == 0, "%d pieces and %d of %d decodes differ from libsentencepiece",
              bad_pieces, bad_cases, n_cases);
        fprintf(stderr, "oracle: %d pieces, %d decodes compared\n", n_pieces, n_cases);
    }
    free(line);
    free(ids);
    free(want);
    ac_sp_free(sp);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_small_model);
    RUN(test_bad_models);
    RUN(test_real_model);
    RUN(test_bad_files);
    RUN(test_oracle);
    return test_finish();
}
