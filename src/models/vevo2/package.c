/* The file layout of a published Vevo2 package: the folder, or the GGUF
 * file of the ggml runtime (docs/models/vevo2_gguf.md). */
#include "models/vevo2/package.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "io/tensor_file.h"

#define FM_DIR "acoustic_modeling/fm_emilia101k_singnet7k_repa"
#define AR_DIR "contentstyle_modeling/posttrained"

/* The description's names of the parts and files, and where a package
 * without a description keeps them (the published folder's paths). */
static const char *const part_keys[VEVO2_N_PARTS] = {
    [VEVO2_PART_CONTENT_STYLE] = "content_style_tokenizer_weights",
    [VEVO2_PART_PROSODY] = "prosody_tokenizer_weights",
    [VEVO2_PART_AR] = "ar_weights",
    [VEVO2_PART_FM] = "fm_weights",
    [VEVO2_PART_STATS] = "fm_whisper_stats",
    [VEVO2_PART_VOCODER] = "vocoder_weights_0",
    [VEVO2_PART_WHISPER] = "whisper_weights",
};
static const struct {
    const char *key, *path;
} files[VEVO2_N_FILES] = {
    [VEVO2_FILE_FM_CONFIG] = {"fm_config", FM_DIR "/config.json"},
    [VEVO2_FILE_VOCODER_CONFIG] = {"vocoder_config", "vocoder/config.json"},
    [VEVO2_FILE_AR_CONFIG] = {"ar_config", AR_DIR "/config.json"},
    [VEVO2_FILE_AR_AMPHION] = {"ar_amphion_config", AR_DIR "/amphion_config.json"},
    [VEVO2_FILE_AR_GENERATION] = {"ar_generation_config", AR_DIR "/generation_config.json"},
    [VEVO2_FILE_AR_TOKENIZER] = {"ar_tokenizer_json", AR_DIR "/tokenizer.json"},
    [VEVO2_FILE_WHISPER_CONFIG] = {"whisper_config", "whisper-medium/config.json"},
};

const char *vevo2_part_key(vevo2_part part) { return part_keys[part]; }
const char *vevo2_file_key(vevo2_file f) { return files[f].key; }
const char *vevo2_file_default(vevo2_file f) { return files[f].path; }

static int exists(const char *path, int want_dir)
{
    struct stat sb;
    return stat(path, &sb) == 0 && (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

static ac_status join(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, VEVO2_PATH, "%s/%s", dir, rel);
    if (n < 0 || n >= VEVO2_PATH) return ac_error(AC_ERR_ARG, "%s: the path is too long", dir);
    return AC_OK;
}

int vevo2_probe(const char *dir)
{
    char a[VEVO2_PATH], b[VEVO2_PATH];
    return !join(a, dir, FM_DIR "/config.json") && !join(b, dir, "vocoder/config.json") && exists(a, 0) &&
           exists(b, 0);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int vevo2_probe_gguf(const ac_tensor_file *tf)
{
    const char *family = ac_tensor_file_meta(tf, "audiocpp.model_spec.family");
    if (family) return strcmp(family, "vevo2") == 0;
    return ac_tensor_file_embedded(tf, files[VEVO2_FILE_FM_CONFIG].path) != NULL;
}

/* The string OBJ.KEY of the description, shorter than N bytes, or NULL when absent. */
static ac_status desc_string(const ac_config *c, const cJSON *obj, const char *where, const char *key, size_t n,
                             const char **value)
{
    *value = NULL;
    if (!cJSON_GetObjectItemCaseSensitive(obj, key)) return AC_OK;
    AC_TRY(ac_config_string(c, obj, where, key, value));
    if (!*value || strlen(*value) >= n)
        return ac_error(AC_ERR_MODEL, "%s: '%s.%s' must be a string shorter than %zu bytes", c->file, where, key, n);
    return AC_OK;
}

/* The package description (audiocpp.model_spec.json): its GGUF source's
 * files ("model:<path in the package>") and tensors ({"prefix": P}: the
 * part's tensors are named "P/<name>"). Parts and files it does not name
 * keep their defaults. */
static ac_status read_description(vevo2_paths *p, const char *json)
{
    char name[VEVO2_PATH + 32];
    snprintf(name, sizeof name, "audiocpp.model_spec.json in %s", base_name(p->gguf));
    ac_config *c;
    AC_TRY(ac_config_parse(json, strlen(json), name, &c));
    const cJSON *sources, *src = NULL;
    ac_status s = ac_config_array(c, NULL, NULL, "sources", &sources);
    for (const cJSON *e = sources ? sources->child : NULL; !s && e && !src; e = e->next) {
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(e, "format");
        if (cJSON_IsObject(e) && cJSON_IsString(fmt) && strcmp(fmt->valuestring, "gguf") == 0) src = e;
    }
    if (!s && !src) s = ac_error(AC_ERR_MODEL, "%s: no source of format \"gguf\" in 'sources'", c->file);
    const cJSON *fs = NULL, *ts = NULL;
    if (!s && cJSON_GetObjectItemCaseSensitive(src, "files")) s = ac_config_object(c, src, "sources[gguf]", "files", &fs);
    if (!s && cJSON_GetObjectItemCaseSensitive(src, "tensors"))
        s = ac_config_object(c, src, "sources[gguf]", "tensors", &ts);
    for (int i = 0; !s && fs && i < VEVO2_N_FILES; i++) {
        const char *v;
        s = desc_string(c, fs, "sources[gguf].files", files[i].key, VEVO2_PATH, &v);
        if (s || !v) continue;
        const char *colon = strchr(v, ':'), *rel = colon ? colon + 1 : v; /* "root:path" */
        while (rel[0] == '.' && rel[1] == '/') rel += 2;
        snprintf(p->file[i], sizeof p->file[i], "%s", rel);
    }
    for (int i = 0; !s && ts && i < VEVO2_N_PARTS; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(ts, part_keys[i]);
        if (!t) continue;
        char where[160];
        snprintf(where, sizeof where, "sources[gguf].tensors.%s", part_keys[i]);
        if (!cJSON_IsObject(t)) {
            s = ac_error(AC_ERR_MODEL, "%s: '%s' must be an object", c->file, where);
            break;
        }
        const char *v;
        s = desc_string(c, t, where, "prefix", VEVO2_NS - 1, &v);
        if (!s && v) snprintf(p->ns[i], sizeof p->ns[i], v[0] ? "%s/" : "%s", v);
    }
    ac_config_free(c);
    return s;
}

/* A GGUF package at PATH: opened, and its description read. */
static ac_status find_gguf(vevo2_paths *p, const char *path)
{
    if (strlen(path) >= VEVO2_PATH) return ac_error(AC_ERR_ARG, "%s: the path is too long", path);
    strcpy(p->gguf, path);
    const char *slash = strrchr(path, '/');
    snprintf(p->dir, sizeof p->dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!p->dir[0]) strcpy(p->dir, "/");
    for (int i = 0; i < VEVO2_N_PARTS; i++) snprintf(p->ns[i], sizeof p->ns[i], "%s/", part_keys[i]);
    for (int i = 0; i < VEVO2_N_FILES; i++) snprintf(p->file[i], sizeof p->file[i], "%s", files[i].path);
    AC_TRY(ac_tensor_file_open(path, &p->gguf_file));
    const char *json = ac_tensor_file_meta(p->gguf_file, "audiocpp.model_spec.json");
    if (json) AC_TRY(read_description(p, json));
    /* messages name the GGUF for every part */
    strcpy(p->fm_config, path), strcpy(p->fm_weights, path), strcpy(p->whisper_stats, path);
    strcpy(p->content_style, path), strcpy(p->prosody, path), strcpy(p->vocoder_config, path);
    strcpy(p->vocoder_weights, path), strcpy(p->ar_dir, path);
    return AC_OK;
}

void vevo2_paths_close(vevo2_paths *p)
{
    ac_tensor_file_close(p->gguf_file);
    p->gguf_file = NULL;
}

ac_status vevo2_paths_find(const char *dir, const char *whisper, vevo2_paths *p)
{
    memset(p, 0, sizeof *p);
    if (whisper) {
        if (!exists(whisper, 0) && !exists(whisper, 1))
            return ac_error(AC_ERR_IO, "--whisper %s: no such file or folder", whisper);
        if (strlen(whisper) >= VEVO2_PATH) return ac_error(AC_ERR_ARG, "%s: the path is too long", whisper);
        strcpy(p->whisper, whisper);
    }
    if (exists(dir, 0)) return find_gguf(p, dir);
    if (!exists(dir, 1))
        return ac_error(AC_ERR_IO, "%s: neither a folder nor a file (a Vevo2 package is a folder or a GGUF file)", dir);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if (n >= VEVO2_PATH) return ac_error(AC_ERR_ARG, "%s: the path is too long", dir);
    memcpy(p->dir, dir, n);
    AC_TRY(join(p->fm_config, p->dir, FM_DIR "/config.json"));
    AC_TRY(join(p->fm_weights, p->dir, FM_DIR "/model.safetensors"));
    /* the C++ port converts whisper_stats.pt to .safetensors; either will do */
    AC_TRY(join(p->whisper_stats, p->dir, FM_DIR "/whisper_stats.safetensors"));
    if (!exists(p->whisper_stats, 0)) AC_TRY(join(p->whisper_stats, p->dir, FM_DIR "/whisper_stats.pt"));
    AC_TRY(join(p->content_style, p->dir, "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors"));
    AC_TRY(join(p->prosody, p->dir, "tokenizer/prosody_fvq512_6.25hz/model.safetensors"));
    AC_TRY(join(p->vocoder_config, p->dir, "vocoder/config.json"));
    AC_TRY(join(p->vocoder_weights, p->dir, "vocoder/model.safetensors"));
    AC_TRY(join(p->ar_dir, p->dir, AR_DIR));
    return AC_OK;
}

/* Whether the GGUF holds a tensor under NS. */
static int has_namespace(const ac_tensor_file *tf, const char *ns)
{
    size_t n = strlen(ns);
    for (size_t i = 0; i < tf->n_tensors; i++)
        if (strncmp(tf->tensors[i].name, ns, n) == 0) return 1;
    return 0;
}

int vevo2_has_part(const vevo2_paths *p, vevo2_part part)
{
    return !p->gguf_file || has_namespace(p->gguf_file, p->ns[part]);
}

ac_status vevo2_open_part(const vevo2_paths *p, vevo2_part part, const char *path, ac_weights **out)
{
    *out = NULL;
    if (!p->gguf_file) return ac_weights_open(path, out);
    if (!has_namespace(p->gguf_file, p->ns[part]))
        return ac_error(AC_ERR_MODEL, "%s: no tensors under the namespace '%s' (the part %s)", p->gguf, p->ns[part],
                        part_keys[part]);
    ac_weights *w;
    AC_TRY(ac_weights_open(p->gguf, &w));
    ac_status s = ac_weights_set_namespace(w, p->ns[part]);
    if (s) {
        ac_weights_free(w);
        return s;
    }
    *out = w;
    return AC_OK;
}

const ac_embedded_file *vevo2_embedded(const vevo2_paths *p, vevo2_file f)
{
    return p->gguf_file ? ac_tensor_file_embedded(p->gguf_file, p->file[f]) : NULL;
}

ac_status vevo2_read_config(const vevo2_paths *p, vevo2_file f, const char *path, ac_config **out)
{
    if (!p->gguf_file) return ac_config_load_relaxed(path, out);
    const ac_embedded_file *e = vevo2_embedded(p, f);
    if (!e)
        return ac_error(AC_ERR_MODEL, "%s: no embedded file '%s' (the package's %s)", p->gguf, p->file[f],
                        files[f].key);
    char name[2 * VEVO2_PATH]; /* "<path>/config.json in x.gguf": messages name both */
    snprintf(name, sizeof name, "%s in %s", p->file[f], base_name(p->gguf));
    return ac_config_parse_relaxed(e->data, e->size, name, out);
}

/* openai-whisper's download folder, where Amphion's code has Whisper fetch
 * medium.pt: $XDG_CACHE_HOME/whisper, else ~/.cache/whisper. Into OUT[n]
 * the medium.pt there when it exists. */
static int cached_whisper(char *out, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0]) {
        int k = snprintf(out, n, "%s/whisper/medium.pt", xdg);
        if (k > 0 && (size_t)k < n && exists(out, 0)) return 1;
    }
    if (home && home[0]) {
        int k = snprintf(out, n, "%s/.cache/whisper/medium.pt", home);
        if (k > 0 && (size_t)k < n && exists(out, 0)) return 1;
    }
    return 0;
}

ac_status vevo2_find_whisper(vevo2_paths *p)
{
    if (p->whisper[0]) return AC_OK;
    static const char *const rel[] = {"whisper-medium", "medium.pt", "../whisper-medium", "../medium.pt"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        char c[VEVO2_PATH];
        AC_TRY(join(c, p->dir, rel[i]));
        if (exists(c, i % 2 == 0)) {
            strcpy(p->whisper, c);
            return AC_OK;
        }
    }
    if (cached_whisper(p->whisper, sizeof p->whisper)) return AC_OK;
    p->whisper[0] = 0;
    return ac_error(AC_ERR_IO,
                    "%s: no Whisper-medium encoder found (looked for whisper-medium/ and medium.pt in the package "
                    "and beside it, and for medium.pt in openai-whisper's download folder, $XDG_CACHE_HOME/whisper "
                    "or ~/.cache/whisper); give it with --whisper PATH (OpenAI's medium.pt or a whisper-medium folder)",
                    p->dir);
}
