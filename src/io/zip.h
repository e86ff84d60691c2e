/* A strict reader of zip archives whose entries are stored uncompressed,
 * as torch.save writes them: entries are found through the central
 * directory and handed out in place, inside the caller's buffer. */
#ifndef AC_IO_ZIP_H
#define AC_IO_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

typedef struct ac_zip_entry {
    char *name;
    const unsigned char *data;  /* inside the archive buffer */
    size_t size;
    uint32_t crc32;
} ac_zip_entry;

typedef struct ac_zip {
    ac_zip_entry *entries;  /* in central directory order */
    size_t n_entries;
} ac_zip;

/* Reads the directory of the archive BUF[SIZE] (zip64 included). Refuses
 * compressed, encrypted, overlapping or out-of-bounds entries. Messages
 * have no file name: the caller prefixes it. */
ac_status ac_zip_open(const void *buf, size_t size, ac_zip *out);
const ac_zip_entry *ac_zip_find(const ac_zip *z, const char *name);
/* Whether the entry's bytes match its recorded CRC-32. */
int ac_zip_crc_ok(const ac_zip_entry *e);
uint32_t ac_crc32(const void *data, size_t n);
void ac_zip_close(ac_zip *z);

#endif
