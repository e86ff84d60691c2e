/* The file layout of a published Vevo2 package. */
#include "models/vevo2/package.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

#define FM_DIR "acoustic_modeling/fm_emilia101k_singnet7k_repa"

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

ac_status vevo2_paths_find(const char *dir, const char *whisper, vevo2_paths *p)
{
    memset(p, 0, sizeof *p);
    if (!exists(dir, 1)) return ac_error(AC_ERR_IO, "%s: not a folder (a Vevo2 package is a folder)", dir);
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
    AC_TRY(join(p->ar_dir, p->dir, "contentstyle_modeling/posttrained"));
    if (whisper) {
        if (!exists(whisper, 0) && !exists(whisper, 1))
            return ac_error(AC_ERR_IO, "--whisper %s: no such file or folder", whisper);
        if (strlen(whisper) >= VEVO2_PATH) return ac_error(AC_ERR_ARG, "%s: the path is too long", whisper);
        strcpy(p->whisper, whisper);
    }
    return AC_OK;
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
