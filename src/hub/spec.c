#include "hub/spec.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

int hub_path_ok(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n >= HUB_PATH || p[0] == '/') return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\') return 0;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 0 || (l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.')) return 0;
        s += l + (e != NULL);
        if (e && !*s) return 0; /* a trailing '/' */
    }
    return 1;
}

int hub_is_commit(const char *rev)
{
    size_t n = 0;
    for (; rev[n]; n++)
        if (!((rev[n] >= '0' && rev[n] <= '9') || (rev[n] >= 'a' && rev[n] <= 'f'))) return 0;
    return n == 40;
}

/* A name part of a repository id: letters, digits, '-', '_', '.', not
 * beginning or ending with '-' or '.'. */
static int name_ok(const char *s, size_t n)
{
    if (n == 0 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return 0;
    }
    return 1;
}

ac_status hub_spec_parse(const char *text, hub_spec *out)
{
    *out = (hub_spec){.revision = "main"};
    const char *slash = strchr(text, '/');
    if (!slash) return ac_error(AC_ERR_ARG, "'%s': expected a repository ORG/NAME[@REVISION][/SUBFOLDER|/FILE]", text);
    const char *end = slash + 1 + strcspn(slash + 1, "@/");
    size_t org = (size_t)(slash - text), name = (size_t)(end - slash - 1);
    if (!name_ok(text, org) || !name_ok(slash + 1, name) || (size_t)(end - text) >= HUB_REPO ||
        (strstr(text, "--") && strstr(text, "--") < end) || (strstr(text, "..") && strstr(text, "..") < end))
        return ac_error(AC_ERR_ARG,
                        "'%s': '%.*s' is not a repository id (ORG/NAME of letters, digits, '-', '_', '.'; no '--' "
                        "or '..')",
                        text, (int)(end - text), text);
    memcpy(out->repo, text, (size_t)(end - text));
    const char *rest = end;
    if (*rest == '@') {
        size_t l = strcspn(rest + 1, "/");
        if (l == 0 || l >= HUB_REV)
            return ac_error(AC_ERR_ARG, "'%s': the revision after '@' is empty or too long", text);
        memcpy(out->revision, rest + 1, l);
        out->revision[l] = 0;
        if (!hub_path_ok(out->revision) || strchr(out->revision, ' '))
            return ac_error(AC_ERR_ARG, "'%s': '%s' is not a revision", text, out->revision);
        rest += 1 + l;
    }
    if (*rest == '/') {
        rest++;
        size_t l = strlen(rest);
        while (l && rest[l - 1] == '/') l--;
        if (l) {
            if (l >= HUB_PATH) return ac_error(AC_ERR_ARG, "'%s': the subfolder is too long", text);
            memcpy(out->sub, rest, l);
            out->sub[l] = 0;
            if (!hub_path_ok(out->sub))
                return ac_error(AC_ERR_ARG, "'%s': '%s' is not a subfolder of the repository", text, out->sub);
        }
    }
    return AC_OK;
}
