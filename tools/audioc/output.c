#include "output.h"

#include <stdio.h>
#include <string.h>

#include "vad_out.h"

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

void out_vad_result(out_format f, const char *file, const char *family, const ac_vad_result *r,
                    int probs, int several_files)
{
    switch (f) {
    case OUT_JSON:
        vad_write_json(stdout, "file", file, family, r, probs);
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

