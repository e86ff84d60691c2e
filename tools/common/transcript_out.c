#include "transcript_out.h"

#include "json_out.h"

/* HH:MM:SS,mmm (srt) or HH:MM:SS.mmm (vtt) */
static void put_time(FILE *f, double s, char sep)
{
    long long ms = (long long)(s * 1000 + 0.5);
    fprintf(f, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, sep, ms % 1000);
}

/* One cue per segment with text, timed by the segment's start and end. */
static void subtitles(FILE *f, const ac_asr_result *r, int vtt)
{
    char sep = vtt ? '.' : ',';
    if (vtt) fputs("WEBVTT\n\n", f);
    for (size_t i = 0, n = 0; i < r->n_segments; i++) {
        const ac_asr_segment *g = &r->segments[i];
        if (!g->text[0]) continue;
        if (!vtt) fprintf(f, "%zu\n", ++n);
        put_time(f, g->start, sep);
        fputs(" --> ", f);
        put_time(f, g->end, sep);
        fprintf(f, "\n%s\n\n", g->text);
    }
}

static void verbose_json(FILE *f, const ac_asr_result *r, const transcript_meta *m)
{
    fputc('{', f);
    if (m->file) {
        fputs("\"file\":", f);
        json_string(f, m->file);
        fputc(',', f);
    }
    fputs("\"task\":\"transcribe\",\"language\":", f);
    json_string(f, m->language);
    fprintf(f, ",\"duration\":%.3f,\"text\":", r->duration);
    json_string(f, r->text);
    fputs(",\"segments\":[", f);
    for (size_t i = 0; i < r->n_segments; i++) {
        const ac_asr_segment *g = &r->segments[i];
        fprintf(f, "%s{\"id\":%zu,\"seek\":0,\"start\":%.3f,\"end\":%.3f,\"text\":", i ? "," : "", i, g->start, g->end);
        json_string(f, g->text);
        if (m->tokens) {
            fputs(",\"tokens\":[", f);
            for (int k = 0; k < g->n_tokens; k++) fprintf(f, "%s%d", k ? "," : "", g->tokens[k]);
            fputc(']', f);
        }
        fprintf(f, ",\"temperature\":%g,\"avg_logprob\":%.6f}", m->temperature, g->avg_logprob);
    }
    fputs("]}\n", f);
}

void transcript_write(FILE *f, transcript_format fmt, const ac_asr_result *r, const transcript_meta *m)
{
    switch (fmt) {
    case TRANSCRIPT_TEXT:
        fprintf(f, "%s\n", r->text);
        break;
    case TRANSCRIPT_JSON:
        fputs("{\"text\":", f);
        json_string(f, r->text);
        fputs("}\n", f);
        break;
    case TRANSCRIPT_VERBOSE_JSON:
        verbose_json(f, r, m);
        break;
    case TRANSCRIPT_SRT:
    case TRANSCRIPT_VTT:
        subtitles(f, r, fmt == TRANSCRIPT_VTT);
        break;
    }
}
