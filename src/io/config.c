#include "io/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "base/mem.h"

static ac_status make(const char *name, cJSON *root, ac_config **out)
{
    ac_config *c = ac_calloc(1, sizeof *c);
    size_t n = strlen(name) + 1;
    char *path = ac_malloc(n);
    if (!c || !path) {
        free(c);
        free(path);
        cJSON_Delete(root);
        return AC_ERR_NOMEM;
    }
    memcpy(path, name, n);
    c->path = path;
    const char *slash = strrchr(path, '/');
    c->file = slash ? slash + 1 : path;
    c->root = root;
    *out = c;
    return AC_OK;
}

ac_status ac_config_parse(const char *text, size_t len, const char *name, ac_config **out)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end && end >= text ? (size_t)(end - text) : 0;
        return ac_error(AC_ERR_FORMAT, "%s: not valid JSON (near byte %zu)", name, at);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ac_error(AC_ERR_FORMAT, "%s: the top level is not a JSON object", name);
    }
    for (const char *p = end; p < text + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0') {
            cJSON_Delete(root);
            return ac_error(AC_ERR_FORMAT, "%s: not valid JSON (bytes after the object, at byte %zu)", name,
                            (size_t)(p - text));
        }
    return make(name, root, out);
}

ac_status ac_config_from_json(cJSON *root, const char *name, ac_config **out)
{
    *out = NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ac_error(AC_ERR_FORMAT, "%s: the top level is not an object", name);
    }
    return make(name, root, out);
}

/* Blanks comments and the commas before a closing bracket in TEXT, in
 * place and byte for byte, so that positions in messages still hold. */
static ac_status strip_relaxed(char *t, size_t n, const char *name)
{
    size_t comma = SIZE_MAX; /* a comma with only blanks after it so far */
    char prev = 0;           /* the last character that is not blank */
    for (size_t i = 0; i < n; i++) {
        char ch = t[i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
        if (ch == '/' && i + 1 < n && t[i + 1] == '/') {
            for (; i < n && t[i] != '\n'; i++) t[i] = ' ';
            continue;
        }
        if (ch == '/' && i + 1 < n && t[i + 1] == '*') {
            size_t start = i;
            for (i += 2; i + 1 < n && !(t[i] == '*' && t[i + 1] == '/'); i++) t[i] = ' ';
            if (i + 1 >= n) return ac_error(AC_ERR_FORMAT, "%s: comment at byte %zu is not closed", name, start);
            t[start] = t[start + 1] = t[i] = t[i + 1] = ' ';
            i++;
            continue;
        }
        if (ch == '"')
            for (i++; i < n && t[i] != '"'; i++)
                if (t[i] == '\\') i++;
        /* only a comma after a value may trail: "[,]" stays an error */
        if ((ch == '}' || ch == ']') && comma != SIZE_MAX) t[comma] = ' ';
        comma = ch == ',' && prev && !strchr("{[,", prev) ? i : SIZE_MAX;
        prev = ch;
    }
    return AC_OK;
}

ac_status ac_config_parse_relaxed(const char *text, size_t len, const char *name, ac_config **out)
{
    *out = NULL;
    char *copy = ac_malloc(len ? len : 1);
    if (!copy) return AC_ERR_NOMEM;
    memcpy(copy, text, len);
    ac_status s = strip_relaxed(copy, len, name);
    if (!s) s = ac_config_parse(copy, len, name, out);
    free(copy);
    return s;
}

static ac_status load(const char *path, ac_status (*parse)(const char *, size_t, const char *, ac_config **),
                      ac_config **out)
{
    *out = NULL;
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, AC_CONFIG_MAX_BYTES, &buf, &n));
    ac_status s = parse(buf, n, path, out);
    free(buf);
    return s;
}

ac_status ac_config_load(const char *path, ac_config **out) { return load(path, ac_config_parse, out); }
ac_status ac_config_load_relaxed(const char *path, ac_config **out) { return load(path, ac_config_parse_relaxed, out); }

void ac_config_free(ac_config *c)
{
    if (!c) return;
    cJSON_Delete(c->root);
    free(c->path);
    free(c);
}

static ac_status get(const ac_config *c, const cJSON *obj, const char *where, const char *key,
                     const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj ? obj : c->root, key);
    if (!*out)
        return ac_error(AC_ERR_MODEL, "%s: missing key '%s%s%s'", c->file, where ? where : "",
                        where ? "." : "", key);
    return AC_OK;
}

static ac_status wrong(const ac_config *c, const char *where, const char *key, const char *want)
{
    return ac_error(AC_ERR_MODEL, "%s: key '%s%s%s' must be %s", c->file, where ? where : "",
                    where ? "." : "", key, want);
}

ac_status ac_config_int(const ac_config *c, const cJSON *obj, const char *where,
                        const char *key, int *out)
{
    const cJSON *v;
    AC_TRY(get(c, obj, where, key, &v));
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= -2147483648.0 && d <= 2147483647.0) || d != floor(d))
        return wrong(c, where, key, "an integer");
    *out = (int)d;
    return AC_OK;
}

ac_status ac_config_int_opt(const ac_config *c, const cJSON *obj, const char *where,
                            const char *key, int def, int *out)
{
    if (!cJSON_GetObjectItemCaseSensitive(obj ? obj : c->root, key)) {
        *out = def;
        return AC_OK;
    }
    return ac_config_int(c, obj, where, key, out);
}

ac_status ac_config_double(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, double *out)
{
    const cJSON *v;
    AC_TRY(get(c, obj, where, key, &v));
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return wrong(c, where, key, "a number");
    *out = v->valuedouble;
    return AC_OK;
}

ac_status ac_config_bool(const ac_config *c, const cJSON *obj, const char *where,
                         const char *key, int *out)
{
    const cJSON *v;
    AC_TRY(get(c, obj, where, key, &v));
    if (!cJSON_IsBool(v)) return wrong(c, where, key, "true or false");
    *out = cJSON_IsTrue(v);
    return AC_OK;
}

ac_status ac_config_string(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, const char **out)
{
    const cJSON *v;
    AC_TRY(get(c, obj, where, key, &v));
    if (cJSON_IsNull(v)) {
        *out = NULL;
        return AC_OK;
    }
    if (!cJSON_IsString(v)) return wrong(c, where, key, "a string");
    *out = v->valuestring;
    return AC_OK;
}

ac_status ac_config_array(const ac_config *c, const cJSON *obj, const char *where,
                          const char *key, const cJSON **out)
{
    AC_TRY(get(c, obj, where, key, out));
    if (!cJSON_IsArray(*out)) return wrong(c, where, key, "an array");
    return AC_OK;
}

ac_status ac_config_object(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, const cJSON **out)
{
    AC_TRY(get(c, obj, where, key, out));
    if (!cJSON_IsObject(*out)) return wrong(c, where, key, "an object");
    return AC_OK;
}

void ac_config_warn_unknown(const ac_config *c, const cJSON *obj, const char *where,
                            const char *const *known)
{
    for (const cJSON *it = (obj ? obj : c->root)->child; it; it = it->next) {
        int found = 0;
        for (const char *const *k = known; *k && !found; k++) found = strcmp(*k, it->string) == 0;
        if (!found)
            ac_warn("%s: ignoring unknown key '%s%s%s'", c->file, where ? where : "", where ? "." : "",
                    it->string);
    }
}
