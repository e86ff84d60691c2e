#include "subtitles.h"

/* HH:MM:SS,mmm (srt) or HH:MM:SS.mmm (vtt) */
static void put_time(FILE *f, double s, char sep)
{
    long long ms = (long long)(s * 1000 + 0.5);
    fprintf(f, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, sep, ms % 1000);
}

void subtitles_write(FILE *f, const ac_asr_result *r, int vtt)
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
