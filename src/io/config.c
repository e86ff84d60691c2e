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

ac_status ac_config_load(const char *path, ac_config **out)
{
    *out = NULL;
    char *buf;
    size_t n;
    AC_TRY(ac_read_file(path, AC_CONFIG_MAX_BYTES, &buf, &n));
    ac_status s = ac_config_parse(buf, n, path, out);
    free(buf);
    return s;
}

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
