/* The family table, and what it answers: which family a path holds
 * (ac_model_probe), loading and freeing models, names of families and tasks. */
#include "api/family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/input.h"
#include "base/error.h"

static const ac_family *const families[] = {&ac_family_silero_vad, &ac_family_marblenet_vad, &ac_family_hviske_asr,
                                          &ac_family_hviske_v6, &ac_family_vevo2};
enum { N_FAMILIES = sizeof families / sizeof *families, N_TASKS = AC_TASK_VOICE + 1 };

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

static ac_status probe(const char *path, const ac_family **out)
{
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "no model path given");
    struct stat sb;
    if (stat(path, &sb) != 0) return ac_error(AC_ERR_IO, "%s: no such file or folder", path);
    char list[256];
    if (S_ISDIR(sb.st_mode)) {
        for (int i = 0; i < N_FAMILIES && !*out; i++)
            if (families[i]->probe(path, NULL)) *out = families[i];
        if (!*out)
            return ac_error(AC_ERR_MODEL, "%s: this folder holds no model of a family this build runs (%s)", path,
                            name_list(AC_TASK_ANY, list, sizeof list));
        return AC_OK;
    }
    ac_tensor_file *tf;
    AC_TRY(ac_tensor_file_open(path, &tf));
    for (int i = 0; i < N_FAMILIES && !*out; i++)
        if (families[i]->probe(path, tf)) *out = families[i];
    ac_tensor_file_close(tf);
    if (!*out)
        return ac_error(AC_ERR_MODEL, "%s: the tensors are of no family this build runs (%s)", path,
                        name_list(AC_TASK_ANY, list, sizeof list));
    return AC_OK;
}

ac_status ac_model_probe(const char *path, const char **family, ac_task *task)
{
    ac_error_clear();
    const ac_family *f;
    AC_TRY(probe(path, &f));
    if (family) *family = f->name;
    if (task) *task = f->task;
    return AC_OK;
}

void ac_load_options_init(ac_load_options *o, size_t size)
{
    ac_load_options d = {.struct_size = size, .whisper = NULL};
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

ac_status ac_model_load(const char *path, const char *family, ac_model **out)
{
    ac_error_clear();
    return ac_model_load_with(path, family, NULL, out);
}

ac_status ac_model_load_with(const char *path, const char *family, const ac_load_options *opt, ac_model **out)
{
    ac_error_clear();
    *out = NULL;
    ac_load_options o;
    ac_load_options_default(&o);
    if (opt) AC_TRY(ac_struct_take(&o, sizeof o, opt, "ac_load_options"));
    if (!path) return ac_error(AC_ERR_ARG, "no model path given");
    const ac_family *f = NULL;
    if (family) {
        for (int i = 0; i < N_FAMILIES && !f; i++)
            if (strcmp(families[i]->name, family) == 0) f = families[i];
        char list[256];
        if (!f) return ac_error(AC_ERR_ARG, "unknown family '%s' (%s)", family, name_list(AC_TASK_ANY, list, sizeof list));
    } else {
        AC_TRY(probe(path, &f));
    }
    ac_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    m->family = f;
    ac_status s = ac_scratch_pool_init(&m->scratch);
    if (s) {
        free(m);
        return s;
    }
    if ((s = f->load(path, &o, &m->impl))) {
        ac_scratch_pool_free(&m->scratch);
        free(m);
        return s;
    }
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
