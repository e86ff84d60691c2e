/* Fuzz the JSON config loader, strict and relaxed (comments, trailing
 * commas), and every typed getter on every key. */
#include <stdint.h>

#include "base/log.h"
#include "io/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* All getters on KEY of OBJ; errors are expected and ignored. */
static void get_all(const ac_config *c, const cJSON *obj, const char *where, const char *key)
{
    int i;
    double d;
    const char *s;
    const cJSON *a;
    (void)ac_config_int(c, obj, where, key, &i);
    (void)ac_config_int_opt(c, obj, where, key, 3, &i);
    (void)ac_config_double(c, obj, where, key, &d);
    (void)ac_config_bool(c, obj, where, key, &i);
    (void)ac_config_string(c, obj, where, key, &s);
    (void)ac_config_array(c, obj, where, key, &a);
    (void)ac_config_object(c, obj, where, key, &a);
}

static void exercise(ac_config *c)
{
    static const char *const keys[] = {"sample_rate", "n_mels", "threshold", "name", "enabled", "layers", NULL};
    for (int k = 0; keys[k]; k++) get_all(c, NULL, NULL, keys[k]);
    /* every key of the root, and of each nested object */
    for (const cJSON *it = c->root->child; it; it = it->next) {
        get_all(c, NULL, NULL, it->string);
        if (cJSON_IsObject(it)) {
            for (const cJSON *jt = it->child; jt; jt = jt->next) get_all(c, it, it->string, jt->string);
            ac_config_warn_unknown(c, it, it->string, keys);
        }
    }
    ac_config_warn_unknown(c, NULL, NULL, keys);
    ac_config_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0); /* unknown-key warnings would flood stderr */
    ac_config *c = NULL;
    if (ac_config_parse((const char *)data, size, "fuzz.json", &c) == AC_OK) exercise(c);
    if (ac_config_parse_relaxed((const char *)data, size, "fuzz.json", &c) == AC_OK) exercise(c);
    return 0;
}
