#include "base/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "base/timing.h"

static int progress_mode = -1;

void ac_set_progress(int mode) { progress_mode = mode; }

void ac_progress_begin(ac_progress *p, const char *label, double total)
{
    p->label = label;
    p->total = total;
    p->started = p->last_shown = ac_now();
    p->shown = 0;
    p->active = progress_mode == 1 || (progress_mode == -1 && isatty(STDERR_FILENO));
}

void ac_progress_update(ac_progress *p, double done)
{
    if (!p->active) return;
    double now = ac_now();
    if (now - p->last_shown < 0.25) return; /* redraw at most 4x a second */
    p->last_shown = now;
    p->shown = 1;
    if (p->total > 0)
        fprintf(stderr, "\r%s: %5.1f%%", p->label, 100.0 * done / p->total);
    else
        fprintf(stderr, "\r%s: %.0f", p->label, done);
    fflush(stderr);
}

void ac_progress_bytes(ac_progress *p, double done)
{
    if (!p->active) return;
    double now = ac_now();
    if (now - p->last_shown < 0.25) return;
    p->last_shown = now;
    p->shown = 1;
    double rate = done / (now - p->started > 1e-3 ? now - p->started : 1e-3);
    if (p->total > 0) {
        int left = rate > 0 ? (int)((p->total - done) / rate) : 0;
        fprintf(stderr, "\r%s: %.1f/%.1f MB  %.1f MB/s  %d:%02d left ", p->label, done / 1e6, p->total / 1e6,
                rate / 1e6, left / 60, left % 60);
    } else {
        fprintf(stderr, "\r%s: %.1f MB  %.1f MB/s ", p->label, done / 1e6, rate / 1e6);
    }
    fflush(stderr);
}

void ac_progress_end(ac_progress *p)
{
    if (p->active && p->shown) fprintf(stderr, "\r%s: done    \n", p->label);
    p->active = 0;
}
