#include "default_model.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_package(const char *dir)
{
    char p[PATH_MAX + 32];
    struct stat sb;
    snprintf(p, sizeof p, "%s/config.json", dir);
    return stat(p, &sb) == 0;
}

const char *default_asr_model(void)
{
    static char path[PATH_MAX + 64];
    const char *env = getenv("AUDIOC_ASR_MODEL");
    if (env && *env) return env;
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
            snprintf(path, sizeof path, "%s/models/" DEFAULT_MODEL_ID, exe);
            if (is_package(path)) return path;
            snprintf(path, sizeof path, "%s/share/audioc/models/" DEFAULT_MODEL_ID, exe);
            if (is_package(path)) return path;
        }
    }
#ifdef AUDIOC_SOURCE_DIR
    snprintf(path, sizeof path, "%s/models/" DEFAULT_MODEL_ID, AUDIOC_SOURCE_DIR);
    if (is_package(path)) return path;
#endif
    return NULL;
}
