/* Reading a whole small file (configs, tokenizers) into memory. */
#ifndef AC_BASE_FILE_H
#define AC_BASE_FILE_H

#include <stddef.h>

#include "audioc.h"

/* The bytes of PATH in *OUT (NUL-terminated, free with free()) and their
 * count in *N. A folder is refused ("not a regular file"), a file larger
 * than MAX bytes is AC_ERR_FORMAT; messages name PATH. */
ac_status ac_read_file(const char *path, size_t max, char **out, size_t *n);

#endif
