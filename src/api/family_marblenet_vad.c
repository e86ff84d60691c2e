/* MarbleNet VAD in the family table. */
#include "api/family.h"
#include "models/marblenet_vad/marblenet_vad.h"

static int probe(const char *path, const ac_tensor_file *tf)
{
    if (!tf) return ac_dir_has(path, "marblenet_vad.safetensors");
    /* the front end's filterbank (hviske has one too) and the first Jasper block */
    return ac_tensor_file_find(tf, "preprocessor.featurizer.fb") && ac_tensor_file_find(tf, "encoder.encoder.0.mconv.0.conv.weight");
}

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    return ac_marblenet_load(path, (ac_marblenet **)m);
}
static void free_model(void *m) { ac_marblenet_free(m); }

/* Its GGUF embeds the sidecar config the loader reads (a folder's is embedded with the folder's files). */
static ac_status pack(void *m, ac_pack *p)
{
    const char *config = ac_marblenet_config_path(m);
    return config[0] ? ac_pack_file(p, AC_MARBLENET_CONFIG, config) : AC_OK;
}
static int rate(const void *m) { return ac_marblenet_rate(m); }
static int hop(const void *m) { return ac_marblenet_hop(m); }
static ac_status stream_new(const void *m, void **s) { return ac_marblenet_stream_new(m, (ac_marblenet_stream **)s); }
static ac_status feed(void *s, const float *x, size_t n, ac_floatvec *p) { return ac_marblenet_stream_feed(s, x, n, p); }
static ac_status finish(void *s, ac_floatvec *p) { return ac_marblenet_stream_finish(s, p); }
static void stream_free(void *s) { ac_marblenet_stream_free(s); }

/* MarbleNet's segments are runs above the threshold: the other options are Silero's */
static ac_status speech(const void *m, const float *probs, size_t n_probs, int64_t n_samples,
                        const ac_vad_options *o, ac_vad_segment **out, size_t *n_out)
{
    return ac_marblenet_segments(m, probs, n_probs, n_samples, o->threshold, out, n_out);
}

static const ac_vad_ops vad = {.stream_new = stream_new, .feed = feed, .finish = finish, .stream_free = stream_free,
                               .speech = speech, .hop = hop};

static const char *const hub_files[] = {"marblenet_vad.safetensors", NULL};
static const ac_hub_files hub = {.marks = hub_files, .needs = hub_files};

const ac_family ac_family_marblenet_vad = {
    .name = "marblenet_vad", .task = AC_TASK_VAD,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .vad = &vad,
    .hub = &hub,
    .pack = pack,
};
