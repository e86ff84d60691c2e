#include "hub/listing.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "hub/spec.h"

void hub_listing_free(hub_listing *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->files[i]);
    free(l->files);
    *l = (hub_listing){0};
}

int hub_listing_has(const hub_listing *l, const char *file)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->files[i], file) == 0) return 1;
    return 0;
}

static ac_status add(hub_listing *l, const char *name, size_t *cap)
{
    if (l->n == HUB_MAX_FILES) return ac_error(AC_ERR_FORMAT, "more than %d files", HUB_MAX_FILES);
    if (l->n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        char **f = realloc(l->files, c * sizeof *f);
        if (!f) return ac_error(AC_ERR_NOMEM, "out of memory");
        l->files = f;
        *cap = c;
    }
    if (!(l->files[l->n] = strdup(name))) return ac_error(AC_ERR_NOMEM, "out of memory");
    l->n++;
    return AC_OK;
}

ac_status hub_listing_parse(const char *json, size_t n, const char *what, hub_listing *out)
{
    *out = (hub_listing){0};
    if (n > HUB_MAX_LISTING) return ac_error(AC_ERR_FORMAT, "%s: the file list is larger than %d bytes", what, HUB_MAX_LISTING);
    cJSON *root = cJSON_ParseWithLength(json, n);
    if (!root) return ac_error(AC_ERR_FORMAT, "%s: the Hub's answer is not JSON", what);
    ac_status s = AC_OK;
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(root, "sha");
    const cJSON *sib = cJSON_GetObjectItemCaseSensitive(root, "siblings");
    size_t cap = 0;
    if (!cJSON_IsObject(root) || !cJSON_IsString(sha) || !hub_is_commit(sha->valuestring)) {
        s = ac_error(AC_ERR_FORMAT, "%s: the Hub's answer has no commit hash (\"sha\")", what);
        goto out;
    }
    memcpy(out->commit, sha->valuestring, 41);
    if (!cJSON_IsArray(sib)) {
        s = ac_error(AC_ERR_FORMAT, "%s: the Hub's answer has no file list (\"siblings\")", what);
        goto out;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, sib)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "rfilename");
        if (!cJSON_IsString(name)) {
            s = ac_error(AC_ERR_FORMAT, "%s: a file of the list has no name (\"rfilename\")", what);
            goto out;
        }
        if (!hub_path_ok(name->valuestring)) {
            s = ac_error(AC_ERR_FORMAT, "%s: refused the file name '%.200s' (not a plain relative path)", what,
                         name->valuestring);
            goto out;
        }
        if ((s = add(out, name->valuestring, &cap))) {
            ac_error_prefix(s, "%s", what);
            goto out;
        }
    }
out:
    cJSON_Delete(root);
    if (s) hub_listing_free(out);
    return s;
}

static ac_status scan(const char *dir, const char *rel, hub_listing *l, size_t *cap, int depth)
{
    if (depth > 32) return AC_OK;
    char path[HUB_PATH];
    snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return ac_error(AC_ERR_IO, "%s: cannot read the folder", path);
    ac_status s = AC_OK;
    for (struct dirent *e; !s && (e = readdir(d));) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
        char r[HUB_PATH], full[HUB_PATH * 2];
        if (snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof r) continue;
        snprintf(full, sizeof full, "%s/%s", dir, r);
        struct stat sb;
        if (stat(full, &sb) != 0) continue; /* a dangling link: its blob is gone */
        if (S_ISDIR(sb.st_mode)) s = scan(dir, r, l, cap, depth + 1);
        else if (S_ISREG(sb.st_mode)) s = add(l, r, cap);
    }
    closedir(d);
    return s;
}

ac_status hub_listing_scan(const char *dir, hub_listing *out)
{
    *out = (hub_listing){0};
    size_t cap = 0;
    ac_status s = scan(dir, "", out, &cap, 0);
    if (s) hub_listing_free(out);
    return s;
}
