/* Values of the text fields of a form: booleans, numbers, choices. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

int field_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) *out = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") || !*v) *out = 0;
    else return -1;
    return 0;
}

int field_number(const char *v, double lo, double hi, int integer, double *out)
{
    char *end;
    double d = strtod(v, &end);
    while (*end == ' ') end++;
    if (end == v || *end || !(d >= lo && d <= hi) || (integer && d != (double)(long long)d)) return -1;
    *out = d;
    return 0;
}

int field_choice(const char *v, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(v, names[k]) == 0) return k;
    return -1;
}

int field_control(const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return (int)i;
    }
    return -1;
}
