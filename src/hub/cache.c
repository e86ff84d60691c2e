#include "hub/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

/* A name for a temporary file beside PATH that no other process or thread uses. */
static void tmp_name(char *out, size_t size, const char *path)
{
    static _Atomic unsigned long counter;
    snprintf(out, size, "%s.tmp%ld.%lu", path, (long)getpid(), ++counter);
}

static ac_status fmt(char out[HUB_PATH], const char *what, const char *f, const char *a, const char *b,
                     const char *c)
{
    int n = snprintf(out, HUB_PATH, f, a, b, c);
    if (n < 0 || n >= HUB_PATH) return ac_error(AC_ERR_ARG, "%s: the path in the Hub cache is too long", what);
    return AC_OK;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static ac_status cache_root(char out[HUB_PATH])
{
    const char *v;
    if ((v = env("HF_HUB_CACHE")) || (v = env("HUGGINGFACE_HUB_CACHE"))) return fmt(out, v, "%s%s%s", v, "", "");
    if ((v = env("HF_HOME"))) return fmt(out, v, "%s%s%s", v, "/hub", "");
    if ((v = env("XDG_CACHE_HOME"))) return fmt(out, v, "%s%s%s", v, "/huggingface/hub", "");
    if ((v = env("HOME"))) return fmt(out, v, "%s%s%s", v, "/.cache/huggingface/hub", "");
    return ac_error(AC_ERR_ARG, "no Hub cache folder: set HF_HUB_CACHE, HF_HOME or HOME");
}

ac_status hub_cache_open(const char *repo, hub_repo *r)
{
    *r = (hub_repo){0};
    AC_TRY(cache_root(r->root));
    snprintf(r->repo, sizeof r->repo, "%s", repo);
    /* models--ORG--NAME: each '/' of the id becomes "--" */
    char *o = r->folder + snprintf(r->folder, sizeof r->folder, "models--");
    for (const char *c = repo; *c && o < r->folder + sizeof r->folder - 3; c++) {
        if (*c == '/') *o++ = '-', *o++ = '-';
        else *o++ = *c;
    }
    *o = 0;
    return fmt(r->dir, repo, "%s/%s%s", r->root, r->folder, "");
}

ac_status hub_mkdirs(const char *path)
{
    char p[HUB_PATH];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return ac_error(AC_ERR_IO, "%s: cannot make the folder: %s", p, strerror(errno));
        *s = '/';
    }
    return AC_OK;
}

ac_status hub_cache_snapshot(const hub_repo *r, const char *commit, const char *file, char out[HUB_PATH])
{
    return fmt(out, r->repo, file && *file ? "%s/snapshots/%s/%s" : "%s/snapshots/%s%s", r->dir, commit,
               file ? file : "");
}

ac_status hub_cache_blob(const hub_repo *r, const char *etag, const char *suffix, char out[HUB_PATH])
{
    AC_TRY(fmt(out, r->repo, "%s/blobs/%s%s", r->dir, etag, suffix));
    return hub_mkdirs(out);
}

ac_status hub_cache_commit(const hub_repo *r, const char *rev, char commit[41])
{
    char p[HUB_PATH];
    struct stat sb;
    if (hub_is_commit(rev)) {
        AC_TRY(hub_cache_snapshot(r, rev, NULL, p));
        if (stat(p, &sb) == 0) {
            memcpy(commit, rev, 41);
            return AC_OK;
        }
        return ac_error(AC_ERR_IO, "%s@%s: that commit is not in the Hub cache (%s)", r->repo, rev, r->dir);
    }
    AC_TRY(fmt(p, r->repo, "%s/refs/%s%s", r->dir, rev, ""));
    FILE *f = fopen(p, "rb");
    if (!f) return ac_error(AC_ERR_IO, "%s@%s: not in the Hub cache (no %s)", r->repo, rev, p);
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = 0;
    if (!hub_is_commit(buf)) return ac_error(AC_ERR_FORMAT, "%s: does not hold a commit hash", p);
    memcpy(commit, buf, 41);
    return AC_OK;
}

/* Writes TEXT to PATH through a temporary file renamed into place. */
static ac_status write_atomic(const char *path, const char *text)
{
    char tmp[HUB_PATH + 48];
    tmp_name(tmp, sizeof tmp, path);
    AC_TRY(hub_mkdirs(path));
    FILE *f = fopen(tmp, "wb");
    if (!f) return ac_error(AC_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ac_error(AC_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    }
    return AC_OK;
}

ac_status hub_cache_write_ref(const hub_repo *r, const char *rev, const char *commit)
{
    if (hub_is_commit(rev)) return AC_OK;
    char p[HUB_PATH];
    AC_TRY(fmt(p, r->repo, "%s/refs/%s%s", r->dir, rev, ""));
    return write_atomic(p, commit);
}

ac_status hub_cache_link(const hub_repo *r, const char *commit, const char *file, const char *etag)
{
    char link[HUB_PATH], target[HUB_PATH], tmp[HUB_PATH + 48];
    AC_TRY(hub_cache_snapshot(r, commit, file, link));
    AC_TRY(hub_mkdirs(link));
    /* from snapshots/COMMIT/A/B/ up to the repository's folder: one "../"
     * per folder of FILE, and two for snapshots/COMMIT */
    size_t n = 0;
    for (int up = 0; up < 2; up++) n += (size_t)snprintf(target + n, 4, "../");
    for (const char *c = file; *c; c++)
        if (*c == '/' && n + 4 < sizeof target) n += (size_t)snprintf(target + n, 4, "../");
    if (snprintf(target + n, sizeof target - n, "blobs/%s", etag) >= (int)(sizeof target - n))
        return ac_error(AC_ERR_ARG, "%s: the path is too long", file);
    tmp_name(tmp, sizeof tmp, link);
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
        int e = errno;
        unlink(tmp);
        return ac_error(AC_ERR_IO, "%s: cannot link it to %s: %s", link, target, strerror(e));
    }
    return AC_OK;
}

ac_status hub_cache_lock(const hub_repo *r, const char *etag, int *fd)
{
    char p[HUB_PATH];
    AC_TRY(fmt(p, r->repo, "%s/.locks/%s/%s", r->root, r->folder, etag));
    if (strlen(p) + 6 >= sizeof p) return ac_error(AC_ERR_ARG, "%s: the path is too long", p);
    strcat(p, ".lock");
    AC_TRY(hub_mkdirs(p));
    *fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return ac_error(AC_ERR_IO, "%s: cannot open the lock: %s", p, strerror(errno));
    while (flock(*fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            int e = errno;
            close(*fd);
            return ac_error(AC_ERR_IO, "%s: cannot lock: %s", p, strerror(e));
        }
    return AC_OK;
}

void hub_cache_unlock(int fd)
{
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}
