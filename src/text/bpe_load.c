/* The files a byte-level BPE tokenizer comes in: Hugging Face's
 * tokenizer.json, or the older vocab.json + merges.txt with the added
 * tokens of tokenizer_config.json and added_tokens.json. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "text/bpe.h"
#include "text/bpe_build.h"

#define MAX_FILE (1u << 30) /* Qwen2's tokenizer.json is 7 MB */

static const char QWEN2_REGEX[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                  "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static ac_status not_tokenizer(const char *name, const char *why)
{
    return ac_error(AC_ERR_FORMAT, "%s: not a tokenizer.json (%s)", name, why);
}

/* An integer id in a JSON number. */
static int json_id(const cJSON *v, long long *id)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e15) return 0;
    *id = (long long)v->valuedouble;
    return 1;
}

static ac_status parse_json(const char *buf, size_t n, const char *name, cJSON **out)
{
    *out = cJSON_ParseWithLength(buf, n);
    if (*out) return AC_OK;
    const char *at = cJSON_GetErrorPtr();
    size_t pos = at && at >= buf && at <= buf + n ? (size_t)(at - buf) : 0;
    return ac_error(AC_ERR_FORMAT, "%s: not valid JSON (near byte %zu)", name, pos);
}

/* {"token": id, ...} */
static ac_status read_vocab(ac_bpe *b, const cJSON *vocab, const char *name)
{
    if (!cJSON_IsObject(vocab)) return ac_error(AC_ERR_FORMAT, "%s: the vocabulary is not a JSON object", name);
    for (const cJSON *t = vocab->child; t; t = t->next) {
        long long id;
        if (!json_id(t, &id))
            return ac_error(AC_ERR_FORMAT, "%s: vocabulary token '%.64s' has no integer id", name, t->string);
        AC_TRY(ac_bpe_add_vocab(b, t->string, strlen(t->string), id, name));
    }
    return ac_bpe_end_vocab(b, name);
}

/* "left right": exactly one space, as the symbols have none. */
static ac_status add_merge_line(ac_bpe *b, const char *s, size_t n, const char *name, const char *where)
{
    const char *sp = memchr(s, ' ', n);
    if (!sp || sp == s || sp + 1 == s + n || memchr(sp + 1, ' ', (size_t)(s + n - sp - 1)))
        return ac_error(AC_ERR_FORMAT, "%s: %s is not two symbols separated by a space: '%.*s'", name, where,
                        (int)(n > 64 ? 64 : n), s);
    return ac_bpe_add_merge(b, s, (size_t)(sp - s), sp + 1, (size_t)(s + n - sp - 1), name, where);
}

/* model.merges: "a b" strings or ["a", "b"] pairs. */
static ac_status read_json_merges(ac_bpe *b, const cJSON *merges, const char *name)
{
    if (!merges) return AC_OK;
    if (!cJSON_IsArray(merges)) return not_tokenizer(name, "model.merges is not an array");
    size_t rank = 0;
    for (const cJSON *m = merges->child; m; m = m->next, rank++) {
        char where[48];
        snprintf(where, sizeof where, "merge %zu", rank);
        if (cJSON_IsString(m)) {
            AC_TRY(add_merge_line(b, m->valuestring, strlen(m->valuestring), name, where));
            continue;
        }
        const cJSON *l = cJSON_GetArrayItem(m, 0), *r = cJSON_GetArrayItem(m, 1);
        if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != 2 || !cJSON_IsString(l) || !cJSON_IsString(r))
            return ac_error(AC_ERR_FORMAT, "%s: %s is neither \"a b\" nor [\"a\", \"b\"]", name, where);
        AC_TRY(ac_bpe_add_merge(b, l->valuestring, strlen(l->valuestring), r->valuestring, strlen(r->valuestring),
                                name, where));
    }
    return AC_OK;
}

/* merges.txt: one merge a line, "#version" lines skipped. */
static ac_status read_merges_txt(ac_bpe *b, const char *s, size_t n, const char *name)
{
    size_t line = 0;
    for (size_t i = 0; i < n; line++) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n, len = end - i;
        if (len && s[i + len - 1] == '\r') len--;
        char where[48];
        snprintf(where, sizeof where, "line %zu", line + 1);
        if (!(len >= 8 && memcmp(s + i, "#version", 8) == 0)) AC_TRY(add_merge_line(b, s + i, len, name, where));
        i = end + 1;
    }
    return AC_OK;
}

static int flag(const cJSON *o, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

/* One added token: {"content": ..., "special": ..., "normalized": ...}. */
static ac_status add_token(ac_bpe *b, const cJSON *t, long long id, const char *name)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "content");
    if (!cJSON_IsString(c)) return ac_error(AC_ERR_FORMAT, "%s: added token %lld has no \"content\" string", name, id);
    int special = flag(t, "special", 0);
    return ac_bpe_add_token(b, c->valuestring, strlen(c->valuestring), id, special, flag(t, "normalized", !special),
                            name);
}

/* What we run is Qwen2's pipeline: refuse a file that asks for another. */
static ac_status check_pipeline(const cJSON *root, const char *name)
{
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(norm, "type");
    if (norm && !cJSON_IsNull(norm) && !(cJSON_IsString(type) && strcmp(type->valuestring, "NFC") == 0))
        return ac_error(AC_ERR_UNSUPPORTED, "%s: normalizer %s is not supported (only NFC)", name,
                        cJSON_IsString(type) ? type->valuestring : "?");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers");
    const cJSON *one = cJSON_IsArray(list) ? list->child : pre;
    int split = 0;
    for (; one; one = cJSON_IsArray(list) ? one->next : NULL) {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(one, "type"));
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(one, "pattern");
        const char *re = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pat, "Regex"));
        const char *how = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(one, "behavior"));
        if (t && strcmp(t, "Split") == 0 && re && strcmp(re, QWEN2_REGEX) == 0 && how && strcmp(how, "Isolated") == 0 &&
            !flag(one, "invert", 0))
            split = 1;
        else if (!(t && strcmp(t, "ByteLevel") == 0 && !flag(one, "use_regex", 1) && !flag(one, "add_prefix_space", 1)))
            return ac_error(AC_ERR_UNSUPPORTED,
                            "%s: pre-tokenizer %s is not supported (only Qwen2's: Split by its regex, then ByteLevel "
                            "without regex or prefix space)",
                            name, t ? t : "?");
    }
    if (!split) return ac_error(AC_ERR_UNSUPPORTED, "%s: no Qwen2 pre-tokenizer (Split by the Qwen2 regex)", name);
    return AC_OK;
}

static ac_status from_json(ac_bpe *b, const cJSON *root, const char *name)
{
    if (!cJSON_IsObject(root)) return not_tokenizer(name, "not a JSON object");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) return not_tokenizer(name, "no \"model\"");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(model, "type"));
    if (type && strcmp(type, "BPE") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: a %s model, not BPE", name, type);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!vocab) return not_tokenizer(name, "no model.vocab");
    AC_TRY(check_pipeline(root, name));
    ac_bpe_set_ignore_merges(b, flag(model, "ignore_merges", 0));
    AC_TRY(read_vocab(b, vocab, name));
    AC_TRY(read_json_merges(b, cJSON_GetObjectItemCaseSensitive(model, "merges"), name));
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (added && !cJSON_IsArray(added)) return not_tokenizer(name, "added_tokens is not an array");
    for (const cJSON *t = added ? added->child : NULL; t; t = t->next) {
        long long id;
        if (!json_id(cJSON_GetObjectItemCaseSensitive(t, "id"), &id))
            return ac_error(AC_ERR_FORMAT, "%s: an added token has no integer \"id\"", name);
        AC_TRY(add_token(b, t, id, name));
    }
    return ac_bpe_end(b, name);
}

ac_status ac_bpe_parse_json(const char *buf, size_t n, const char *name, ac_bpe **out)
{
    if (!out) return ac_error(AC_ERR_ARG, "ac_bpe_parse_json: no output pointer");
    *out = NULL;
    if (!name) name = "tokenizer.json";
    if (!buf || n == 0) return not_tokenizer(name, "empty");
    cJSON *root;
    AC_TRY(parse_json(buf, n, name, &root));
    ac_bpe *b = ac_bpe_new();
    ac_status st = b ? from_json(b, root, name) : AC_ERR_NOMEM;
    cJSON_Delete(root);
    if (st != AC_OK) {
        ac_bpe_free(b);
        return st;
    }
    *out = b;
    return AC_OK;
}

static ac_status read_json_file(const char *path, cJSON **out)
{
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, MAX_FILE, &buf, &n));
    ac_status st = parse_json(buf, n, path, out);
    free(buf);
    return st;
}

ac_status ac_bpe_load_json(const char *path, ac_bpe **out)
{
    if (!out) return ac_error(AC_ERR_ARG, "ac_bpe_load_json: no output pointer");
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "ac_bpe_load_json: no path");
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, MAX_FILE, &buf, &n));
    ac_status st = ac_bpe_parse_json(buf, n, path, out);
    free(buf);
    return st;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* tokenizer_config.json's added_tokens_decoder {"id": {...}}, then the
 * tokens of added_tokens.json {"content": id} it does not have (those are
 * not special). */
static ac_status read_added(ac_bpe *b, const char *dir)
{
    char path[PATH_MAX], extra_path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    snprintf(extra_path, sizeof extra_path, "%s/added_tokens.json", dir);
    cJSON *config = NULL, *extra = NULL;
    if (exists(path)) AC_TRY(read_json_file(path, &config));
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(config, "added_tokens_decoder");
    int n = cJSON_GetArraySize(dec);
    long long *have = calloc((size_t)n + 1, sizeof *have);
    ac_status st = have ? AC_OK : ac_error(AC_ERR_NOMEM, "out of memory");
    if (!st && dec && !cJSON_IsObject(dec)) st = ac_error(AC_ERR_FORMAT, "%s: added_tokens_decoder is not an object", path);
    int k = 0;
    for (const cJSON *t = dec ? dec->child : NULL; !st && t; t = t->next) {
        char *end;
        long long id = strtoll(t->string, &end, 10);
        if (end == t->string || *end)
            st = ac_error(AC_ERR_FORMAT, "%s: added_tokens_decoder key '%.32s' is not an id", path, t->string);
        else st = add_token(b, t, id, path);
        if (k < n) have[k++] = id;
    }
    qsort(have, (size_t)k, sizeof *have, cmp_ll);
    if (!st && exists(extra_path)) st = read_json_file(extra_path, &extra);
    if (!st && extra && !cJSON_IsObject(extra)) st = ac_error(AC_ERR_FORMAT, "%s: not a JSON object", extra_path);
    for (const cJSON *t = extra ? extra->child : NULL; !st && t; t = t->next) {
        long long id;
        if (!json_id(t, &id)) st = ac_error(AC_ERR_FORMAT, "%s: token '%.64s' has no integer id", extra_path, t->string);
        else if (!bsearch(&id, have, (size_t)k, sizeof *have, cmp_ll))
            st = ac_bpe_add_token(b, t->string, strlen(t->string), id, 0, 0, extra_path);
    }
    free(have);
    cJSON_Delete(config);
    cJSON_Delete(extra);
    return st;
}

static ac_status from_files(ac_bpe *b, const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    cJSON *vocab;
    AC_TRY(read_json_file(path, &vocab));
    ac_status st = read_vocab(b, vocab, path);
    cJSON_Delete(vocab);
    AC_TRY(st);
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, MAX_FILE, &buf, &n));
    st = read_merges_txt(b, buf, n, path);
    free(buf);
    AC_TRY(st);
    AC_TRY(read_added(b, dir));
    snprintf(path, sizeof path, "%s (vocab.json, added tokens)", dir);
    return ac_bpe_end(b, path);
}

ac_status ac_bpe_load_dir(const char *dir, ac_bpe **out)
{
    if (!out) return ac_error(AC_ERR_ARG, "ac_bpe_load_dir: no output pointer");
    *out = NULL;
    if (!dir) return ac_error(AC_ERR_ARG, "ac_bpe_load_dir: no folder");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (exists(path)) return ac_bpe_load_json(path, out);
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    if (!exists(path))
        return ac_error(AC_ERR_IO, "%s: no tokenizer here (neither tokenizer.json nor vocab.json + merges.txt)", dir);
    ac_bpe *b = ac_bpe_new();
    ac_status st = b ? from_files(b, dir) : AC_ERR_NOMEM;
    if (st != AC_OK) {
        ac_bpe_free(b);
        return st;
    }
    *out = b;
    return AC_OK;
}
