/* Fuzz the server's form-field value parsers (tools/audioc-server/
 * fields.c) on any text, with the ranges the endpoints use and wide ones. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void number(const char *v, double lo, double hi, int integer)
{
    double d = NAN;
    if (field_number(v, lo, hi, integer, &d) == 0 && (!(d >= lo && d <= hi) || (integer && d != floor(d)))) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v = malloc(size + 1);
    if (!v) return 0;
    memcpy(v, data, size);
    v[size] = 0;
    int b = -1;
    if (field_bool(v, &b) == 0 && b != 0 && b != 1) abort();
    number(v, 0, 2, 0);
    number(v, 1, 16, 1);
    number(v, -1e300, 1e300, 0);
    number(v, -9e18, 9e18, 1);
    static const char *const names[] = {"json", "text", "srt", "vtt", "verbose_json"};
    int k = field_choice(v, names, 5);
    if (k >= 0 && strcmp(v, names[k]) != 0) abort();
    free(v);
    return 0;
}
