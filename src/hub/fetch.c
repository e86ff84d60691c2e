#include "hub/fetch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "base/sha256.h"
#include "hub/http.h"

static int forced_offline;

int hub_set_offline(int offline)
{
    int was = forced_offline;
    forced_offline = offline;
    return was;
}

int hub_offline(void)
{
    const char *e = getenv("HF_HUB_OFFLINE");
    if (forced_offline) return 1;
    if (!e) return 0;
    return !strcmp(e, "1") || !strcasecmp(e, "true") || !strcasecmp(e, "yes") || !strcasecmp(e, "on");
}

/* The cached snapshot of SPEC's revision as a listing. */
static ac_status list_cached(const hub_spec *spec, const hub_repo *r, hub_listing *l)
{
    char commit[41], dir[HUB_PATH];
    AC_TRY(hub_cache_commit(r, spec->revision, commit));
    AC_TRY(hub_cache_snapshot(r, commit, NULL, dir));
    AC_TRY(hub_listing_scan(dir, l));
    memcpy(l->commit, commit, 41);
    return AC_OK;
}

ac_status hub_list(const hub_spec *spec, const hub_repo *r, hub_listing *l)
{
    char what[HUB_PATH];
    snprintf(what, sizeof what, "%s@%s", spec->repo, spec->revision);
    if (hub_offline()) {
        if (list_cached(spec, r, l) != AC_OK)
            return ac_error_prefix(AC_ERR_IO, "offline (HF_HUB_OFFLINE or --offline), and %s was never downloaded",
                                   what);
        return AC_OK;
    }
    char url[HUB_URL];
    hub_endpoint(url);
    strcat(url, "/api/models/");
    AC_TRY(hub_url_append(url, spec->repo, 1));
    strcat(url, "/revision/");
    AC_TRY(hub_url_append(url, spec->revision, 0));
    char *body, why[1024];
    size_t n;
    long status;
    ac_status s = hub_http_get(url, what, HUB_MAX_LISTING, &body, &n, &status);
    if (s && status == 0) {
        /* no answer (as huggingface_hub does): the snapshot the cache has of this revision, if any */
        snprintf(why, sizeof why, "%s", ac_last_error());
        if (list_cached(spec, r, l) == AC_OK) {
            ac_warn("%s; using the snapshot in the Hub cache", why);
            return AC_OK;
        }
        return ac_error(s, "%s", why);
    }
    AC_TRY(s);
    s = hub_listing_parse(body, n, what, l);
    free(body);
    AC_TRY(s);
    if ((s = hub_cache_write_ref(r, spec->revision, l->commit))) hub_listing_free(l);
    return s;
}

static int etag_ok(const char *e)
{
    size_t n = strlen(e);
    if (n == 0 || n > 128) return 0;
    for (; *e; e++)
        if (!((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '-' ||
              *e == '_'))
            return 0;
    return 1;
}

static int is_sha256(const char *e)
{
    size_t n = 0;
    for (; e[n]; n++)
        if (!((e[n] >= '0' && e[n] <= '9') || (e[n] >= 'a' && e[n] <= 'f'))) return 0;
    return n == 64;
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : -1;
}

static ac_status hash_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return ac_error(AC_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    ac_sha256 h;
    ac_sha256_init(&h);
    static __thread unsigned char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) ac_sha256_update(&h, buf, k);
    int bad = ferror(f);
    fclose(f);
    if (bad) return ac_error(AC_ERR_IO, "%s: cannot read", path);
    ac_sha256_hex(&h, hex);
    return AC_OK;
}

/* Downloads URL into the blob ETAG of SIZE bytes, under its lock. */
static ac_status download_blob(const hub_repo *r, const char *what, const char *url, const char *etag, int64_t size,
                               const char *label)
{
    char blob[HUB_PATH], part[HUB_PATH];
    AC_TRY(hub_cache_blob(r, etag, "", blob));
    AC_TRY(hub_cache_blob(r, etag, ".incomplete", part));
    int lock;
    AC_TRY(hub_cache_lock(r, etag, &lock));
    ac_status s = AC_OK;
    if (file_size(blob) == size) goto out; /* another process brought it meanwhile */
    FILE *f = fopen(part, "ab");
    if (!f) {
        s = ac_error(AC_ERR_IO, "%s: cannot write: %s", part, strerror(errno));
        goto out;
    }
    int64_t have = file_size(part);
    if (have < 0 || have > size) {
        if (ftruncate(fileno(f), 0) != 0) have = -1;
        else have = 0;
    }
    if (have < 0) s = ac_error(AC_ERR_IO, "%s: cannot write: %s", part, strerror(errno));
    else if (have < size) s = hub_http_download(url, what, f, &have, size, label);
    if (fclose(f) != 0 && !s) s = ac_error(AC_ERR_IO, "%s: %s", part, errno == ENOSPC ? "the disk is full" : strerror(errno));
    if (s) goto out; /* the part stays for the next try to resume */
    if (file_size(part) != size) {
        s = ac_error(AC_ERR_FORMAT, "%s: the download holds %lld bytes, not the %lld the Hub announced; deleted",
                     what, (long long)file_size(part), (long long)size);
        unlink(part);
        goto out;
    }
    if (is_sha256(etag)) {
        char hex[65];
        if ((s = hash_file(part, hex))) goto out;
        if (strcmp(hex, etag) != 0) {
            unlink(part);
            s = ac_error(AC_ERR_FORMAT,
                         "%s: the downloaded bytes do not match the Hub's SHA-256 (expected %s, got %s); deleted",
                         what, etag, hex);
            goto out;
        }
    }
    if (rename(part, blob) != 0) s = ac_error(AC_ERR_IO, "%s: cannot rename it to %s: %s", part, blob, strerror(errno));
out:
    hub_cache_unlock(lock);
    return s;
}

ac_status hub_fetch(const hub_repo *r, const char *commit, const char *file)
{
    char link[HUB_PATH], what[HUB_PATH];
    snprintf(what, sizeof what, "%s/%s", r->repo, file);
    if (!hub_path_ok(file)) return ac_error(AC_ERR_ARG, "%s: not a plain relative path", what);
    AC_TRY(hub_cache_snapshot(r, commit, file, link));
    if (file_size(link) >= 0) return AC_OK;
    if (hub_offline())
        return ac_error(AC_ERR_IO, "offline (HF_HUB_OFFLINE or --offline): %s is not in the Hub cache (no %s)", what,
                        link);
    char url[HUB_URL];
    hub_endpoint(url);
    strcat(url, "/");
    AC_TRY(hub_url_append(url, r->repo, 1));
    strcat(url, "/resolve/");
    AC_TRY(hub_url_append(url, commit, 0));
    strcat(url, "/");
    AC_TRY(hub_url_append(url, file, 1));
    hub_reply rep;
    AC_TRY(hub_http_head(url, what, &rep));
    /* a renamed repository answers with a redirect on the Hub itself (a
     * path, no file headers): follow those, as huggingface_hub does */
    for (int hops = 0; rep.status >= 300 && !rep.linked_etag[0] && rep.location[0] == '/'; hops++) {
        if (hops == 5) return ac_error(AC_ERR_IO, "%s: too many redirects within the Hub (%s)", what, url);
        hub_endpoint(url);
        if (strlen(url) + strlen(rep.location) >= sizeof url)
            return ac_error(AC_ERR_FORMAT, "%s: the Hub redirected to a path too long", what);
        strcat(url, rep.location);
        AC_TRY(hub_http_head(url, what, &rep));
    }
    const char *etag = rep.linked_etag[0] ? rep.linked_etag : rep.etag;
    int64_t size = rep.linked_etag[0] ? rep.linked_size : rep.length;
    if (!etag_ok(etag)) return ac_error(AC_ERR_FORMAT, "%s: the Hub gave no usable ETag for it (%s)", what, url);
    if (size < 0 || size > ((int64_t)1 << 42))
        return ac_error(AC_ERR_FORMAT, "%s: the Hub gave no usable size for it (%s)", what, url);
    if (rep.commit[0] && strcmp(rep.commit, commit) != 0)
        return ac_error(AC_ERR_FORMAT, "%s: the Hub answered for commit %.64s, not %s", what, rep.commit, commit);
    char blob[HUB_PATH];
    AC_TRY(hub_cache_blob(r, etag, "", blob));
    if (file_size(blob) != size) {
        ac_info("downloading %s (%.1f MB)", what, (double)size / 1e6);
        AC_TRY(download_blob(r, what, url, etag, size, file));
    }
    return hub_cache_link(r, commit, file, etag);
}
