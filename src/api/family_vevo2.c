/* Vevo2 packages in the family table: voice and singing conversion. */
#include <string.h>

#include "api/family.h"
#include "base/progress.h"
#include "models/vevo2/vevo2.h"

static int probe(const char *path, const ac_tensor_file *tf) { return !tf && vevo2_probe(path); }

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    return vevo2_load(path, o ? o->whisper : NULL, (vevo2_model **)m);
}

static void free_model(void *m) { vevo2_free(m); }
static int rate(const void *m) { return ((const vevo2_model *)m)->mel.sample_rate; }

/* The flow-matching steps on the terminal, and the caller's callback. */
typedef struct {
    const ac_voice_options *o;
    ac_progress bar;
} relay;

static int on_progress(void *user, const char *stage, int done, int total)
{
    relay *r = user;
    if (strcmp(stage, "fm") == 0) {
        if (done == 1) ac_progress_begin(&r->bar, "flow matching", total);
        ac_progress_update(&r->bar, done);
        if (done == total) ac_progress_end(&r->bar);
    }
    return r->o->on_progress && r->o->on_progress(stage, done, total, r->o->user);
}

static ac_status convert(void *m, const float *src, int64_t n, const float *tgt, int64_t nt, const ac_voice_options *o,
                         ac_voice_result *out)
{
    static const vevo2_pitch_mode modes[] = {[AC_PITCH_ESTIMATE] = VEVO2_PITCH_ESTIMATE,
                                             [AC_PITCH_FIXED] = VEVO2_PITCH_FIXED, [AC_PITCH_NONE] = VEVO2_PITCH_NONE};
    relay r = {o, {0}};
    vevo2_convert_options vo = {modes[o->pitch_mode], o->pitch_shift, o->steps, o->seed, o->noise, o->n_noise,
                                on_progress, &r};
    vevo2_timings t;
    ac_status s = vevo2_convert(m, src, n, tgt, nt, &vo, &out->samples, &out->n_samples, &out->pitch_shift, &t);
    ac_progress_end(&r.bar);
    out->timings = (ac_voice_timings){.whisper = t.whisper, .pitch = t.pitch, .chroma = t.chroma,
                                      .tokenizer = t.tokenizer, .timbre_mel = t.timbre_mel, .fm = t.fm,
                                      .vocoder = t.vocoder, .fm_steps = t.fm_steps};
    return s;
}

static const ac_voice_ops voice = {convert};

const ac_family ac_family_vevo2 = {
    .name = "vevo2", .task = AC_TASK_VOICE,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .voice = &voice,
};
