/* src/text/bpe and its pieces: the GPT-2 byte alphabet, the Qwen2
 * pre-tokenizer on tricky cases, merges on hand-built tokenizer.json files
 * (rank order, ties, added tokens), decoding of broken UTF-8, the errors of
 * bad files and text, and the real Qwen2.5 files when present. The parity
 * with Hugging Face tokenizers is tests/cli/test_tokenize.py. And
 * src/text/chunk: long text cut at sentences, clauses, words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "test_util.h"
#include "text/bpe.h"
#include "text/chunk.h"
#include "text/qwen2_split.h"
#include "text/utf8.h"

#define QWEN2_REGEX                                                                                               \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|" \
    "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
#define PRE                                                                                                  \
    "\"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": ["  \
    "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" QWEN2_REGEX "\"}, \"behavior\": \"Isolated\", "     \
    "\"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]}"

static void test_byte_alphabet(void)
{
    CHECK(ac_byte_to_char(' ') == 0x120, "' ' is Ġ");
    CHECK(ac_byte_to_char('\n') == 0x10A, "'\\n' is Ċ");
    CHECK(ac_byte_to_char(0) == 0x100 && ac_byte_to_char(0xAD) == 0x143, "0 and 0xAD");
    CHECK(ac_byte_to_char('a') == 'a' && ac_byte_to_char(0xE9) == 0xE9, "printable bytes keep their value");
    int seen[0x144] = {0}, ok = 1;
    for (int b = 0; b < 256; b++) {
        uint32_t c = ac_byte_to_char((uint8_t)b);
        ok &= c < 0x144 && !seen[c] && ac_char_to_byte(c) == b;
        if (c < 0x144) seen[c] = 1;
    }
    CHECK(ok, "a bijection of the 256 bytes");
    CHECK(ac_char_to_byte(' ') == -1 && ac_char_to_byte(0x144) == -1 && ac_char_to_byte(0x4E00) == -1,
          "other characters have no byte");
}

/* The pieces of TEXT joined by '|'. */
static void split(const char *text, char *out)
{
    size_t n = strlen(text), o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = ac_qwen2_piece(text + i, n - i);
        if (k == 0 || k > n - i) {
            strcpy(out, "<stuck>");
            return;
        }
        if (i) out[o++] = '|';
        memcpy(out + o, text + i, k);
        o += k, i += k;
    }
    out[o] = 0;
}

static void test_split(void)
{
    static const char *const cases[][2] = {
        {"Hello world", "Hello| world"},
        {"it's I'LL we'Re 'sup", "it|'s| I|'LL| we|'Re| '|sup"},
        {"'", "'"},
        {"x'\xC5\xBF", "x|'\xC5\xBF"}, /* 'ſ folds to 's */
        {"abc123", "abc|1|2|3"},
        {" 42", " |4|2"},
        {"a  b", "a| | b"},
        {"a   \n\n  b", "a|   \n\n| | b"},
        {"end   ", "end|   "},
        {"x \r\n y", "x| \r\n| y"},
        {"\tif", "\tif"},
        {"\nif", "\n|if"},
        {"...!!\n\nnext", "...!!\n\n|next"},
        {" ...x", " ...|x"},
        {"  ...", " | ..."},
        {"$5", "$|5"},
        {"\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C", "\xE4\xBD\xA0\xE5\xA5\xBD|\xEF\xBC\x8C"}, /* 你好， */
        {"a\xC2\xA0" "b", "a|\xC2\xA0" "b"},            /* no-break space is \s and not \p{L} */
        {"a\xE2\x80\x8B" "b", "a|\xE2\x80\x8B" "b"},    /* U+200B is not white space */
        {"x\xC2\x85y", "x|\xC2\x85y"},                  /* U+0085 is white space */
        {"  \xC2\x85", "  \xC2\x85"},
        {"\xF0\x9F\x98\x80\xF0\x9F\x98\x83 ok", "\xF0\x9F\x98\x80\xF0\x9F\x98\x83| ok"},
    };
    char got[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        split(cases[i][0], got);
        CHECK(strcmp(got, cases[i][1]) == 0, "'%s' splits as '%s', expected '%s'", cases[i][0], got, cases[i][1]);
    }
}

/* A tokenizer.json with the 256 byte symbols (ids 0..255 in byte order),
 * then EXTRA_VOCAB, the merges and the added tokens (JSON fragments). */
static ac_bpe *tiny(const char *extra_vocab, const char *merges, const char *added, const char *model_extra)
{
    size_t cap = 1 << 16, o = 0;
    char *j = malloc(cap);
    o += (size_t)snprintf(j + o, cap - o, "{\"added_tokens\": [%s], " PRE ", \"model\": {\"type\": \"BPE\"%s, \"vocab\": {",
                          added, model_extra);
    for (int b = 0; b < 256; b++) {
        uint32_t c = ac_byte_to_char((uint8_t)b);
        char u[5] = {0};
        ac_utf8_put(c, u);
        o += (size_t)snprintf(j + o, cap - o, "%s\"%s%s\": %d", b ? ", " : "", c == '"' || c == '\\' ? "\\" : "", u, b);
    }
    o += (size_t)snprintf(j + o, cap - o, "%s%s}, \"merges\": [%s]}}", *extra_vocab ? ", " : "", extra_vocab, merges);
    ac_bpe *b = NULL;
    ac_status st = ac_bpe_parse_json(j, o, "tiny.json", &b);
    CHECK(st == AC_OK, "tiny tokenizer loads: %s", ac_last_error());
    free(j);
    return b;
}

/* The ids of TEXT as "1 2 3". */
static const char *ids_of(const ac_bpe *b, const char *text)
{
    static char out[1024];
    int *ids;
    size_t n, o = 0;
    if (ac_bpe_encode(b, text, strlen(text), &ids, &n) != AC_OK) return ac_last_error();
    out[0] = 0;
    for (size_t i = 0; i < n && o < sizeof out - 16; i++) o += (size_t)sprintf(out + o, i ? " %d" : "%d", ids[i]);
    free(ids);
    return out;
}

static void test_merges(void)
{
    /* ab 256, bc 257, abc 258 (ab + c), aa 259 */
    ac_bpe *b = tiny("\"ab\": 256, \"bc\": 257, \"abc\": 258, \"aa\": 259", "\"a b\", \"b c\", \"ab c\", [\"a\", \"a\"]",
                     "", "");
    if (!b) return;
    const char *got;
    CHECK(strcmp(got = ids_of(b, "abc"), "258") == 0, "abc: lowest rank first (ab, then ab+c): %s", got);
    CHECK(strcmp(got = ids_of(b, "bca"), "257 97") == 0, "bca: %s", got);
    CHECK(strcmp(got = ids_of(b, "aaa"), "259 97") == 0, "aaa: the leftmost of equal ranks: %s", got);
    CHECK(strcmp(got = ids_of(b, "aaaa"), "259 259") == 0, "aaaa: %s", got);
    CHECK(strcmp(got = ids_of(b, " ab"), "32 256") == 0, "a space is its own symbol here (no merge): %s", got);
    CHECK(strcmp(got = ids_of(b, "ab ab"), "256 32 256") == 0, "a cached word: %s", got);
    CHECK(strcmp(got = ids_of(b, ""), "") == 0, "no text, no ids");
    CHECK(ac_bpe_size(b) == 260 && ac_bpe_token_to_id(b, "abc") == 258 && !ac_bpe_token(b, 260), "lookups");
    ac_bpe_free(b);

    /* a repeated merge takes its last rank (HF's merge map), so bc comes first */
    b = tiny("\"ab\": 256, \"bc\": 257", "\"a b\", \"b c\", \"a b\"", "", "");
    if (!b) return;
    CHECK(strcmp(got = ids_of(b, "abc"), "97 257") == 0, "a repeated merge: %s", got);
    ac_bpe_free(b);

    /* ignore_merges: a word that is a vocabulary entry is taken whole */
    b = tiny("\"ab\": 256, \"bc\": 257, \"abc\": 258", "\"b c\"", "", ", \"ignore_merges\": true");
    if (!b) return;
    CHECK(strcmp(got = ids_of(b, "abc"), "258") == 0, "ignore_merges: %s", got);
    CHECK(strcmp(got = ids_of(b, "abcd"), "97 257 100") == 0, "ignore_merges, not whole: %s", got);
    ac_bpe_free(b);
}

static void test_added(void)
{
    ac_bpe *b = tiny("", "",
                     "{\"id\": 300, \"content\": \"<|a|>\", \"special\": true, \"normalized\": false}, "
                     "{\"id\": 301, \"content\": \"<|a|><|b|>\", \"special\": true, \"normalized\": false}, "
                     "{\"id\": 302, \"content\": \"<|b|>\", \"special\": false, \"normalized\": false}, "
                     "{\"id\": 303, \"content\": \"\\u00e9\", \"special\": false, \"normalized\": true}, "
                     "{\"id\": 304, \"content\": \"A\\u030a\", \"special\": false, \"normalized\": true}",
                     "");
    if (!b) return;
    const char *got;
    CHECK(strcmp(got = ids_of(b, "x<|a|><|b|>y"), "120 301 121") == 0, "the longest match: %s", got);
    CHECK(strcmp(got = ids_of(b, "<|a|> <|b|>"), "300 32 302") == 0, "spaces around kept: %s", got);
    CHECK(strcmp(got = ids_of(b, "<|a|"), "60 124 97 124") == 0, "a cut token is text: %s", got);
    /* e + U+0301 is é after NFC: the normalized token matches it */
    CHECK(strcmp(got = ids_of(b, "e\xCC\x81"), "303") == 0, "normalized token after NFC: %s", got);
    /* ... and its own content is normalized too: A + U+030A is Å */
    CHECK(strcmp(got = ids_of(b, "\xC3\x85"), "304") == 0 && strcmp(ids_of(b, "A\xCC\x8A"), "304") == 0,
          "a normalized token in NFC: %s", got);
    CHECK(ac_bpe_is_special(b, 300) && !ac_bpe_is_special(b, 302) && !ac_bpe_is_special(b, 97), "special flags");
    CHECK(ac_bpe_token_to_id(b, "<|b|>") == 302 && ac_bpe_size(b) == 305, "added lookups");
    int ids[] = {104, 300, 105, 302};
    char *text;
    size_t len;
    CHECK(ac_bpe_decode(b, ids, 4, 1, &text, &len) == AC_OK && strcmp(text, "h<|a|>i<|b|>") == 0 && len == 12,
          "decode, specials kept");
    free(text);
    CHECK(ac_bpe_decode(b, ids, 4, 0, &text, NULL) == AC_OK && strcmp(text, "hi<|b|>") == 0, "decode, specials dropped");
    free(text);
    ac_bpe_free(b);
}

static void test_decode_bytes(void)
{
    ac_bpe *b = tiny("", "", "", "");
    if (!b) return;
    static const struct {
        int ids[4];
        size_t n;
        const char *want;
        size_t want_len;
    } cases[] = {
        {{0xE2, 0x82, 0xAC}, 3, "\xE2\x82\xAC", 3},                       /* € */
        {{0xE2, 0x82, 'x'}, 3, "\xEF\xBF\xBDx", 4},                      /* a cut character: one U+FFFD */
        {{0xED, 0xA0, 0x80}, 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 9}, /* a surrogate: three */
        {{0xF0, 0x9F, 0x98}, 3, "\xEF\xBF\xBD", 3},
        {{0xFF, 'a'}, 2, "\xEF\xBF\xBD" "a", 4},
        {{'a', 0, 'b'}, 3, "a\0b", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text;
        size_t len;
        ac_status st = ac_bpe_decode(b, cases[i].ids, cases[i].n, 1, &text, &len);
        CHECK(st == AC_OK && len == cases[i].want_len && memcmp(text, cases[i].want, len) == 0, "decode case %zu", i);
        free(text);
    }
    int bad = 256;
    char *text;
    CHECK(ac_bpe_decode(b, &bad, 1, 1, &text, NULL) == AC_ERR_ARG && !text && error_has("id 256"), "unknown id");
    int *ids;
    size_t n;
    CHECK(ac_bpe_encode(b, "ok\xC3(", 4, &ids, &n) == AC_ERR_ARG && !ids && error_has("not valid UTF-8 (byte 2)"),
          "invalid text: %s", ac_last_error());
    CHECK(ac_bpe_encode(b, "\xED\xA0\x80", 3, &ids, &n) == AC_ERR_ARG, "a surrogate in the text");
    ac_bpe_free(b);
}

static void test_bad_files(void)
{
    static const char *const cases[][2] = {
        {"", "empty"},
        {"[1]", "not a JSON object"},
        {"{\"model\": ", "not valid JSON"},
        {"{\"added_tokens\": []}", "no \"model\""},
        {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", "not BPE"},
        {"{\"model\": {\"vocab\": {\"a\": 0}}}", "no Qwen2 pre-tokenizer"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a c\"]}}", "'c' which is not in"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}", "makes 'ab' which is not"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"ab\"]}}", "not two symbols"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0, \"b\": 0}}}", "id 0 belongs to two"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": -1}}}", "outside 0.."},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 1.5}}}", "no integer id"},
        {"{" PRE ", \"model\": {\"vocab\": {}}}", "vocabulary is empty"},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0}}, \"added_tokens\": [{\"id\": 1}]}", "no \"content\""},
        {"{" PRE ", \"model\": {\"vocab\": {\"a\": 0}}, \"added_tokens\": [{\"id\": 1, \"content\": \"x\"}, "
         "{\"id\": 2, \"content\": \"x\"}]}",
         "'x' appears twice"},
        {"{\"normalizer\": {\"type\": \"NFKC\"}, \"model\": {\"vocab\": {\"a\": 0}}}", "normalizer NFKC"},
        {"{\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"use_regex\": true}, \"model\": {\"vocab\": {\"a\": 0}}}",
         "pre-tokenizer ByteLevel is not supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ac_bpe *b = (ac_bpe *)1;
        ac_status st = ac_bpe_parse_json(cases[i][0], strlen(cases[i][0]), "bad.json", &b);
        CHECK(st != AC_OK && !b && error_has("bad.json") && error_has(cases[i][1]), "case %zu: %s", i,
              ac_last_error());
    }
    ac_bpe *b;
    CHECK(ac_bpe_load_dir(test_work_dir, &b) == AC_ERR_IO && error_has("no tokenizer here"), "a folder without one");
    CHECK(ac_bpe_load_json("/nonexistent/tokenizer.json", &b) == AC_ERR_IO && error_has("/nonexistent"), "no file");
}

static void test_real(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/qwen2.5_tokenizer", test_data_dir);
    ac_bpe *b;
    if (ac_bpe_load_dir(dir, &b) != AC_OK) {
        fprintf(stderr, "(no Qwen2.5 tokenizer in %s: %s)\n", dir, ac_last_error());
        return;
    }
    const char *got;
    CHECK(ac_bpe_size(b) == 151665, "151665 ids");
    CHECK(ac_bpe_token_to_id(b, "<|endoftext|>") == 151643 && ac_bpe_token_to_id(b, "<|im_end|>") == 151645,
          "the specials by string");
    CHECK(ac_bpe_is_special(b, 151644) && !ac_bpe_is_special(b, 9707), "special flags");
    CHECK(strcmp(got = ids_of(b, "Hello world"), "9707 1879") == 0, "Hello world: %s", got);
    CHECK(strcmp(got = ids_of(b, "<|im_start|>system\n"), "151644 8948 198") == 0, "chat header: %s", got);
    ac_bpe_free(b);
}

/* Whether TEXT cut into pieces of MAX units gives the N pieces WANT. */
static int chunks_are(const char *text, int max, const char *const *want, int n)
{
    ac_text_chunks c;
    if (ac_text_chunk(text, max, &c)) return 0;
    int ok = c.n == n;
    for (int i = 0; ok && i < n; i++) ok = strcmp(c.text[i], want[i]) == 0;
    if (!ok)
        for (int i = 0; i < c.n; i++) fprintf(stderr, "  piece %d: '%s'\n", i, c.text[i]);
    ac_text_chunks_free(&c);
    return ok;
}

static void test_chunks(void)
{
    static const char *const one[] = {"Hello there, world."};
    CHECK(chunks_are("  Hello there, world.  ", 10, one, 1), "short text is one piece, trimmed");
    static const char *const sentences[] = {"One two three.", "Four five six seven?", "Eight nine ten eleven!"};
    CHECK(chunks_are("One two three. Four five six seven? Eight nine ten eleven!", 5, sentences, 3),
          "after sentences");
    static const char *const clauses[] = {"one two three four,", "five six seven eight"};
    CHECK(chunks_are("one two three four, five six seven eight", 6, clauses, 2), "after a clause");
    static const char *const words[] = {"a b c", "d e f", "g"};
    CHECK(chunks_are("a b c d e f g", 3, words, 3), "between words when nothing else");
    /* a break in the window's first third makes a sliver: the latest word break is taken instead */
    static const char *const sliver[] = {"A. b c d e", "f g h"};
    CHECK(chunks_are("A. b c d e f g h", 5, sliver, 2), "no sliver before a late word break");
    static const char *const cjk[] = {"\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82", "\xe4\xb8\x96\xe7\x95\x8c"};
    CHECK(chunks_are("\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82\xe4\xb8\x96\xe7\x95\x8c", 2, cjk, 2),
          "CJK: a unit per character, the full stop ends a sentence");
    static const char *const quoted[] = {"He said \"stop.\"", "Then he left."};
    CHECK(chunks_are("He said \"stop.\" Then he left.", 4, quoted, 2), "closing quotes stay with the sentence");
    static const char *const number[] = {"Pi is 3.14 or so"};
    CHECK(chunks_are("Pi is 3.14 or so", 5, number, 1), "a decimal point inside a word is no break");
    ac_text_chunks c;
    CHECK(ac_text_chunk("... !? --", 10, &c) == AC_ERR_ARG && strstr(ac_last_error(), "no letter or digit"),
          "only punctuation: nothing to say");
    CHECK(ac_text_chunk("", 10, &c) == AC_ERR_ARG, "empty text");
    CHECK(ac_text_chunk("ok \xff", 10, &c) == AC_ERR_ARG && strstr(ac_last_error(), "UTF-8"), "invalid UTF-8");
    CHECK(ac_text_chunk("ok", 0, &c) == AC_ERR_ARG, "pieces of no units");
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_byte_alphabet);
    RUN(test_chunks);
    RUN(test_split);
    RUN(test_merges);
    RUN(test_added);
    RUN(test_decode_bytes);
    RUN(test_bad_files);
    RUN(test_real);
    return test_finish();
}
