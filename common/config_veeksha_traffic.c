/* A Veeksha file's traffic_scheduler onto stampede's scheduler: rate (poisson, gamma or fixed
 * intervals) or concurrent (target_concurrent_sessions, rampup_seconds); an !expand list of the
 * knob is kept for the sweep. Veeksha's defaults where a key is left out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_veeksha_internal.h"

static const char *const scheduler_types[] = {"rate", "concurrent", "sequential_launch", NULL};
static const char *const rate_keys[] = {"type", "interval_generator", "cancel_session_on_failure",
                                        "arrival_rate", NULL};
static const char *const concurrent_keys[] = {"type", "target_concurrent_sessions",
                                              "rampup_seconds", "cancel_session_on_failure", NULL};

/* The scheduler's knob (arrival_rate or target_concurrent_sessions): a number, or an !expand list
 * (the sweep levels, the first of which stands in). */
static int veeksha_knob(veeksha_t *v, yaml_node_t *map, const char *path, const char *key,
                        double *out) {
    char full[CONFIG_YAML_KEY_MAX];
    config_yaml_path(full, sizeof full, path, key);
    yaml_node_t *n = config_yaml_get(v->r, map, key, NULL);
    if (n == NULL)
        return 0;
    if (veeksha_is_expand(n)) {
        if (n->type != YAML_SEQUENCE_NODE ||
            n->data.sequence.items.top == n->data.sequence.items.start)
            return config_yaml_fail(v->r, n, full, "!expand wants a list of values");
        v->knob_expand = n;
        n = config_yaml_node(v->r, n->data.sequence.items.start[0]);
    }
    if (config_yaml_number(v->r, n, full, out) < 0)
        return -1;
    if (!(*out > 0))
        return config_yaml_fail(v->r, n, full, "expected a number greater than 0, got '%s'",
                                config_yaml_text(n));
    return 0;
}

static int veeksha_cancel(veeksha_t *v, yaml_node_t *node, const char *path) {
    bool cancel = true;
    yaml_node_t *n = veeksha_get(v, node, "cancel_session_on_failure");
    char key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(key, sizeof key, path, "cancel_session_on_failure");
    if (n == NULL || config_yaml_bool(v->r, n, key, &cancel) < 0 || cancel)
        return n && !cancel ? -1 : 0;
    return veeksha_note(v, n, key,
                        "false: stampede still ends a session at its first failed request "
                        "(true is its only behaviour)");
}

static int veeksha_rate(veeksha_t *v, yaml_node_t *node, const char *path) {
    config_scheduler_t *s = &v->c->scheduler;
    char key[CONFIG_YAML_KEY_MAX];
    s->kind = SCHEDULER_RATE;
    s->concurrency = 0;
    s->rate = 1;
    s->arrival = ARRIVAL_POISSON;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(v->r, node, path, rate_keys) < 0 ||
        veeksha_cancel(v, node, path) < 0)
        return -1;
    if (veeksha_knob(v, node, path, "arrival_rate", &s->rate) < 0) /* the write-up's form */
        return -1;
    yaml_node_t *gen = veeksha_get(v, node, "interval_generator");
    if (gen == NULL)
        return 0;
    config_yaml_path(path == NULL ? key : key, sizeof key, path, "interval_generator");
    char type_key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(type_key, sizeof type_key, key, "type");
    yaml_node_t *t = veeksha_get(v, gen, "type");
    int type = 0;
    if (t && config_yaml_enum(v->r, t, type_key, veeksha_interval_types, &type) < 0)
        return -1;
    static const char *const keys[][4] = {{"type", "arrival_rate", NULL},
                                          {"type", "arrival_rate", "cv", NULL},
                                          {"type", "interval", NULL}};
    if (config_yaml_check_keys(v->r, gen, key, keys[type]) < 0)
        return -1;
    if (type == 2) {
        double interval = 1;
        if (veeksha_number(v, gen, key, "interval", 0, &interval) < 0)
            return -1;
        if (!(interval > 0))
            return config_yaml_fail(v->r, veeksha_get(v, gen, "interval"), key,
                                    "interval must be greater than 0");
        s->arrival = ARRIVAL_CONSTANT;
        s->rate = 1 / interval;
        return 0;
    }
    s->arrival = type == 0 ? ARRIVAL_POISSON : ARRIVAL_GAMMA;
    if (type == 1) {
        s->arrival_cv = 0.5;
        if (veeksha_number(v, gen, key, "cv", 0, &s->arrival_cv) < 0)
            return -1;
        if (!(s->arrival_cv > 0))
            return config_yaml_fail(v->r, veeksha_get(v, gen, "cv"), key,
                                    "cv must be greater than 0");
    }
    return veeksha_knob(v, gen, key, "arrival_rate", &s->rate);
}

static int veeksha_concurrent(veeksha_t *v, yaml_node_t *node, const char *path) {
    config_scheduler_t *s = &v->c->scheduler;
    double sessions = 3, rampup = 10;
    s->kind = SCHEDULER_CONCURRENT;
    if (config_yaml_check_keys(v->r, node, path, concurrent_keys) < 0 ||
        veeksha_cancel(v, node, path) < 0 ||
        veeksha_knob(v, node, path, "target_concurrent_sessions", &sessions) < 0 ||
        veeksha_number(v, node, path, "rampup_seconds", 0, &rampup) < 0)
        return -1;
    if (sessions != floor(sessions) || sessions > UINT32_MAX)
        return config_yaml_fail(v->r, veeksha_get(v, node, "target_concurrent_sessions"), path,
                                "target_concurrent_sessions is a whole number >= 1");
    s->concurrency = (uint32_t)sessions;
    /* a capacity search sets rampup_seconds with the level: stampede starts a level at once */
    s->ramp_up_ns = v->capacity ? 0 : (int64_t)llround(rampup * 1e9);
    return 0;
}

int veeksha_traffic_scheduler(veeksha_t *v, yaml_node_t *node) {
    const char *path = "traffic_scheduler";
    int type = 0;
    yaml_node_t *t = node ? veeksha_get(v, node, "type") : NULL;
    if (t && config_yaml_enum(v->r, t, "traffic_scheduler.type", scheduler_types, &type) < 0)
        return -1;
    if (type == 2)
        return config_yaml_fail(v->r, t, "traffic_scheduler.type",
                                "sequential_launch is not mapped: stampede has no launch "
                                "ordering across sessions in flight (use rate or concurrent)");
    return type == 0 ? veeksha_rate(v, node, path) : veeksha_concurrent(v, node, path);
}
