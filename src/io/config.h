/* JSON configs through cJSON, with typed getters whose errors name the
 * file and the key. Hugging Face files are strict JSON; Amphion writes its
 * configs with comments and trailing commas, read by the _relaxed forms. */
#ifndef AC_IO_CONFIG_H
#define AC_IO_CONFIG_H

#include <cjson/cJSON.h>

#include "audioc.h"

#define AC_CONFIG_MAX_BYTES (64u << 20)

typedef struct ac_config {
    char *path;
    const char *file;  /* short name for messages */
    cJSON *root;
} ac_config;

ac_status ac_config_load(const char *path, ac_config **out);
ac_status ac_config_parse(const char *text, size_t len, const char *name, ac_config **out);
/* JSON plus // and block comments and trailing commas in objects and
 * arrays (outside strings: "http://x" stays a string). */
ac_status ac_config_load_relaxed(const char *path, ac_config **out);
ac_status ac_config_parse_relaxed(const char *text, size_t len, const char *name, ac_config **out);
/* A config over ROOT (an object, owned from here on) named NAME. */
ac_status ac_config_from_json(cJSON *root, const char *name, ac_config **out);
void ac_config_free(ac_config *c);

/* Getters on any object of the config (OBJ NULL = the root). WHERE names
 * the object in messages (e.g. "jasper[2]"); NULL for the root. A missing
 * key is an error unless DEF is given (the _opt forms). */
ac_status ac_config_int(const ac_config *c, const cJSON *obj, const char *where,
                        const char *key, int *out);
ac_status ac_config_int_opt(const ac_config *c, const cJSON *obj, const char *where,
                            const char *key, int def, int *out);
ac_status ac_config_double(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, double *out);
ac_status ac_config_bool(const ac_config *c, const cJSON *obj, const char *where,
                         const char *key, int *out);
/* A string, or NULL when the value is JSON null. */
ac_status ac_config_string(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, const char **out);
ac_status ac_config_array(const ac_config *c, const cJSON *obj, const char *where,
                          const char *key, const cJSON **out);
ac_status ac_config_object(const ac_config *c, const cJSON *obj, const char *where,
                           const char *key, const cJSON **out);

/* Warns once for each key of OBJ that is not in KNOWN (NULL-terminated):
 * newer packages may carry keys we do not use. */
void ac_config_warn_unknown(const ac_config *c, const cJSON *obj, const char *where,
                            const char *const *known);

#endif
