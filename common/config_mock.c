/* The mock section: each key is one `stampede mock` flag, checked at load against the range that
 * flag accepts, so a bad value is named by file, line and key before anything starts. Only what
 * depends on the mock's own tables (the profile names) is left to the mock, which `stampede run`
 * reports. */
#include "config_mock.h"

#include <stdlib.h>
#include <string.h>

#include "config_yaml.h"
#include "dist.h"
#include "units.h"

typedef enum {
    MOCK_KEY_TEXT,     /* a string of 1 .. max characters */
    MOCK_KEY_COUNT,    /* a whole number in [min, max] */
    MOCK_KEY_DURATION, /* a duration, passed in milliseconds */
    MOCK_KEY_NUMBER,   /* a number in [min, max] */
    MOCK_KEY_FLAG,     /* a boolean: the flag when true */
    MOCK_KEY_FLAG_OFF, /* a boolean: the flag when false */
    MOCK_KEY_DIST      /* a distribution spec of common/dist.h ("lognormal:mean=300,sigma=0.5") */
} config_mock_kind_t;

typedef struct config_mock_key {
    const char *key;
    const char *flag;
    config_mock_kind_t kind;
    double min, max; /* counts and numbers; max length for text */
} config_mock_key_t;

#define MOCK_U32 1, 4294967295.0
#define MOCK_U32_ANY 0, 4294967295.0
#define MOCK_U53 0, 9007199254740992.0 /* the mock's integers are exact up to 2^53 */

/* The order is the order of config.yaml and of the mock's argument list. */
static const config_mock_key_t config_mock_keys[] = {
    {"profile", "--profile", MOCK_KEY_TEXT, 0, 31},
    {"model", "--model", MOCK_KEY_TEXT, 0, 127},
    {"strict_model", "--strict-model", MOCK_KEY_FLAG, 0, 0},
    {"seed", "--seed", MOCK_KEY_COUNT, MOCK_U53},
    {"ttft", "--ttft-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"itl", "--itl-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"max_num_seqs", "--max-num-seqs", MOCK_KEY_COUNT, MOCK_U32},
    {"max_num_batched_tokens", "--max-num-batched-tokens", MOCK_KEY_COUNT, MOCK_U32},
    {"max_model_len", "--max-model-len", MOCK_KEY_COUNT, MOCK_U32},
    {"kv_cache_tokens", "--kv-cache-tokens", MOCK_KEY_COUNT, MOCK_U53},
    {"prefix_cache", "--no-prefix-cache", MOCK_KEY_FLAG_OFF, 0, 0},
    {"prefix_cache_tokens", "--prefix-cache-tokens", MOCK_KEY_COUNT, MOCK_U53},
    {"tpot_base", "--tpot-base-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"alpha", "--alpha", MOCK_KEY_NUMBER, 0, 1e12},
    {"prefill_tokens_per_s", "--prefill-tokens-per-s", MOCK_KEY_NUMBER, 0, 1e12},
    {"ttft_overhead", "--ttft-overhead-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"output_len", "--output-len", MOCK_KEY_DIST, 0, 0},
    {"early_eos", "--early-eos", MOCK_KEY_FLAG, 0, 0},
    {"reasoning_tokens", "--reasoning-tokens", MOCK_KEY_DIST, 0, 0},
    {"fail_rate", "--fail-rate", MOCK_KEY_NUMBER, 0, 1},
    {"fail_status", "--fail-status", MOCK_KEY_COUNT, 100, 599},
    {"reset_after_tokens", "--reset-after-tokens", MOCK_KEY_COUNT, MOCK_U32_ANY},
    {"reset_rate", "--reset-rate", MOCK_KEY_NUMBER, 0, 1},
    {"stall", "--stall-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"stall_after_tokens", "--stall-after-tokens", MOCK_KEY_COUNT, MOCK_U32_ANY},
    {"stall_rate", "--stall-rate", MOCK_KEY_NUMBER, 0, 1},
    {"malformed_rate", "--malformed-rate", MOCK_KEY_NUMBER, 0, 1},
    {"step_fixed", "--step-fixed-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"spec_tokens", "--spec-tokens", MOCK_KEY_COUNT, MOCK_U32_ANY},
    {"spec_acceptance", "--spec-acceptance", MOCK_KEY_NUMBER, 0, 1},
    {"spec_draft", "--spec-draft-ms", MOCK_KEY_DURATION, 0, 1e12},
    {"spec_verify_weight", "--spec-verify-weight", MOCK_KEY_NUMBER, 0, 1e12},
    {"faults", "--faults", MOCK_KEY_TEXT, 0, 1023}, /* SPEC checked by the mock at start */
    {"flat_errors", "--flat-errors", MOCK_KEY_FLAG, 0, 0},
    {"sent_ns", "--no-sent-ns", MOCK_KEY_FLAG_OFF, 0, 0},
};

#define CONFIG_MOCK_N_KEYS (sizeof config_mock_keys / sizeof config_mock_keys[0])

/* The shortest text that reads back as v. */
static void config_mock_format_number(double v, char *buf, size_t len) {
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, len, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static int config_mock_range_fail(config_yaml_t *r, yaml_node_t *v, const char *path,
                                  const config_mock_key_t *k, bool whole) {
    char lo[40], hi[40];
    config_mock_format_number(k->min, lo, sizeof lo);
    config_mock_format_number(k->max, hi, sizeof hi);
    return config_yaml_fail(r, v, path, "expected %s from %s to %s, got '%s'",
                            whole ? "a whole number" : "a number", lo, hi, config_yaml_text(v));
}

/* Fills o->value (as written back) and o->arg (as passed to the mock) from node v. */
static int config_mock_read_value(config_yaml_t *r, yaml_node_t *v, const char *path,
                                  const config_mock_key_t *k, config_mock_option_t *o) {
    char buf[64];
    uint64_t u;
    double d;
    int64_t ns;
    bool b;
    switch (k->kind) {
    case MOCK_KEY_TEXT:
        if (config_yaml_string(r, v, path, &o->value) < 0)
            return -1;
        if (o->value[0] == '\0' || strlen(o->value) > (size_t)k->max)
            return config_yaml_fail(r, v, path, "expected 1 to %.0f characters, got '%s'", k->max,
                                    o->value);
        o->quoted = true;
        o->arg = strdup(o->value);
        break;
    case MOCK_KEY_COUNT:
        if (config_yaml_uint(r, v, path, UINT64_MAX, &u) < 0)
            return -1;
        if ((double)u < k->min || (double)u > k->max)
            return config_mock_range_fail(r, v, path, k, true);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
        o->value = strdup(buf);
        o->arg = strdup(buf);
        break;
    case MOCK_KEY_DURATION:
        if (config_yaml_duration(r, v, path, false, &ns) < 0)
            return -1;
        if ((double)ns / 1e6 > k->max)
            return config_yaml_fail(r, v, path,
                                    "expected a duration of at most 1000000000000ms, "
                                    "got '%s'",
                                    config_yaml_text(v));
        units_format_duration(ns, buf, sizeof buf);
        o->value = strdup(buf);
        config_mock_format_number((double)ns / 1e6, buf, sizeof buf);
        o->arg = strdup(buf);
        break;
    case MOCK_KEY_NUMBER:
        if (config_yaml_number(r, v, path, &d) < 0)
            return -1;
        if (d < k->min || d > k->max)
            return config_mock_range_fail(r, v, path, k, false);
        config_mock_format_number(d, buf, sizeof buf);
        o->value = strdup(buf);
        o->arg = strdup(buf);
        break;
    case MOCK_KEY_FLAG:
    case MOCK_KEY_FLAG_OFF:
        if (config_yaml_bool(r, v, path, &b) < 0)
            return -1;
        o->value = strdup(b ? "true" : "false");
        o->flag = b == (k->kind == MOCK_KEY_FLAG) ? k->flag : NULL;
        return o->value ? 0 : config_yaml_fail(r, v, path, "out of memory");
    case MOCK_KEY_DIST: {
        dist_t parsed;
        char why[256];
        if (config_yaml_string(r, v, path, &o->value) < 0)
            return -1;
        o->quoted = true;
        dist_init(&parsed);
        int rc = dist_parse_spec(o->value, &parsed, why, sizeof why);
        dist_clear(&parsed);
        if (rc < 0)
            return config_yaml_fail(r, v, path, "%s", why);
        o->arg = strdup(o->value);
        break;
    }
    }
    o->flag = k->flag;
    if (o->value == NULL || o->arg == NULL)
        return config_yaml_fail(r, v, path, "out of memory");
    return 0;
}

/* A profile is an engine model; ttft/itl select fixed mode, which has none (the mock refuses
 * both together: say so here, at the later of the two keys). */
static int config_mock_check_mode(config_yaml_t *r, yaml_node_t *node) {
    yaml_node_t *profile_key = NULL, *fixed_key = NULL;
    if (config_yaml_get(r, node, "profile", &profile_key) == NULL)
        return 0;
    if (config_yaml_get(r, node, "ttft", &fixed_key) == NULL &&
        config_yaml_get(r, node, "itl", &fixed_key) == NULL)
        return 0;
    bool fixed_later = profile_key->start_mark.index < fixed_key->start_mark.index;
    yaml_node_t *at = fixed_later ? fixed_key : profile_key;
    char path[CONFIG_YAML_KEY_MAX];
    config_yaml_path(path, sizeof path, "mock", config_yaml_text(at));
    return config_yaml_fail(r, at, path,
                            "profile and ttft/itl exclude each other: ttft and itl select the "
                            "fixed mode, which has no engine model");
}

int config_mock_parse(config_yaml_t *r, yaml_node_t *node, config_mock_t *self) {
    const char *names[CONFIG_MOCK_N_KEYS + 1];
    for (size_t i = 0; i < CONFIG_MOCK_N_KEYS; i++)
        names[i] = config_mock_keys[i].key;
    names[CONFIG_MOCK_N_KEYS] = NULL;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "mock", names) < 0)
        return -1;
    self->options = calloc(CONFIG_MOCK_N_KEYS, sizeof *self->options);
    if (self->options == NULL)
        return config_yaml_fail(r, node, "mock", "out of memory");
    for (size_t i = 0; i < CONFIG_MOCK_N_KEYS; i++) {
        const config_mock_key_t *k = &config_mock_keys[i];
        yaml_node_t *v = config_yaml_get(r, node, k->key, NULL);
        if (v == NULL)
            continue;
        char path[CONFIG_YAML_KEY_MAX];
        config_yaml_path(path, sizeof path, "mock", k->key);
        config_mock_option_t *o = &self->options[self->n_options++];
        o->key = k->key;
        if (config_mock_read_value(r, v, path, k, o) < 0)
            return -1;
    }
    return config_mock_check_mode(r, node);
}

int config_mock_copy(config_mock_t *dst, const config_mock_t *src) {
    memset(dst, 0, sizeof *dst);
    if (src->n_options == 0)
        return 0;
    dst->options = calloc(src->n_options, sizeof *dst->options);
    if (dst->options == NULL)
        return -1;
    for (size_t i = 0; i < src->n_options; i++) {
        const config_mock_option_t *s = &src->options[i];
        config_mock_option_t *d = &dst->options[dst->n_options++];
        *d = *s;
        d->value = strdup(s->value);
        d->arg = s->arg ? strdup(s->arg) : NULL;
        if (d->value == NULL || (s->arg && d->arg == NULL))
            return -1;
    }
    return 0;
}

void config_mock_free(config_mock_t *self) {
    for (size_t i = 0; i < self->n_options; i++) {
        free(self->options[i].value);
        free(self->options[i].arg);
    }
    free(self->options);
    memset(self, 0, sizeof *self);
}

char **config_mock_args(const config_mock_t *self) {
    char **argv = calloc(2 * self->n_options + 1, sizeof *argv);
    size_t n = 0;
    if (argv == NULL)
        return NULL;
    for (size_t i = 0; i < self->n_options; i++) {
        const config_mock_option_t *o = &self->options[i];
        if (o->flag == NULL)
            continue;
        argv[n++] = (char *)o->flag;
        if (o->arg != NULL)
            argv[n++] = o->arg;
    }
    return argv;
}
