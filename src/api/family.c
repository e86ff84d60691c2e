/* The family table, and what it answers: which family a path holds
 * (ac_model_probe), loading and freeing models, names of families and tasks. */
#include "api/family.h"

#include <dirent.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/input.h"
#include "base/error.h"

/* hviske_v6 before hviske_asr, which takes any GGUF embedding a config.json */
static const ac_family *const families[] = {&ac_family_silero_vad, &ac_family_marblenet_vad, &ac_family_hviske_v6,
                                          &ac_family_hviske_asr, &ac_family_vevo2};
enum { N_FAMILIES = sizeof families / sizeof *families, N_TASKS = AC_TASK_VOICE + 1 };

const ac_family *ac_family_at(int i) { return i >= 0 && i < N_FAMILIES ? families[i] : NULL; }

const char *ac_task_name(ac_task t)
{
    switch (t) {
    case AC_TASK_ASR: return "transcription";
    case AC_TASK_VAD: return "vad";
    case AC_TASK_VOICE: return "voice";
    case AC_TASK_ANY: return "any";
    }
    return "unknown";
}

/* One NULL-terminated list of names per task (AC_TASK_ANY: all). */
static const char *names[N_TASKS][N_FAMILIES + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void)
{
    for (int t = 0; t < N_TASKS; t++)
        for (int i = 0, n = 0; i < N_FAMILIES; i++)
            if (t == AC_TASK_ANY || families[i]->task == (ac_task)t) names[t][n++] = families[i]->name;
}

const char *const *ac_families(ac_task task)
{
    pthread_once(&names_once, fill_names);
    return (unsigned)task < N_TASKS ? names[task] : names[0] + N_FAMILIES;
}

/* "a, b, c" of the names of TASK's families. */
static const char *name_list(ac_task task, char *buf, size_t size)
{
    buf[0] = 0;
    for (const char *const *n = ac_families(task); *n; n++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", n == ac_families(task) ? "" : ", ", *n);
    return buf;
}

int ac_dir_has(const char *dir, const char *name)
{
    char p[4200];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

#define PATH_LEN 4200

static int is_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A package as one GGUF file in a folder (the layout the ggml runtime
 * documents: DIR/model.gguf, or the only *.gguf in DIR) into OUT; "" when
 * DIR holds none. Several *.gguf without a model.gguf are refused: which
 * one is meant is the user's to say. */
static ac_status folder_gguf(const char *dir, char *out, size_t size)
{
    out[0] = 0;
    char p[PATH_LEN];
    snprintf(p, sizeof p, "%s/model.gguf", dir);
    if (is_regular(p)) {
        snprintf(out, size, "%s", p);
        return AC_OK;
    }
    DIR *d = opendir(dir);
    if (!d) return ac_error(AC_ERR_IO, "%s: cannot open the folder (%s)", dir, strerror(errno));
    int found = 0;
    char first[256] = "", second[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcasecmp(e->d_name + n - 5, ".gguf") != 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!is_regular(p)) continue;
        if (found == 0) snprintf(out, size, "%s", p), snprintf(first, sizeof first, "%s", e->d_name);
        else if (found == 1) snprintf(second, sizeof second, "%s", e->d_name);
        found++;
    }
    closedir(d);
    if (found > 1) {
        out[0] = 0;
        return ac_error(AC_ERR_MODEL, "%s: the folder holds %d .gguf files (%s, %s%s) and no model.gguf; name the "
                        "file to load", dir, found, first, second, found > 2 ? ", ..." : "");
    }
    return AC_OK;
}

/* The family of PATH, and in RESOLVED the path its loader takes: PATH
 * itself, or the GGUF file a folder holds (folder_gguf) when no family
 * reads the folder as it is. */
ac_status ac_family_probe(const char *path, const ac_family **out, char *resolved, size_t size)
{
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "no model path given");
    struct stat sb;
    if (stat(path, &sb) != 0) return ac_error(AC_ERR_IO, "%s: no such file or folder", path);
    if (strlen(path) >= size) return ac_error(AC_ERR_ARG, "%s: the path is too long", path);
    strcpy(resolved, path);
    char list[256];
    if (S_ISDIR(sb.st_mode)) {
        for (int i = 0; i < N_FAMILIES && !*out; i++)
            if (families[i]->probe(path, NULL)) *out = families[i];
        if (*out) return AC_OK;
        AC_TRY(folder_gguf(path, resolved, size));
        if (!resolved[0])
            return ac_error(AC_ERR_MODEL, "%s: this folder holds no model of a family this build runs (%s), and no "
                            ".gguf file", path, name_list(AC_TASK_ANY, list, sizeof list));
    }
    ac_tensor_file *tf;
    AC_TRY(ac_tensor_file_open(resolved, &tf));
    for (int i = 0; i < N_FAMILIES && !*out; i++)
        if (families[i]->probe(resolved, tf)) *out = families[i];
    ac_tensor_file_close(tf);
    if (!*out)
        return ac_error(AC_ERR_MODEL, "%s: the tensors are of no family this build runs (%s)", resolved,
                        name_list(AC_TASK_ANY, list, sizeof list));
    return AC_OK;
}

ac_status ac_model_probe(const char *path, const char **family, ac_task *task)
{
    ac_error_clear();
    const ac_family *f;
    char *local = NULL, *whisper = NULL, resolved[PATH_LEN];
    if (path && strncmp(path, "hf:", 3) == 0) AC_TRY(ac_hub_model(path, &local, &whisper));
    ac_status s = ac_family_probe(local ? local : path, &f, resolved, sizeof resolved);
    free(local);
    free(whisper);
    AC_TRY(s);
    if (family) *family = f->name;
    if (task) *task = f->task;
    return AC_OK;
}

void ac_load_options_init(ac_load_options *o, size_t size)
{
    ac_load_options d = {.struct_size = size, .whisper = NULL, .weights = AC_WEIGHTS_STORED};
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

static const char *const weight_type_names[] = {
    [AC_WEIGHTS_STORED] = "stored", [AC_WEIGHTS_F32] = "f32", [AC_WEIGHTS_F16] = "f16",
    [AC_WEIGHTS_BF16] = "bf16",     [AC_WEIGHTS_Q8_0] = "q8_0",
};
#define N_WEIGHT_TYPES (int)(sizeof weight_type_names / sizeof *weight_type_names)

const char *ac_weight_type_name(ac_weight_type t)
{
    return (int)t >= 0 && (int)t < N_WEIGHT_TYPES ? weight_type_names[t] : "?";
}

ac_status ac_weight_type_parse(const char *name, ac_weight_type *out)
{
    ac_error_clear();
    for (int i = 0; name && i < N_WEIGHT_TYPES; i++)
        if (strcasecmp(name, weight_type_names[i]) == 0) {
            *out = (ac_weight_type)i;
            return AC_OK;
        }
    return ac_error(AC_ERR_ARG, "unknown weight type '%s' (stored, f32, f16, bf16 or q8_0)", name ? name : "");
}

ac_status ac_model_load(const char *path, const char *family, ac_model **out)
{
    ac_error_clear();
    return ac_model_load_with(path, family, NULL, out);
}

static ac_status load_local(const char *path, const char *family, const ac_load_options *o, ac_model **out);

ac_status ac_model_load_with(const char *path, const char *family, const ac_load_options *opt, ac_model **out)
{
    ac_error_clear();
    *out = NULL;
    ac_load_options o;
    ac_load_options_default(&o);
    if (opt) AC_TRY(ac_struct_take(&o, sizeof o, opt, "ac_load_options"));
    if (!path) return ac_error(AC_ERR_ARG, "no model path given");
    if ((int)o.weights < 0 || (int)o.weights >= N_WEIGHT_TYPES)
        return ac_error(AC_ERR_ARG, "%s: ac_load_options.weights %d is no ac_weight_type", path, (int)o.weights);
    if (strncmp(path, "hf:", 3) != 0) return load_local(path, family, &o, out);
    /* a model on the Hub: its files in the cache, then loaded from there */
    char *local, *whisper;
    AC_TRY(ac_hub_model(path, &local, &whisper));
    if (!o.whisper) o.whisper = whisper;
    ac_status s = load_local(local, family, &o, out);
    free(local);
    free(whisper);
    return s;
}

static ac_status load_local(const char *path, const char *family, const ac_load_options *o, ac_model **out)
{
    const ac_family *f = NULL;
    char resolved[PATH_LEN];
    if (family) {
        for (int i = 0; i < N_FAMILIES && !f; i++)
            if (strcmp(families[i]->name, family) == 0) f = families[i];
        char list[256];
        if (!f) return ac_error(AC_ERR_ARG, "unknown family '%s' (%s)", family, name_list(AC_TASK_ANY, list, sizeof list));
        if (strlen(path) >= sizeof resolved) return ac_error(AC_ERR_ARG, "%s: the path is too long", path);
        strcpy(resolved, path);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && !f->probe(path, NULL)) {
            AC_TRY(folder_gguf(path, resolved, sizeof resolved));
            if (!resolved[0]) strcpy(resolved, path); /* the loader names what the folder lacks */
        }
    } else {
        AC_TRY(ac_family_probe(path, &f, resolved, sizeof resolved));
    }
    path = resolved;
    ac_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    m->family = f;
    ac_status s = ac_scratch_pool_init(&m->scratch);
    if (s) {
        free(m);
        return s;
    }
    if ((s = f->load(path, o, &m->impl))) {
        ac_scratch_pool_free(&m->scratch);
        free(m);
        return s;
    }
#ifdef __GLIBC__
    /* what a load freed (the tokenizer's JSON, its parse) stays resident
     * under what it keeps: 30 MiB of Hviske v6's, through every request */
    malloc_trim(0);
#endif
    *out = m;
    return AC_OK;
}

const char *ac_model_family(const ac_model *m) { return m->family->name; }
ac_task ac_model_task(const ac_model *m) { return m->family->task; }

void ac_model_free(ac_model *m)
{
    if (!m) return;
    m->family->free(m->impl);
    ac_scratch_pool_free(&m->scratch);
    free(m);
}

ac_status ac_model_check_task(const ac_model *m, ac_task task, const char *what)
{
    if (!m) return ac_error(AC_ERR_ARG, "%s: no model given", what);
    if (m->family->task != task)
        return ac_error(AC_ERR_ARG, "%s: a %s model is for %s, not %s", what, m->family->name,
                        ac_task_name(m->family->task), ac_task_name(task));
    return AC_OK;
}
