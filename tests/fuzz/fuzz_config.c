/* The config loader (common/config_load.c and the readers under it) on arbitrary YAML text, as a
 * worker meets it in an Assign. Text refused gets a message; text accepted is a config that
 * passes its own validation again: written back as YAML (as the controller ships it) it loads
 * back, and writes the same YAML a second time; a deep copy writes it too. */
#include <string.h>

#include "config.h"
#include "fuzz.h"

/* Loads yaml and fails loudly (the message and the text) when it does not load. */
static void fuzz_config_reload(const char *yaml, config_t *out) {
    config_error_t err;
    if (config_load_string(out, yaml, strlen(yaml), "<written back>", &err) == 0)
        return;
    char message[1024];
    config_error_format(&err, message, sizeof message);
    fprintf(stderr, "the config written back does not load: %s\n---\n%s---\n", message, yaml);
    abort();
}

/* A accepted config writes YAML that loads back to a config writing the same YAML. */
static void fuzz_config_check_round_trip(const config_t *config, char *(*write)(const config_t *)) {
    char *yaml = write(config);
    FUZZ_CHECK(yaml != NULL);
    config_t back;
    fuzz_config_reload(yaml, &back);
    char *again = write(&back);
    FUZZ_CHECK(again != NULL);
    if (strcmp(yaml, again) != 0) {
        fprintf(stderr, "written back differently:\n---\n%s---\n%s---\n", yaml, again);
        abort();
    }
    free(again);
    free(yaml);
    config_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    config_t config;
    config_error_t err;
    if (config_load_string(&config, (const char *)data, size, "<fuzz>", &err) < 0) {
        FUZZ_CHECK(err.message[0] != '\0');
        char message[1024];
        config_error_format(&err, message, sizeof message);
        return 0;
    }
    fuzz_config_check_round_trip(&config, config_to_yaml_unredacted);
    fuzz_config_check_round_trip(&config, config_to_yaml);
    config_t copy;
    FUZZ_CHECK(config_copy(&copy, &config) == 0);
    char *original = config_to_yaml_unredacted(&config), *copied = config_to_yaml_unredacted(&copy);
    FUZZ_CHECK(original && copied && strcmp(original, copied) == 0);
    free(original);
    free(copied);
    config_free(&copy);
    config_free(&config);
    return 0;
}
