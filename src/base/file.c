#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/mem.h"

ac_status ac_read_file(const char *path, size_t max, char **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return ac_error(AC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || S_ISDIR(sb.st_mode)) {
        fclose(f);
        return ac_error(AC_ERR_IO, "%s: not a regular file", path);
    }
    /* growing steps rather than the size fstat reports: pipes have none */
    size_t cap = 1 << 16, len = 0;
    char *buf = ac_malloc(cap + 1);
    ac_status s = buf ? AC_OK : AC_ERR_NOMEM;
    while (!s && !ferror(f) && !feof(f) && len <= max) {
        if (len == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                s = ac_error(AC_ERR_NOMEM, "%s: out of memory (%zu bytes)", path, 2 * cap);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        len += fread(buf + len, 1, cap - len, f);
    }
    if (!s && ferror(f)) s = ac_error(AC_ERR_IO, "%s: read error", path);
    else if (!s && len > max) s = ac_error(AC_ERR_FORMAT, "%s: larger than %zu bytes", path, max);
    fclose(f);
    if (s) {
        free(buf);
        return s;
    }
    buf[len] = 0;
    *out = buf;
    *n = len;
    return AC_OK;
}
