/* The reference voices of --voice ID=PATH[:TRANSCRIPT], kept in the
 * server's configuration: decoded once at start-up, shared read-only by
 * every request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speech.h"

int voice_add(server_config *cfg, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1] || eq[1] == ':' || (size_t)(eq - spec) >= sizeof cfg->voices->id) {
        fprintf(stderr, "audioc-server: --voice '%s': expected ID=REF.wav[:transcript] with an ID of 1..63 "
                "characters\n", spec);
        return -1;
    }
    served_voice *v = realloc(cfg->voices, (size_t)(cfg->n_voices + 1) * sizeof *v);
    if (!v) return -1;
    cfg->voices = v;
    served_voice *x = &v[cfg->n_voices];
    memset(x, 0, sizeof *x);
    snprintf(x->id, sizeof x->id, "%.*s", (int)(eq - spec), spec);
    if (voice_find(cfg, x->id)) {
        fprintf(stderr, "audioc-server: voice id '%s' is given twice\n", x->id);
        return -1;
    }
    /* the path ends at the first ':' (the transcript may hold more) */
    const char *colon = strchr(eq + 1, ':');
    size_t len = colon ? (size_t)(colon - eq - 1) : strlen(eq + 1);
    char *path = malloc(len + 1);
    if (!path) return -1;
    memcpy(path, eq + 1, len);
    path[len] = 0;
    x->path = path;
    x->transcript = colon && colon[1] ? colon + 1 : NULL;
    cfg->n_voices++;
    return 0;
}

int voices_load(server_config *cfg)
{
    if (cfg->n_voices && !find_model(cfg, NULL, AC_TASK_VOICE)) {
        fprintf(stderr, "audioc-server: --voice needs a voice model: give --model ID=VEVO2_PACKAGE\n");
        return -1;
    }
    ac_model *model = cfg->n_voices ? find_model(cfg, NULL, AC_TASK_VOICE)->model : NULL;
    for (int i = 0; i < cfg->n_voices; i++) {
        served_voice *v = &cfg->voices[i];
        ac_audio_input in = ac_input_file(v->path);
        /* a voice every request would fail on is the operator's mistake, told now */
        if (ac_voice_check_reference(model, &in) != AC_OK) {
            fprintf(stderr, "audioc-server: voice '%s': %s%s\n", v->id, ac_last_error(),
                    cfg->lenient_voices ? " (left out: --lenient-voices)" : " (--lenient-voices leaves it out)");
            if (!cfg->lenient_voices) return -1;
            free((char *)v->path);
            memmove(v, v + 1, (size_t)(cfg->n_voices - i - 1) * sizeof *v);
            cfg->n_voices--;
            i--;
            continue;
        }
        if (ac_audio_decode(&in, VOICE_RATE, &v->pcm, &v->n, NULL) != AC_OK) {
            fprintf(stderr, "audioc-server: voice '%s': %s\n", v->id, ac_last_error());
            return -1;
        }
        if (v->n == 0) {
            fprintf(stderr, "audioc-server: voice '%s': %s has no audio samples\n", v->id, v->path);
            return -1;
        }
        fprintf(stderr, "audioc-server: voice '%s': %.2f s from %s%s\n", v->id, (double)v->n / VOICE_RATE, v->path,
                v->transcript ? ", with its transcript" : "");
    }
    return 0;
}

void voices_free(server_config *cfg)
{
    for (int i = 0; i < cfg->n_voices; i++) {
        ac_free(cfg->voices[i].pcm);
        free((char *)cfg->voices[i].path);
    }
    free(cfg->voices);
    cfg->voices = NULL;
    cfg->n_voices = 0;
}

const served_voice *voice_find(const server_config *cfg, const char *id)
{
    for (int i = 0; i < cfg->n_voices; i++)
        if (strcmp(cfg->voices[i].id, id) == 0) return &cfg->voices[i];
    return NULL;
}

const served_voice *voice_at(const server_config *cfg, int i)
{
    return i >= 0 && i < cfg->n_voices ? &cfg->voices[i] : NULL;
}
