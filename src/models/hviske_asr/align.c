#include "models/hviske_asr/align.h"

#include <stdlib.h>
#include <string.h>

#include "models/hviske_asr/decoder.h"
#include "nn/align.h"

void hviske_words_free(hviske_word *w, int n)
{
    for (int i = 0; w && i < n; i++) free(w[i].text);
    free(w);
}

/* Does token ID begin a word (its piece starts with U+2581)? */
static int word_start(const hviske_model *m, int id)
{
    const char *p = ac_sp_piece(m->sp, id);
    return p && strncmp(p, "\xe2\x96\x81", 3) == 0;
}

/* Token k's start frame FIRST[k] and end frame FIRST[k+1] (rows: the
 * inputs that predict tokens 0..n-1 and the end of text). */
static ac_status token_frames(const hviske_model *m, const hviske_encoded *enc, const int *prompt, int np,
                              const int *tokens, int n, ac_arena *a, int *first)
{
    const hviske_config *c = &m->cfg;
    int rows = np + n, from = hviske_align_from(c), layers = c->dec_layers - from, H = c->dec_heads;
    size_t Tv = (size_t)(enc->T_valid < 1 ? 1 : enc->T_valid), R = (size_t)rows;
    int *ids = ac_arena_alloc(a, R * sizeof *ids), *beam = ac_arena_alloc(a, R * sizeof *beam),
        *pos = ac_arena_alloc(a, R * sizeof *pos);
    float *w = ac_arena_floats(a, (size_t)layers * H * R * Tv), *lp = ac_arena_floats(a, (size_t)c->vocab);
    float *sel = ac_arena_floats(a, (size_t)layers * H * (size_t)(n + 1) * Tv);
    if (!ids || !beam || !pos || !w || !lp || !sel) return AC_ERR_NOMEM;
    for (int i = 0; i < rows; i++) ids[i] = i < np ? prompt[i] : tokens[i - np], beam[i] = 0, pos[i] = i;
    hviske_decoder *d;
    AC_TRY(hviske_decoder_new(m, enc->proj, enc->T, enc->T_valid, 1, rows, rows, a, &d));
    hviske_decoder_capture(d, from, w);
    AC_TRY(hviske_decoder_forward(d, ids, beam, pos, rows, 1, lp));
    /* rows np-1 .. np-1+n of every aligning head */
    for (int k = 0; k < layers * H; k++)
        memcpy(sel + (size_t)k * (n + 1) * Tv, w + ((size_t)k * R + (size_t)(np - 1)) * Tv,
               (size_t)(n + 1) * Tv * sizeof *sel);
    return ac_align_rows(sel, layers * H, n + 1, (int)Tv, ac_align_medfilt_width(hviske_frame_s(c)), first);
}

/* openai-whisper's cut of words that took in a pause (nn/align.h); scratch from A */
static void clamp_words(hviske_word *w, int n, ac_arena *a)
{
    double *start = ac_arena_alloc(a, (size_t)n * sizeof *start), *end = ac_arena_alloc(a, (size_t)n * sizeof *end);
    int *stop = ac_arena_alloc(a, (size_t)n * sizeof *stop);
    if (!start || !end || !stop) return; /* the words keep their DTW times */
    for (int i = 0; i < n; i++) {
        size_t len = strlen(w[i].text);
        start[i] = w[i].start, end[i] = w[i].end;
        stop[i] = len && strchr(".?!", w[i].text[len - 1]) != NULL;
    }
    ac_align_clamp_words(start, end, stop, n);
    for (int i = 0; i < n; i++) w[i].start = start[i], w[i].end = end[i];
}

ac_status hviske_align_words(const hviske_model *m, const hviske_encoded *enc, const int *prompt, int np,
                             const int *tokens, int n, ac_arena *a, hviske_word **words, int *n_words)
{
    *words = NULL;
    *n_words = 0;
    if (n < 1) return AC_OK;
    if (np < 1 || np + n > m->cfg.max_seq) return ac_error(AC_ERR_ARG, "alignment: %d tokens do not fit", np + n);
    int *first = ac_arena_alloc(a, (size_t)(n + 1) * sizeof *first);
    if (!first) return AC_ERR_NOMEM;
    AC_TRY(token_frames(m, enc, prompt, np, tokens, n, a, first));
    double frame_s = hviske_frame_s(&m->cfg);
    hviske_word *w = calloc((size_t)n, sizeof *w);
    if (!w) return AC_ERR_NOMEM;
    int nw = 0;
    ac_status s = AC_OK;
    for (int i = 0; i < n && !s;) {
        int j = i + 1;
        while (j < n && !word_start(m, tokens[j])) j++;
        char *text;
        s = ac_sp_decode(m->sp, tokens + i, (size_t)(j - i), &text);
        if (s) break;
        char *t = text;   /* without the word marker's space */
        while (*t == ' ') t++;
        memmove(text, t, strlen(t) + 1);
        if (text[0]) w[nw++] = (hviske_word){text, first[i] * frame_s, first[j] * frame_s};
        else free(text);
        i = j;
    }
    if (s) {
        hviske_words_free(w, nw);
        return s;
    }
    clamp_words(w, nw, a);
    *words = w;
    *n_words = nw;
    return AC_OK;
}
