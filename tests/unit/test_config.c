/* src/io/config: typed getters on a good config, and errors that name the
 * file and the key. */
#include <stdio.h>
#include <string.h>

#include "audioc.h"
#include "base/error.h"
#include "io/config.h"
#include "models/vevo2/coco.h"
#include "test_util.h"

static const char GOOD[] =
    "{\"n\": 5, \"neg\": -3, \"max\": 2147483647, \"min\": -2147483648, \"d\": 0.25,\n"
    " \"t\": true, \"f\": false, \"s\": \"hello\", \"nul\": null, \"arr\": [1, 2, 3], \"none\": [],\n"
    " \"obj\": {\"k\": 7, \"name\": \"x\"}, \"frac\": 1.5, \"huge\": 1e12, \"over\": 2147483648,\n"
    " \"str_num\": \"5\", \"exp\": 3e2}";

static ac_config *load_good(void)
{
    const char *path = work_path("cfg.json");
    CHECK(write_file(path, GOOD, strlen(GOOD)) == 0, "write %s", path);
    ac_config *c = NULL;
    ac_status s = ac_config_load(path, &c);
    CHECK(s == AC_OK && c, "load: %s", ac_last_error());
    return c;
}

static void test_getters(void)
{
    ac_config *c = load_good();
    if (!c) return;
    CHECK(strcmp(c->file, "cfg.json") == 0, "short name %s", c->file);
    int i = 0;
    CHECK(ac_config_int(c, NULL, NULL, "n", &i) == AC_OK && i == 5, "n = %d", i);
    CHECK(ac_config_int(c, NULL, NULL, "neg", &i) == AC_OK && i == -3, "neg = %d", i);
    CHECK(ac_config_int(c, NULL, NULL, "max", &i) == AC_OK && i == 2147483647, "max = %d", i);
    CHECK(ac_config_int(c, NULL, NULL, "min", &i) == AC_OK && i == -2147483647 - 1, "min = %d", i);
    CHECK(ac_config_int(c, NULL, NULL, "exp", &i) == AC_OK && i == 300, "3e2 is the integer 300: %d", i);
    CHECK(ac_config_int_opt(c, NULL, NULL, "absent", 42, &i) == AC_OK && i == 42, "int_opt default %d", i);
    CHECK(ac_config_int_opt(c, NULL, NULL, "n", 42, &i) == AC_OK && i == 5, "int_opt present %d", i);
    double d = 0;
    CHECK(ac_config_double(c, NULL, NULL, "d", &d) == AC_OK && d == 0.25, "d = %g", d);
    CHECK(ac_config_double(c, NULL, NULL, "n", &d) == AC_OK && d == 5.0, "an integer is a double too");
    int b = -1;
    CHECK(ac_config_bool(c, NULL, NULL, "t", &b) == AC_OK && b == 1, "t = %d", b);
    CHECK(ac_config_bool(c, NULL, NULL, "f", &b) == AC_OK && b == 0, "f = %d", b);
    const char *str = NULL;
    CHECK(ac_config_string(c, NULL, NULL, "s", &str) == AC_OK && str && strcmp(str, "hello") == 0, "s");
    str = "unchanged";
    CHECK(ac_config_string(c, NULL, NULL, "nul", &str) == AC_OK && str == NULL, "null string gives NULL");
    const cJSON *arr = NULL;
    CHECK(ac_config_array(c, NULL, NULL, "arr", &arr) == AC_OK && cJSON_GetArraySize(arr) == 3 &&
              cJSON_GetArrayItem(arr, 2)->valuedouble == 3,
          "arr");
    CHECK(ac_config_array(c, NULL, NULL, "none", &arr) == AC_OK && cJSON_GetArraySize(arr) == 0, "empty array");
    /* getters on a nested object */
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(c->root, "obj");
    CHECK(ac_config_int(c, obj, "obj", "k", &i) == AC_OK && i == 7, "obj.k = %d", i);
    CHECK(ac_config_string(c, obj, "obj", "name", &str) == AC_OK && str && strcmp(str, "x") == 0, "obj.name");
    CHECK(ac_config_int_opt(c, obj, "obj", "n", -1, &i) == AC_OK && i == -1, "int_opt looks in obj, not root");
    /* an unknown-key warning must not disturb anything */
    static const char *const known[] = {"k", NULL};
    ac_config_warn_unknown(c, obj, "obj", known);
    ac_config_free(c);
    ac_config_free(NULL);
}

/* Each getter call must fail with AC_ERR_MODEL and a message with NEEDLE. */
#define EXPECT_ERR(call, needle)                                                                     \
    do {                                                                                             \
        ac_error_clear();                                                                            \
        ac_status s_ = (call);                                                                       \
        CHECK(s_ == AC_ERR_MODEL && error_has(needle) && error_has("cfg.json"), "%s -> %d '%s'", #call, \
              s_, ac_last_error());                                                                  \
    } while (0)

static void test_errors(void)
{
    ac_config *c = load_good();
    if (!c) return;
    int i;
    double d;
    const char *str;
    const cJSON *arr;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(c->root, "obj");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "nokey", &i), "cfg.json: missing key 'nokey'");
    EXPECT_ERR(ac_config_int(c, obj, "obj", "zz", &i), "missing key 'obj.zz'");
    EXPECT_ERR(ac_config_double(c, NULL, NULL, "nokey", &d), "missing key 'nokey'");
    EXPECT_ERR(ac_config_bool(c, NULL, NULL, "nokey", &i), "missing key 'nokey'");
    EXPECT_ERR(ac_config_string(c, NULL, NULL, "nokey", &str), "missing key 'nokey'");
    EXPECT_ERR(ac_config_array(c, NULL, NULL, "nokey", &arr), "missing key 'nokey'");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "N", &i), "missing key 'N'"); /* keys are case-sensitive */
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "frac", &i), "key 'frac' must be an integer");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "huge", &i), "key 'huge' must be an integer");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "over", &i), "key 'over' must be an integer");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "str_num", &i), "key 'str_num' must be an integer");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "t", &i), "must be an integer");
    EXPECT_ERR(ac_config_int(c, NULL, NULL, "nul", &i), "must be an integer");
    EXPECT_ERR(ac_config_int_opt(c, NULL, NULL, "s", 0, &i), "key 's' must be an integer");
    EXPECT_ERR(ac_config_double(c, NULL, NULL, "s", &d), "key 's' must be a number");
    EXPECT_ERR(ac_config_double(c, NULL, NULL, "arr", &d), "must be a number");
    EXPECT_ERR(ac_config_bool(c, NULL, NULL, "n", &i), "key 'n' must be true or false");
    EXPECT_ERR(ac_config_bool(c, NULL, NULL, "s", &i), "must be true or false");
    EXPECT_ERR(ac_config_string(c, NULL, NULL, "n", &str), "key 'n' must be a string");
    EXPECT_ERR(ac_config_string(c, NULL, NULL, "arr", &str), "must be a string");
    EXPECT_ERR(ac_config_array(c, NULL, NULL, "obj", &arr), "key 'obj' must be an array");
    EXPECT_ERR(ac_config_array(c, NULL, NULL, "s", &arr), "must be an array");
    EXPECT_ERR(ac_config_int(c, obj, "obj", "name", &i), "key 'obj.name' must be an integer");
    ac_config_free(c);
}

static void expect_parse_err(const char *text, size_t len, ac_status status, const char *needle)
{
    ac_config *c = (ac_config *)1;
    ac_error_clear();
    ac_status s = ac_config_parse(text, len, "bad.json", &c);
    CHECK(s == status && c == NULL && error_has(needle) && error_has("bad.json"), "'%.40s' -> %d '%s'", text, s,
          ac_last_error());
    if (s == AC_OK) ac_config_free(c);
}

static void test_bad_json(void)
{
    const char *t = "{\"a\": 1, \"b\": }";
    expect_parse_err(t, strlen(t), AC_ERR_FORMAT, "bad.json: not valid JSON (near byte 14)");
    expect_parse_err("", 0, AC_ERR_FORMAT, "not valid JSON");
    expect_parse_err("{\"a\": 1", 7, AC_ERR_FORMAT, "not valid JSON");
    expect_parse_err("[1, 2]", 6, AC_ERR_FORMAT, "bad.json: the top level is not a JSON object");
    expect_parse_err("42", 2, AC_ERR_FORMAT, "the top level is not a JSON object");
    expect_parse_err("null", 4, AC_ERR_FORMAT, "the top level is not a JSON object");
    /* LEN bounds the parse: the same text cut short is invalid */
    expect_parse_err("{\"a\": 1}", 5, AC_ERR_FORMAT, "not valid JSON");
    ac_config *c = NULL;
    CHECK(ac_config_parse("{\"a\": 1}xyz", 8, "cut.json", &c) == AC_OK && c, "bytes past LEN are ignored: %s",
          ac_last_error());
    int a = 0;
    CHECK(c && ac_config_int(c, NULL, NULL, "a", &a) == AC_OK && a == 1, "a = %d", a);
    ac_config_free(c);

    /* files */
    c = (ac_config *)1;
    ac_error_clear();
    const char *missing = work_path("no-such-config.json");
    CHECK(ac_config_load(missing, &c) == AC_ERR_IO && c == NULL && error_has("no-such-config.json: cannot open"),
          "missing file: %s", ac_last_error());
    const char *path = work_path("array.json");
    write_file(path, "[{}]", 4);
    CHECK(ac_config_load(path, &c) == AC_ERR_FORMAT && c == NULL && error_has("array.json: the top level"),
          "array file: %s", ac_last_error());
    CHECK(ac_config_load(test_work_dir, &c) != AC_OK && c == NULL, "a directory is not a config");
    /* one byte over the size limit (a sparse file) */
    path = work_path("big.json");
    FILE *f = fopen(path, "wb");
    if (f) {
        fseek(f, (long)AC_CONFIG_MAX_BYTES, SEEK_SET);
        fputc(' ', f);
        fclose(f);
    }
    ac_error_clear();
    CHECK(ac_config_load(path, &c) == AC_ERR_FORMAT && c == NULL && error_has("big.json: larger than"),
          "oversized file: %s", ac_last_error());
    remove(path);
}

/* Text after the JSON object is not JSON: the safetensors header parser
 * refuses it too. */
static void test_trailing_garbage(void)
{
    const char *t = "{\"a\": 1} xyz";
    expect_parse_err(t, strlen(t), AC_ERR_FORMAT, "not valid JSON");
    t = "{\"a\": 1}{\"b\": 2}";
    expect_parse_err(t, strlen(t), AC_ERR_FORMAT, "not valid JSON");
    /* whitespace after the object is fine */
    ac_config *c = NULL;
    CHECK(ac_config_parse("{\"a\": 1}\n  ", 11, "ws.json", &c) == AC_OK, "trailing whitespace: %s", ac_last_error());
    ac_config_free(c);
}

/* Amphion's configs: comments and trailing commas, read by the relaxed
 * entry points only; comment markers inside strings are text. */
static const char AMPHION[] =
    "// written by Amphion\n"
    "{\n"
    "  \"model\": {\n"
    "    /* the prosody tokenizer,\n"
    "       a block comment over lines */\n"
    "    \"coco_style\": {\"coco_type\": \"style\", \"codebook_size\": 512, // 6.25 Hz\n"
    "                   \"encoder\": {\"vocos_dim\": 384, \"vocos_num_layers\": 12,},},\n"
    "    \"rates\": [8, 4, /* last */ ],\n"
    "    \"nested\": [[1, 2,], {\"a\": [],},],\n"
    "  },\n"
    "  \"url\": \"https://huggingface.co/RMSnow/Vevo2//x\", // a comment after a URL\n"
    "  \"path\": \"/* not a comment */ // nor this\",\n"
    "  \"quote\": \"a \\\" // b\", \"slash\": \"\\\\\", \"after_slash\": 3, \"star\": 2 /* * / */,\n"
    "}\n"
    "// the end, without a newline";

static void test_relaxed(void)
{
    const char *path = work_path("amphion_config.json");
    CHECK(write_file(path, AMPHION, strlen(AMPHION)) == 0, "write %s", path);
    ac_config *c = NULL;
    CHECK(ac_config_load_relaxed(path, &c) == AC_OK && c, "relaxed load: %s", ac_last_error());
    if (!c) return;
    const cJSON *model = NULL, *style = NULL, *enc = NULL, *arr = NULL;
    const char *str = NULL;
    int i = 0;
    CHECK(ac_config_object(c, NULL, NULL, "model", &model) == AC_OK, "model: %s", ac_last_error());
    CHECK(ac_config_object(c, model, "model", "coco_style", &style) == AC_OK, "coco_style: %s", ac_last_error());
    CHECK(ac_config_string(c, style, "model.coco_style", "coco_type", &str) == AC_OK && strcmp(str, "style") == 0,
          "coco_type");
    CHECK(ac_config_int(c, style, "model.coco_style", "codebook_size", &i) == AC_OK && i == 512, "codebook %d", i);
    CHECK(ac_config_object(c, style, "model.coco_style", "encoder", &enc) == AC_OK &&
              ac_config_int(c, enc, "model.coco_style.encoder", "vocos_num_layers", &i) == AC_OK && i == 12,
          "encoder layers %d", i);
    CHECK(ac_config_array(c, model, "model", "rates", &arr) == AC_OK && cJSON_GetArraySize(arr) == 2 &&
              cJSON_GetArrayItem(arr, 1)->valuedouble == 4, "rates");
    CHECK(ac_config_array(c, model, "model", "nested", &arr) == AC_OK && cJSON_GetArraySize(arr) == 2 &&
              cJSON_GetArraySize(cJSON_GetArrayItem(arr, 0)) == 2, "nested");
    CHECK(ac_config_string(c, NULL, NULL, "url", &str) == AC_OK &&
              strcmp(str, "https://huggingface.co/RMSnow/Vevo2//x") == 0, "url '%s'", str);
    CHECK(ac_config_string(c, NULL, NULL, "path", &str) == AC_OK && strcmp(str, "/* not a comment */ // nor this") == 0,
          "path '%s'", str);
    CHECK(ac_config_string(c, NULL, NULL, "quote", &str) == AC_OK && strcmp(str, "a \" // b") == 0, "quote '%s'", str);
    CHECK(ac_config_string(c, NULL, NULL, "slash", &str) == AC_OK && strcmp(str, "\\") == 0, "slash '%s'", str);
    CHECK(ac_config_int(c, NULL, NULL, "after_slash", &i) == AC_OK && i == 3, "after_slash %d", i);
    CHECK(ac_config_int(c, NULL, NULL, "star", &i) == AC_OK && i == 2, "star %d", i);
    /* missing and wrong-typed keys name the file and the full key */
    ac_error_clear();
    CHECK(ac_config_int(c, style, "model.coco_style", "hidden_size", &i) == AC_ERR_MODEL &&
              error_has("amphion_config.json: missing key 'model.coco_style.hidden_size'"), "%s", ac_last_error());
    ac_error_clear();
    CHECK(ac_config_int(c, style, "model.coco_style", "coco_type", &i) == AC_ERR_MODEL &&
              error_has("amphion_config.json: key 'model.coco_style.coco_type' must be an integer"), "%s",
          ac_last_error());
    ac_error_clear();
    CHECK(ac_config_object(c, model, "model", "rates", &enc) == AC_ERR_MODEL &&
              error_has("key 'model.rates' must be an object"), "%s", ac_last_error());
    ac_config_free(c);
    /* Hugging Face files stay strict */
    c = NULL;
    ac_error_clear();
    CHECK(ac_config_load(path, &c) == AC_ERR_FORMAT && !c && error_has("amphion_config.json: not valid JSON"),
          "strict load: %s", ac_last_error());
    ac_config_free(c);
}

static void expect_relaxed_err(const char *text, const char *needle)
{
    ac_config *c = (ac_config *)1;
    ac_error_clear();
    ac_status s = ac_config_parse_relaxed(text, strlen(text), "bad.json", &c);
    CHECK(s == AC_ERR_FORMAT && c == NULL && error_has(needle) && error_has("bad.json"), "'%s' -> %d '%s'", text, s,
          ac_last_error());
    if (s == AC_OK) ac_config_free(c);
}

static void test_relaxed_errors(void)
{
    expect_relaxed_err("{\"a\": 1 /* open", "bad.json: comment at byte 8 is not closed");
    expect_relaxed_err("{\"a\": 1 /*/", "comment at byte 8 is not closed");
    expect_relaxed_err("{\"a\": [1,,2]}", "not valid JSON");
    expect_relaxed_err("{\"a\": [,]}", "not valid JSON");
    expect_relaxed_err("{,}", "not valid JSON");
    expect_relaxed_err("{\"a\": 1,,}", "not valid JSON");
    expect_relaxed_err("{\"a\": 1} / 2", "not valid JSON");
    expect_relaxed_err("{\"a\": \"open // x}", "not valid JSON");
    expect_relaxed_err("[1, 2,]", "the top level is not a JSON object");
    /* a trailing comma is fine, a comment is blank */
    ac_config *c = NULL;
    const char *t = "{\"a\": 1, /* b */ } // c";
    CHECK(ac_config_parse_relaxed(t, strlen(t), "ok.json", &c) == AC_OK && cJSON_GetArraySize(c->root) == 1, "%s",
          ac_last_error());
    ac_config_free(c);
}

/* A Coco tokenizer's config: whisper_dim is optional for a style tokenizer
 * (VevoSing's configs leave it out; upstream never reads it there) and
 * required for a content-style one, which takes Whisper features. */
static void test_coco_whisper_dim(void)
{
    static const char *const types[] = {"style", "content_style"};
    for (int k = 0; k < 2; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"coco_type\": \"%s\", \"downsample_rate\": 4, \"codebook_size\": 512, \"hidden_size\": 32,"
                 " \"codebook_dim\": 4, \"chromagram_dim\": 24, \"encoder\": {\"vocos_dim\": 32,"
                 " \"vocos_intermediate_dim\": 64, \"vocos_num_layers\": 2}}", types[k]);
        ac_config *c = NULL;
        CHECK(ac_config_parse_relaxed(text, strlen(text), "amphion_config.json", &c) == AC_OK, "%s", ac_last_error());
        if (!c) continue;
        vevo2_coco_config g = {.whisper_dim = -1};
        ac_error_clear();
        ac_status s = vevo2_coco_config_parse(c, c->root, "model.coco", &g);
        if (k == 0)
            CHECK(s == AC_OK && g.whisper_dim == 0 && g.chroma_dim == 24, "style without whisper_dim: %s",
                  ac_last_error());
        else
            CHECK(s == AC_ERR_MODEL && error_has("amphion_config.json: missing key 'model.coco.whisper_dim'"),
                  "content_style without whisper_dim: %s", ac_last_error());
        ac_config_free(c);
    }
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_getters);
    RUN(test_errors);
    RUN(test_bad_json);
    RUN(test_trailing_garbage);
    RUN(test_relaxed);
    RUN(test_relaxed_errors);
    RUN(test_coco_whisper_dim);
    return test_finish();
}
