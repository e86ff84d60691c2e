#include "io/zip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

#define EOCD_SIG 0x06054b50u
#define EOCD64_SIG 0x06064b50u
#define LOCATOR64_SIG 0x07064b50u
#define CENTRAL_SIG 0x02014b50u
#define LOCAL_SIG 0x04034b50u

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

typedef struct {
    uint64_t n_entries, cd_size, cd_offset;
} directory;

/* The end record (and its zip64 form) that says where the directory is. */
static ac_status find_directory(const unsigned char *b, size_t size, directory *d)
{
    if (size < 22) return ac_error(AC_ERR_FORMAT, "%zu bytes are too short for a zip archive (truncated?)", size);
    size_t lo = size - 22 > 65535 ? size - 22 - 65535 : 0, at = SIZE_MAX;
    for (size_t p = size - 22 + 1; p-- > lo;)
        if (le(b + p, 4) == EOCD_SIG && le(b + p + 20, 2) == size - p - 22) {
            at = p;
            break;
        }
    if (at == SIZE_MAX) return ac_error(AC_ERR_FORMAT, "no zip end-of-directory record (truncated?)");
    const unsigned char *e = b + at;
    if (le(e + 4, 2) || le(e + 6, 2) || le(e + 8, 2) != le(e + 10, 2))
        return ac_error(AC_ERR_FORMAT, "multi-part zip archives are not supported");
    d->n_entries = le(e + 10, 2);
    d->cd_size = le(e + 12, 4);
    d->cd_offset = le(e + 16, 4);
    if (at >= 20 && le(e - 20, 4) == LOCATOR64_SIG) {
        uint64_t off = le(e - 20 + 8, 8);
        if (off > at - 20 || at - 20 - off < 56 || le(b + off, 4) != EOCD64_SIG)
            return ac_error(AC_ERR_FORMAT, "zip64 end record is missing or out of place");
        const unsigned char *z = b + off;
        if (le(z + 16, 4) || le(z + 20, 4) || le(z + 24, 8) != le(z + 32, 8))
            return ac_error(AC_ERR_FORMAT, "multi-part zip archives are not supported");
        d->n_entries = le(z + 32, 8);
        d->cd_size = le(z + 40, 8);
        d->cd_offset = le(z + 48, 8);
        at = (size_t)off;
    }
    if (d->cd_offset > at || d->cd_size > at - d->cd_offset)
        return ac_error(AC_ERR_FORMAT, "zip central directory lies outside the archive (truncated?)");
    if (d->n_entries > d->cd_size / 46)
        return ac_error(AC_ERR_FORMAT, "zip directory claims %" PRIu64 " entries in %" PRIu64 " bytes",
                        d->n_entries, d->cd_size);
    return AC_OK;
}

/* Replaces the 32-bit fields that are 0xFFFFFFFF with their zip64 values. */
static ac_status zip64_fields(const unsigned char *x, size_t n, uint64_t *usize, uint64_t *csize, uint64_t *offset,
                              const char *name)
{
    uint64_t *want[3] = {usize, csize, offset};
    for (size_t p = 0; p + 4 <= n;) {
        size_t id = (size_t)le(x + p, 2), len = (size_t)le(x + p + 2, 2);
        if (len > n - p - 4) return ac_error(AC_ERR_FORMAT, "zip entry '%s': extra field runs past its end", name);
        if (id == 1) {
            size_t q = p + 4;
            for (int i = 0; i < 3; i++) {
                if (*want[i] != 0xFFFFFFFFu) continue;
                if (q + 8 > p + 4 + len)
                    return ac_error(AC_ERR_FORMAT, "zip entry '%s': zip64 field is too short", name);
                *want[i] = le(x + q, 8);
                q += 8;
            }
            return AC_OK;
        }
        p += 4 + len;
    }
    if (*usize == 0xFFFFFFFFu || *csize == 0xFFFFFFFFu || *offset == 0xFFFFFFFFu)
        return ac_error(AC_ERR_FORMAT, "zip entry '%s': zip64 sizes are missing", name);
    return AC_OK;
}

static ac_status read_entry(const unsigned char *b, uint64_t end_of_data, const unsigned char *c, size_t avail,
                            ac_zip_entry *e, size_t *used)
{
    if (avail < 46 || le(c, 4) != CENTRAL_SIG) return ac_error(AC_ERR_FORMAT, "zip directory entry is damaged");
    size_t nlen = (size_t)le(c + 28, 2), xlen = (size_t)le(c + 30, 2), clen = (size_t)le(c + 32, 2);
    if (46 + nlen + xlen + clen > avail) return ac_error(AC_ERR_FORMAT, "zip directory entry runs past its end");
    if (memchr(c + 46, 0, nlen)) return ac_error(AC_ERR_FORMAT, "zip entry name holds a NUL byte");
    e->name = ac_malloc(nlen + 1);
    if (!e->name) return AC_ERR_NOMEM;
    memcpy(e->name, c + 46, nlen);
    e->name[nlen] = 0;
    *used = 46 + nlen + xlen + clen;
    unsigned flags = (unsigned)le(c + 8, 2), method = (unsigned)le(c + 10, 2);
    if (flags & 1) return ac_error(AC_ERR_UNSUPPORTED, "zip entry '%s' is encrypted", e->name);
    if (method != 0)
        return ac_error(AC_ERR_UNSUPPORTED,
                        "zip entry '%s' is compressed (method %u); only stored entries, as torch.save writes, "
                        "are supported", e->name, method);
    uint64_t csize = le(c + 20, 4), usize = le(c + 24, 4), off = le(c + 42, 4);
    AC_TRY(zip64_fields(c + 46 + nlen, xlen, &usize, &csize, &off, e->name));
    if (csize != usize)
        return ac_error(AC_ERR_FORMAT, "zip entry '%s' is stored but its sizes differ", e->name);
    if (off > end_of_data || end_of_data - off < 30 || le(b + off, 4) != LOCAL_SIG)
        return ac_error(AC_ERR_FORMAT, "zip entry '%s': local header is missing", e->name);
    const unsigned char *l = b + off;
    uint64_t start = off + 30 + le(l + 26, 2) + le(l + 28, 2);
    if (le(l + 26, 2) != nlen || start > end_of_data || memcmp(l + 30, e->name, nlen) != 0)
        return ac_error(AC_ERR_FORMAT, "zip entry '%s': local header does not match the directory", e->name);
    if (usize > end_of_data - start)
        return ac_error(AC_ERR_FORMAT, "zip entry '%s' runs past the end of the data (truncated?)", e->name);
    e->data = b + start;
    e->size = (size_t)usize;
    e->crc32 = (uint32_t)le(c + 16, 4);
    return AC_OK;
}

static int by_data(const void *a, const void *b)
{
    const ac_zip_entry *x = a, *y = b;
    return x->data < y->data ? -1 : x->data > y->data;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const ac_zip_entry *)a)->name, ((const ac_zip_entry *)b)->name);
}

/* No two entries share bytes and no name repeats (checked on a copy so that
 * the directory order stays). */
static ac_status check_entries(const ac_zip *z)
{
    ac_zip_entry *v = ac_calloc(z->n_entries ? z->n_entries : 1, sizeof *v);
    if (!v) return AC_ERR_NOMEM;
    memcpy(v, z->entries, z->n_entries * sizeof *v);
    ac_status s = AC_OK;
    qsort(v, z->n_entries, sizeof *v, by_data);
    for (size_t i = 1; i < z->n_entries && !s; i++)
        if (v[i].data < v[i - 1].data + v[i - 1].size)
            s = ac_error(AC_ERR_FORMAT, "zip entries '%s' and '%s' overlap", v[i - 1].name, v[i].name);
    qsort(v, z->n_entries, sizeof *v, by_name);
    for (size_t i = 1; i < z->n_entries && !s; i++)
        if (strcmp(v[i - 1].name, v[i].name) == 0) s = ac_error(AC_ERR_FORMAT, "zip entry '%s' appears twice", v[i].name);
    free(v);
    return s;
}

ac_status ac_zip_open(const void *buf, size_t size, ac_zip *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    directory d = {0, 0, 0};
    AC_TRY(find_directory(b, size, &d));
    out->entries = ac_calloc(d.n_entries ? (size_t)d.n_entries : 1, sizeof *out->entries);
    if (!out->entries) return AC_ERR_NOMEM;
    const unsigned char *c = b + d.cd_offset;
    size_t left = (size_t)d.cd_size;
    ac_status s = AC_OK;
    for (uint64_t i = 0; i < d.n_entries && !s; i++) {
        size_t used = 0;
        s = read_entry(b, d.cd_offset, c, left, &out->entries[out->n_entries++], &used);
        c += used;
        left -= used;
    }
    if (!s) s = check_entries(out);
    if (s) ac_zip_close(out);
    return s;
}

const ac_zip_entry *ac_zip_find(const ac_zip *z, const char *name)
{
    for (size_t i = 0; i < z->n_entries; i++)
        if (strcmp(z->entries[i].name, name) == 0) return &z->entries[i];
    return NULL;
}

/* Bit by bit: only the small entries (the pickle) are checked. */
uint32_t ac_crc32(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = crc >> 1 ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

int ac_zip_crc_ok(const ac_zip_entry *e) { return ac_crc32(e->data, e->size) == e->crc32; }

void ac_zip_close(ac_zip *z)
{
    for (size_t i = 0; i < z->n_entries; i++) free(z->entries[i].name);
    free(z->entries);
    memset(z, 0, sizeof *z);
}
