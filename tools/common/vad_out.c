#include "vad_out.h"

#include "json_out.h"

static double seconds(int64_t samples, int rate) { return rate ? (double)samples / rate : 0; }

void vad_write_json(FILE *f, const char *key, const char *name, const char *family, const ac_vad_result *r,
                    int probs)
{
    fprintf(f, "{\"%s\":", key);
    json_string(f, name);
    fputs(",\"family\":", f);
    json_string(f, family);
    fprintf(f, ",\"sample_rate\":%d,\"channels\":%d,\"samples\":%lld,\"duration\":%.3f,\"segments\":[",
            r->sample_rate, r->channels, (long long)r->n_samples, seconds(r->n_samples, r->sample_rate));
    for (size_t i = 0; i < r->n_segments; i++) {
        const ac_vad_segment *g = &r->segments[i];
        fprintf(f, "%s{\"start\":%.3f,\"end\":%.3f,\"start_sample\":%lld,\"end_sample\":%lld,\"confidence\":%.4f}",
                i ? "," : "", seconds(g->start, r->sample_rate), seconds(g->end, r->sample_rate),
                (long long)g->start, (long long)g->end, g->confidence);
    }
    fputc(']', f);
    if (probs) {
        fprintf(f, ",\"hop_seconds\":%.6g,\"probs\":[", r->hop_seconds);
        for (size_t i = 0; i < r->n_probs; i++) fprintf(f, "%s%.7g", i ? "," : "", r->probs[i]);
        fputc(']', f);
    }
    fputs("}\n", f);
}
