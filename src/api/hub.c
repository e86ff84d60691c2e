/* Models on the Hugging Face Hub: which files of a repository a family
 * needs (its ac_hub_files), fetched into the cache by src/hub/, and the
 * local folder they make ("hf:" paths and ac_hub_pull). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/input.h"
#include "base/error.h"
#include "hub/fetch.h"

void ac_hub_options_init(ac_hub_options *o, size_t size)
{
    ac_hub_options d = {.struct_size = size, .include = NULL, .offline = 0};
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

void ac_hub_set_offline(int offline) { hub_set_offline(offline); }

/* FILE relative to SUB ("" for the whole repository), or NULL outside it. */
static const char *in_sub(const char *file, const char *sub)
{
    size_t n = strlen(sub);
    if (!n) return file;
    return strncmp(file, sub, n) == 0 && file[n] == '/' ? file + n + 1 : NULL;
}

static int listed(const hub_listing *l, const char *sub, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        const char *f = in_sub(l->files[i], sub);
        if (f && strcmp(f, name) == 0) return 1;
    }
    return 0;
}

static int all_listed(const hub_listing *l, const char *sub, const char *const *names)
{
    for (; names && *names; names++)
        if (!listed(l, sub, *names)) return 0;
    return 1;
}

static int any_listed(const hub_listing *l, const char *sub, const char *const *names)
{
    for (; names && *names; names++)
        if (listed(l, sub, *names)) return 1;
    return 0;
}

/* The family whose marks the listing holds (and none of its unless), or NULL. */
static const ac_family *family_of(const hub_listing *l, const char *sub)
{
    for (int i = 0; ac_family_at(i); i++) {
        const ac_family *f = ac_family_at(i);
        if (f->hub && f->hub->marks && all_listed(l, sub, f->hub->marks) && !any_listed(l, sub, f->hub->unless))
            return f;
    }
    return NULL;
}

static ac_status fetch_one(const hub_repo *r, const hub_listing *l, const char *sub, const char *name)
{
    char full[HUB_PATH];
    if (snprintf(full, sizeof full, "%s%s%s", sub, *sub ? "/" : "", name) >= (int)sizeof full)
        return ac_error(AC_ERR_ARG, "%s: the path is too long", name);
    return hub_fetch(r, l->commit, full);
}

/* Whether FILE matches PATTERN; a PATTERN ending in '/' takes that folder
 * whole, as huggingface_hub's allow_patterns do. */
static int matches(const char *pattern, const char *file, int flags)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '/') return strncmp(pattern, file, n) == 0;
    return fnmatch(pattern, file, flags) == 0;
}

/* The listed files (under SUB) that match one of PATTERNS, fetched. */
static ac_status fetch_matching(const hub_repo *r, const hub_listing *l, const char *sub, const char *const *patterns,
                                int flags, int *n_fetched)
{
    for (size_t i = 0; i < l->n; i++) {
        const char *f = in_sub(l->files[i], sub);
        if (!f) continue;
        for (const char *const *p = patterns; p && *p; p++)
            if (matches(*p, f, flags)) {
                AC_TRY(fetch_one(r, l, sub, f));
                ++*n_fetched;
                break;
            }
    }
    return AC_OK;
}

static ac_status family_list(char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0; ac_family_at(i); i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", ac_family_at(i)->name);
    return AC_OK;
}

/* SPEC's files into the cache; *DIR its local folder, *COMPANION the
 * companion repository's (NULL when none). */
static ac_status pull(const char *text, const char *const *include, char **dir, char **companion);

static ac_status pull_repo(const hub_spec *spec, const char *const *include, const ac_hub_files *want, char **dir,
                           char **companion)
{
    hub_repo r;
    hub_listing l;
    AC_TRY(hub_cache_open(spec->repo, &r));
    AC_TRY(hub_list(spec, &r, &l));
    char what[HUB_PATH + 300];
    snprintf(what, sizeof what, "%s@%s%s%s", spec->repo, spec->revision, *spec->sub ? "/" : "", spec->sub);
    ac_status s = AC_OK;
    const ac_family *f = NULL;
    int n = 0;
    if (*spec->sub && hub_listing_has(&l, spec->sub)) {
        /* one file (a single-file GGUF package, a VAD's weights): that file alone */
        s = hub_fetch(&r, l.commit, spec->sub);
        want = NULL;
    } else if (include) {
        s = fetch_matching(&r, &l, spec->sub, include, 0, &n);
        if (!s && n == 0)
            s = ac_error(AC_ERR_ARG, "%s: no file of the repository matches the --include patterns", what);
    } else {
        if (!want && (f = family_of(&l, spec->sub))) want = f->hub;
        if (!want) {
            char names[256];
            family_list(names, sizeof names);
            s = ac_error(AC_ERR_MODEL,
                         "%s: the repository holds no model of a family this build runs (%s)%s; give --include "
                         "PATTERN to fetch files anyway",
                         what, names, hub_offline() ? " among the files in the cache" : "");
        }
        for (const char *const *p = want ? want->needs : NULL; !s && p && *p; p++) {
            if (!hub_offline() && !listed(&l, spec->sub, *p))
                s = ac_error(AC_ERR_MODEL, "%s: the repository has no %s, which a %s model needs", what, *p,
                             f ? f->name : "package of this kind");
            else s = fetch_one(&r, &l, spec->sub, *p);
        }
        if (!s && want) s = fetch_matching(&r, &l, spec->sub, want->wants, FNM_PATHNAME, &n);
    }
    char local[HUB_PATH];
    if (!s) s = hub_cache_snapshot(&r, l.commit, spec->sub, local);
    hub_listing_free(&l);
    AC_TRY(s);
    if (want && want->companion) AC_TRY(pull(want->companion, NULL, companion, NULL));
    if (!(*dir = strdup(local))) return ac_error(AC_ERR_NOMEM, "out of memory");
    return AC_OK;
}

static ac_status pull(const char *text, const char *const *include, char **dir, char **companion)
{
    *dir = NULL;
    if (companion) *companion = NULL;
    hub_spec spec;
    AC_TRY(hub_spec_parse(strncmp(text, "hf:", 3) == 0 ? text + 3 : text, &spec));
    /* a companion comes with the files its family entry lists */
    const ac_hub_files *want = NULL;
    for (int i = 0; !companion && ac_family_at(i); i++) {
        const ac_hub_files *h = ac_family_at(i)->hub;
        if (h && h->companion && strcmp(h->companion, text) == 0) want = h->companion_files;
    }
    char *unused = NULL, **comp = companion ? companion : &unused;
    ac_status s = pull_repo(&spec, include, want, dir, comp);
    if (s) {
        free(*comp);
        *comp = NULL;
    }
    free(unused);
    return s;
}

ac_status ac_hub_model(const char *path, char **local, char **whisper)
{
    return pull(path, NULL, local, whisper);
}

ac_status ac_hub_pull(const char *text, const ac_hub_options *opt, char **path)
{
    ac_error_clear();
    *path = NULL;
    ac_hub_options o;
    ac_hub_options_default(&o);
    if (opt) AC_TRY(ac_struct_take(&o, sizeof o, opt, "ac_hub_options"));
    if (!text) return ac_error(AC_ERR_ARG, "no repository given");
    int was = o.offline ? hub_set_offline(1) : -1;
    char *companion = NULL;
    ac_status s = pull(text, o.include, path, &companion);
    if (was >= 0) hub_set_offline(was);
    free(companion);
    return s;
}

ac_status ac_hub_files_only(const char *path, const char *const *patterns, char **local)
{
    return pull(path, patterns, local, NULL);
}
