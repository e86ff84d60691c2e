/* Silero VAD in the family table. */
#include "api/family.h"
#include "models/silero_vad/silero_vad.h"

static int probe(const char *path, const ac_tensor_file *tf)
{
    if (!tf) return ac_dir_has(path, "silero_vad_16k.safetensors");
    return ac_tensor_file_find(tf, "stft_conv.weight") && ac_tensor_file_find(tf, "lstm_cell.weight_ih");
}

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    return ac_silero_load(path, (ac_silero **)m);
}
static void free_model(void *m) { ac_silero_free(m); }
static int rate(const void *m) { return AC_SILERO_RATE; }
static int hop(const void *m) { return AC_SILERO_CHUNK; }
static ac_status stream_new(const void *m, void **s) { return ac_silero_stream_new(m, (ac_silero_stream **)s); }
static ac_status feed(void *s, const float *x, size_t n, ac_floatvec *p) { return ac_silero_stream_feed(s, x, n, p); }
static ac_status finish(void *s, ac_floatvec *p) { return ac_silero_stream_finish(s, p); }
static void stream_free(void *s) { ac_silero_stream_free(s); }

static ac_status speech(const void *m, const float *probs, size_t n_probs, int64_t n_samples,
                        const ac_vad_options *o, ac_vad_segment **out, size_t *n_out)
{
    return ac_silero_speech(probs, n_probs, n_samples, o, out, n_out);
}

static const ac_vad_ops vad = {.stream_new = stream_new, .feed = feed, .finish = finish, .stream_free = stream_free,
                               .speech = speech, .pad = ac_silero_pad, .hop = hop};

static const char *const hub_files[] = {"silero_vad_16k.safetensors", NULL};
static const ac_hub_files hub = {.marks = hub_files, .needs = hub_files};

const ac_family ac_family_silero_vad = {
    .name = "silero_vad", .task = AC_TASK_VAD,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .vad = &vad,
    .hub = &hub,
};
