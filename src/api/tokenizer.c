/* The public tokenizer calls: where a tokenizer lives (a file, a folder, a
 * Vevo2 package folder or GGUF) and the byte-level BPE of src/text behind it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string.h>

#include "api/family.h"
#include "base/error.h"
#include "io/tensor_file.h"
#include "models/vevo2/package.h"
#include "text/bpe.h"

/* A Vevo2 GGUF package's embedded AR tokenizer.json (its description says where). */
static ac_status load_gguf(const char *path, ac_bpe **out)
{
    vevo2_paths *p = malloc(sizeof *p);
    if (!p) return ac_error(AC_ERR_NOMEM, "out of memory");
    ac_status s = vevo2_paths_find(path, NULL, p);
    const ac_embedded_file *e = s ? NULL : vevo2_embedded(p, VEVO2_FILE_AR_TOKENIZER);
    if (!s && !e) s = ac_error(AC_ERR_MODEL, "%s: no embedded tokenizer.json ('%s')", path, p->file[VEVO2_FILE_AR_TOKENIZER]);
    if (!s) s = ac_bpe_parse_json(e->data, e->size, path, out);
    vevo2_paths_close(p);
    free(p);
    return s;
}

static int is_gguf(const char *path)
{
    char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(magic, "GGUF", 4) == 0;
}

/* The AR model's folder in a Vevo2 package, which holds its tokenizer. */
#define VEVO2_AR_DIR "contentstyle_modeling/posttrained"

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static ac_status load(const char *path, ac_tokenizer **out);

/* The files of a tokenizer in a Hub repository: at its top, or in a Vevo2
 * package's AR folder. */
#define TOKENIZER_FILES(dir)                                                                             \
    dir "tokenizer.json", dir "vocab.json", dir "merges.txt", dir "tokenizer_config.json", dir "added_tokens.json", \
        dir "special_tokens_map.json"

ac_status ac_tokenizer_load(const char *path, ac_tokenizer **out)
{
    ac_error_clear();
    if (!out) return ac_error(AC_ERR_ARG, "ac_tokenizer_load: no output pointer");
    *out = NULL;
    if (!path) return ac_error(AC_ERR_ARG, "ac_tokenizer_load: no path");
    if (strncmp(path, "hf:", 3) != 0) return load(path, out);
    static const char *const files[] = {TOKENIZER_FILES(""), TOKENIZER_FILES(VEVO2_AR_DIR "/"), NULL};
    char *local;
    AC_TRY(ac_hub_files_only(path, files, &local));
    ac_status s = load(local, out);
    free(local);
    return s;
}

static ac_status load(const char *path, ac_tokenizer **out)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return ac_error(AC_ERR_IO, "%s: no such file or folder", path);
    ac_bpe *b;
    if (!S_ISDIR(sb.st_mode)) {
        AC_TRY(is_gguf(path) ? load_gguf(path, &b) : ac_bpe_load_json(path, &b));
    } else {
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/" VEVO2_AR_DIR, path);
        AC_TRY(ac_bpe_load_dir(is_dir(sub) ? sub : path, &b));
    }
    *out = (ac_tokenizer *)b;
    return AC_OK;
}

void ac_tokenizer_free(ac_tokenizer *tok) { ac_bpe_free((ac_bpe *)tok); }

int ac_tokenizer_size(const ac_tokenizer *tok) { return ac_bpe_size((const ac_bpe *)tok); }

ac_status ac_tokenize(const ac_tokenizer *tok, const char *text, size_t len, int **ids, size_t *n)
{
    ac_error_clear();
    return ac_bpe_encode((const ac_bpe *)tok, text, len, ids, n);
}

ac_status ac_detokenize(const ac_tokenizer *tok, const int *ids, size_t n, int keep_special, char **text, size_t *len)
{
    ac_error_clear();
    return ac_bpe_decode((const ac_bpe *)tok, ids, n, keep_special, text, len);
}

void ac_free(void *p) { free(p); }
