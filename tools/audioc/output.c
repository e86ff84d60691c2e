#include "output.h"

#include <stdio.h>
#include <string.h>

#include "json_out.h"

int out_format_parse(const char *s, out_format *out)
{
    if (strcmp(s, "text") == 0) *out = OUT_TEXT;
    else if (strcmp(s, "json") == 0) *out = OUT_JSON;
    else if (strcmp(s, "csv") == 0) *out = OUT_CSV;
    else {
        fprintf(stderr, "audioc: --format: '%s' is not one of text, json, csv\n", s);
        return -1;
    }
    return 0;
}

static void put_csv_field(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"') putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static double seconds(int64_t samples, int rate) { return rate ? (double)samples / rate : 0; }

void out_begin(out_format f, int probs)
{
    if (f == OUT_CSV) puts(probs ? "file,index,time,prob" : "file,start,end,start_sample,end_sample,confidence");
}

static void json_result(const char *file, const char *family, const ac_vad_result *r, int probs)
{
    printf("{\"file\":");
    json_string(stdout, file);
    printf(",\"family\":\"%s\",\"sample_rate\":%d,\"channels\":%d,\"samples\":%lld,"
           "\"duration\":%.3f,\"segments\":[",
           family, r->sample_rate, r->channels, (long long)r->n_samples, seconds(r->n_samples, r->sample_rate));
    for (size_t i = 0; i < r->n_segments; i++) {
        const ac_vad_segment *g = &r->segments[i];
        printf("%s{\"start\":%.3f,\"end\":%.3f,\"start_sample\":%lld,\"end_sample\":%lld,\"confidence\":%.4f}",
               i ? "," : "", seconds(g->start, r->sample_rate), seconds(g->end, r->sample_rate),
               (long long)g->start, (long long)g->end, g->confidence);
    }
    printf("]");
    if (probs) {
        printf(",\"hop_seconds\":%.6g,\"probs\":[", r->hop_seconds);
        for (size_t i = 0; i < r->n_probs; i++) printf("%s%.7g", i ? "," : "", r->probs[i]);
        printf("]");
    }
    printf("}\n");
}

void out_vad_result(out_format f, const char *file, const char *family, const ac_vad_result *r,
                    int probs, int several_files)
{
    switch (f) {
    case OUT_JSON:
        json_result(file, family, r, probs);
        break;
    case OUT_CSV:
        if (probs)
            for (size_t i = 0; i < r->n_probs; i++) {
                put_csv_field(file);
                printf(",%zu,%.3f,%.6f\n", i, (double)i * r->hop_seconds, r->probs[i]);
            }
        else
            for (size_t i = 0; i < r->n_segments; i++) {
                const ac_vad_segment *g = &r->segments[i];
                put_csv_field(file);
                printf(",%.3f,%.3f,%lld,%lld,%.4f\n", seconds(g->start, r->sample_rate),
                       seconds(g->end, r->sample_rate), (long long)g->start, (long long)g->end, g->confidence);
            }
        break;
    case OUT_TEXT:
        if (several_files) printf("%s:\n", file);
        if (probs)
            for (size_t i = 0; i < r->n_probs; i++) printf("%.3f\t%.6f\n", (double)i * r->hop_seconds, r->probs[i]);
        else
            for (size_t i = 0; i < r->n_segments; i++)
                printf("%.3f\t%.3f\n", seconds(r->segments[i].start, r->sample_rate),
                       seconds(r->segments[i].end, r->sample_rate));
        break;
    }
    fflush(stdout);
}

