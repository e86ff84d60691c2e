/* Fuzz the JSON string writer (tools/common/json_out.c) on any bytes: the
 * output must parse as one JSON string, and valid UTF-8 without NUL must
 * come back unchanged. */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "text/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    if (!f) return 0;
    json_string_n(f, (const char *)data, size);
    fclose(f);
    cJSON *j = cJSON_ParseWithLength(out, n);
    if (!cJSON_IsString(j)) abort();
    if (ac_utf8_invalid_at(data, size) == size && !memchr(data, 0, size) &&
        (strlen(j->valuestring) != size || memcmp(j->valuestring, data, size) != 0))
        abort();
    cJSON_Delete(j);
    free(out);
    return 0;
}
