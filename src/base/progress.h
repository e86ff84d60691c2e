/* A one-line progress indicator on stderr, shown only when stderr is a
 * terminal (or forced), so pipes and logs stay clean. */
#ifndef AC_BASE_PROGRESS_H
#define AC_BASE_PROGRESS_H

#include "audioc.h" /* ac_set_progress */

typedef struct ac_progress {
    const char *label;
    double total;       /* <= 0: unknown */
    double last_shown;  /* time of the last redraw */
    double started;     /* time of ac_progress_begin */
    int active;
    int shown;          /* something was drawn: end the line */
} ac_progress;

void ac_progress_begin(ac_progress *p, const char *label, double total);
void ac_progress_update(ac_progress *p, double done);
/* As ac_progress_update for a count of bytes: shows the megabytes done of
 * the total, the rate and the time left. */
void ac_progress_bytes(ac_progress *p, double done);
void ac_progress_end(ac_progress *p);

#endif
