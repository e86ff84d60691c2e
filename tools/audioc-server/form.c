/* multipart/form-data bodies read with libmicrohttpd's post processor into
 * a few named fields, within a byte budget. */
#include <microhttpd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define MAX_FIELDS 32

struct form {
    struct MHD_PostProcessor *pp;
    form_field fields[MAX_FIELDS];
    int n;
    size_t total, max;
    size_t expect;          /* the body's length when known: a file field gets it at once */
    int too_large;          /* FORM_BODY_TOO_LARGE or FORM_FIELD_TOO_LARGE */
    char long_field[64];    /* the text field over FORM_MAX_TEXT_FIELD */
};

int buffer_reserve(buffer *b, size_t cap)
{
    if (cap + 1 <= b->cap) return 0;
    char *d = realloc(b->data, cap + 1);
    if (!d) return -1;
    b->data = d;
    b->cap = cap + 1;
    return 0;
}

int buffer_add(buffer *b, const void *p, size_t n)
{
    if (n > SIZE_MAX / 2 - b->len - 1) return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;   /* text fields read as C strings */
    return 0;
}

void buffer_free(buffer *b)
{
    free(b->data);
    *b = (buffer){0};
}

static enum MHD_Result field_data(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                  const char *content_type, const char *transfer_encoding, const char *data,
                                  uint64_t off, size_t size)
{
    form *f = cls;
    if (!key) return MHD_NO;
    form_field *fl = f->n ? &f->fields[f->n - 1] : NULL;
    /* A part may come in several calls (the parser can report a short field
     * first with no bytes, then with its bytes, both at offset 0): a call
     * continues the last field when its name and file name match and its
     * offset is the bytes received so far. So an empty field followed by one
     * of the same name reads as one field. */
    int continues = fl && strcmp(fl->name, key) == 0 && (filename != NULL) == fl->is_file &&
                    (!filename || strncmp(fl->filename, filename, sizeof fl->filename - 1) == 0) &&
                    off == fl->value.len;
    if (!continues) {   /* a new field */
        if (f->n == MAX_FIELDS || strlen(key) >= sizeof fl->name) return MHD_NO;
        fl = &f->fields[f->n++];
        snprintf(fl->name, sizeof fl->name, "%s", key);
        fl->is_file = filename != NULL;
        if (filename) snprintf(fl->filename, sizeof fl->filename, "%s", filename);
        /* one allocation of the body's size, not doublings that may hold twice the upload */
        if (filename && f->expect && buffer_reserve(&fl->value, f->expect)) return MHD_NO;
    }
    f->total += size;
    if (f->total > f->max) {
        f->too_large = FORM_BODY_TOO_LARGE;
        return MHD_NO;
    }
    if (!fl->is_file && fl->value.len + size > FORM_MAX_TEXT_FIELD) {
        f->too_large = FORM_FIELD_TOO_LARGE;
        snprintf(f->long_field, sizeof f->long_field, "%s", fl->name);
        return MHD_NO;
    }
    return buffer_add(&fl->value, data, size) ? MHD_NO : MHD_YES;
}

form *form_new(void *connection, size_t max_bytes, size_t expect_bytes)
{
    form *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->max = max_bytes;
    f->expect = expect_bytes < max_bytes ? expect_bytes : max_bytes;
    f->pp = MHD_create_post_processor(connection, 64 * 1024, field_data, f);
    if (!f->pp) {
        free(f);
        return NULL;
    }
    return f;
}

int form_feed(form *f, const char *data, size_t n)
{
    return MHD_post_process(f->pp, data, n) == MHD_YES ? 0 : -1;
}

int form_finish(form *f)
{
    int ok = MHD_destroy_post_processor(f->pp) == MHD_YES;
    f->pp = NULL;
    return ok ? 0 : -1;
}

int form_too_large(const form *f, const char **field)
{
    if (field) *field = f->long_field;
    return f->too_large;
}

const form_field *form_get(const form *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->fields[i].name, name) == 0) return &f->fields[i];
    return NULL;
}

int form_count(const form *f) { return f->n; }

size_t form_bytes(const form *f) { return f->total; }

const form_field *form_at(const form *f, int i) { return i >= 0 && i < f->n ? &f->fields[i] : NULL; }

void form_free(form *f)
{
    if (!f) return;
    if (f->pp) MHD_destroy_post_processor(f->pp);
    for (int i = 0; i < f->n; i++) buffer_free(&f->fields[i].value);
    free(f);
}
