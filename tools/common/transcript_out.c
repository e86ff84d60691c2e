#include "transcript_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "json_out.h"

double transcript_compression_ratio(const char *text)
{
    uLong n = (uLong)strlen(text), cap = compressBound(n);
    Bytef buf[4096], *z = cap <= sizeof buf ? buf : malloc(cap);
    uLongf zn = cap;
    double r = z && compress2(z, &zn, (const Bytef *)text, n, Z_DEFAULT_COMPRESSION) == Z_OK ? (double)n / zn : 0;
    if (z != buf) free(z);
    return r;
}

/* HH:MM:SS,mmm (srt) or HH:MM:SS.mmm (vtt) */
static void put_time(FILE *f, double s, char sep)
{
    long long ms = (long long)(s * 1000 + 0.5);
    fprintf(f, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, sep, ms % 1000);
}

static void cue(FILE *f, int vtt, size_t *n, double start, double end)
{
    char sep = vtt ? '.' : ',';
    if (!vtt) fprintf(f, "%zu\n", ++*n);
    put_time(f, start, sep);
    fputs(" --> ", f);
    put_time(f, end, sep);
    fputc('\n', f);
}

/* Cues of words, within a segment: at most MAX characters a cue (0: a
 * cue per segment; a longer word stands alone), lines of at most LINE
 * characters (0: one line); timed by their words. */
static void word_cues(FILE *f, const ac_asr_result *r, int vtt, int max, int line, size_t *n)
{
    for (size_t a = 0; a < r->n_words;) {
        size_t b = a + 1, len = strlen(r->words[a].text);
        while (b < r->n_words && r->words[b].segment == r->words[a].segment &&
               (max <= 0 || len + 1 + strlen(r->words[b].text) <= (size_t)max))
            len += 1 + strlen(r->words[b++].text);
        cue(f, vtt, n, r->words[a].start, r->words[b - 1].end);
        for (size_t k = a, at = 0; k < b; k++) {
            size_t w = strlen(r->words[k].text);
            if (k > a) {
                int wrap = line > 0 && at + 1 + w > (size_t)line;
                fputc(wrap ? '\n' : ' ', f);
                at = wrap ? 0 : at + 1;
            }
            fputs(r->words[k].text, f);
            at += w;
        }
        fputs("\n\n", f);
        a = b;
    }
}

/* One cue per segment with text, timed by the segment's start and end; or,
 * with words and MAX_LEN or MAX_LINE, the cues of word_cues. */
static void subtitles(FILE *f, const ac_asr_result *r, int vtt, int max_len, int max_line)
{
    size_t n = 0;
    if (vtt) fputs("WEBVTT\n\n", f);
    if ((max_len > 0 || max_line > 0) && r->n_words) {
        word_cues(f, r, vtt, max_len, max_line, &n);
        return;
    }
    for (size_t i = 0; i < r->n_segments; i++) {
        const ac_asr_segment *g = &r->segments[i];
        if (!g->text[0]) continue;
        cue(f, vtt, &n, g->start, g->end);
        fprintf(f, "%s\n\n", g->text);
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
        /* no_speech_prob: Hviske has no no-speech token (docs/models/hviske_asr.md) */
        fprintf(f, ",\"temperature\":%g,\"avg_logprob\":%.6f,\"compression_ratio\":%.6f,\"no_speech_prob\":null}",
                m->temperature, g->avg_logprob, transcript_compression_ratio(g->text));
    }
    fputc(']', f);
    if (m->words) {
        fputs(",\"words\":[", f);
        for (size_t i = 0; i < r->n_words; i++) {
            fprintf(f, "%s{\"word\":", i ? "," : "");
            json_string(f, r->words[i].text);
            fprintf(f, ",\"start\":%.3f,\"end\":%.3f,\"segment\":%zu}", r->words[i].start, r->words[i].end,
                    r->words[i].segment);
        }
        fputc(']', f);
    }
    /* OpenAI bills transcription by the second, rounded up */
    fprintf(f, ",\"usage\":{\"type\":\"duration\",\"seconds\":%.0f}}\n", ceil(r->duration));
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
        subtitles(f, r, fmt == TRANSCRIPT_VTT, m->max_len, m->max_line);
        break;
    }
}
