/* Vevo2's AR prompt (spec vevo2.md §4.6). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/vevo2/prompt.h"

static const char *const INSTRUCTION[2] = {
    "User will provide you with a text. Please vocalize it with natural expression.",
    "User will provide you with a text. Please first generate a good prosodic instruction, then vocalize the "
    "text based on it.",
};

static void put_ids(FILE *f, const char *tag, const int32_t *ids, int n)
{
    for (int i = 0; i < n; i++) fprintf(f, "<|%s_%d|>", tag, (int)ids[i]);
}

ac_status vevo2_prompt_text(int use_prosody, const char *style_text, const char *text, const int32_t *prosody,
                            int n_prosody, const int32_t *style, int n_style, char **out)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return AC_ERR_NOMEM;
    fprintf(f, "<|im_start|>system\n%s<|im_end|>\n<|im_start|>user\n%s %s<|im_end|>\n<|im_start|>assistant\n",
            INSTRUCTION[!!use_prosody], style_text ? style_text : "", text);
    if (use_prosody) {
        fputs("<|prosody_start|>", f);
        put_ids(f, "prosody", prosody, n_prosody);
        fputs("<|prosody_end|>", f);
    }
    fputs("<|content_style_start|>", f);
    put_ids(f, "content_style", style, n_style);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        free(buf);
        return AC_ERR_NOMEM;
    }
    *out = buf;
    return AC_OK;
}

ac_status vevo2_parse_content_style(const char *text, int K, int32_t **ids, int *n)
{
    static const char TAG[] = "<|content_style_";
    const size_t tag = sizeof TAG - 1;
    *ids = NULL;
    *n = 0;
    size_t count = 0, cap = 0;
    int32_t *v = NULL;
    for (const char *p = strstr(text, TAG); p; p = strstr(p, TAG)) {
        const char *d = p + tag, *e = d;
        long long x = 0;
        while (*e >= '0' && *e <= '9' && e - d < 12) x = x * 10 + (*e++ - '0');
        if (e == d || e[0] != '|' || e[1] != '>') {
            p = d;   /* not a whole tag: the regex moves on */
            continue;
        }
        if (x >= K) {
            free(v);
            return ac_error(AC_ERR_MODEL, "the AR model made <|content_style_%lld|>, but the codebook has %d codes",
                            x, K);
        }
        if (ac_grow(&v, &cap, count + 1, sizeof *v)) {
            free(v);
            return AC_ERR_NOMEM;
        }
        v[count++] = (int32_t)x;
        p = e + 2;
    }
    *ids = v;
    *n = (int)count;
    return AC_OK;
}
