#include "default_model.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH set to ROOT/SUB/ID when that folder holds FILE. */
static int found(char *path, size_t size, const char *root, const char *sub, const char *id, const char *file)
{
    char p[PATH_MAX + 128];
    struct stat sb;
    snprintf(path, size, "%s/%s/%s", root, sub, id);
    snprintf(p, sizeof p, "%s/%s", path, file);
    return stat(p, &sb) == 0;
}

/* The bundled package ID (holding FILE), or NULL. */
static const char *bundled(char *path, size_t size, const char *id, const char *file)
{
    /* the executable's folder and its parent: build/audioc -> models/ of
     * the checkout, PREFIX/bin/audioc -> PREFIX/share/audioc/models/ */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash) break;
            *slash = 0;
            if (found(path, size, exe, "models", id, file) || found(path, size, exe, "share/audioc/models", id, file))
                return path;
        }
    }
#ifdef AUDIOC_SOURCE_DIR
    if (found(path, size, AUDIOC_SOURCE_DIR, "models", id, file)) return path;
#endif
    return NULL;
}

const char *default_asr_model(void)
{
    static char path[PATH_MAX + 64];
    const char *env = getenv("AUDIOC_ASR_MODEL");
    return env && *env ? env : bundled(path, sizeof path, DEFAULT_MODEL_ID, "config.json");
}

const char *default_vad_model(void)
{
    static char path[PATH_MAX + 64];
    const char *env = getenv("AUDIOC_VAD_MODEL");
    return env && *env ? env : bundled(path, sizeof path, DEFAULT_VAD_ID, DEFAULT_VAD_FILE);
}
