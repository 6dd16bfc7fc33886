#include "mock_faults.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mock_fault_names[MOCK_FAULT__COUNT] = {
    [MOCK_FAULT_NONE] = "none",
    [MOCK_FAULT_500] = "500",
    [MOCK_FAULT_503] = "503",
    [MOCK_FAULT_429] = "429",
    [MOCK_FAULT_CONTEXT_LENGTH] = "context-length",
    [MOCK_FAULT_REFUSED] = "refused",
    [MOCK_FAULT_RESET_HEADERS] = "reset-headers",
    [MOCK_FAULT_RESET_MID] = "reset-mid",
    [MOCK_FAULT_STALL] = "stall",
    [MOCK_FAULT_MALFORMED] = "malformed",
    [MOCK_FAULT_TRUNCATED] = "truncated",
    [MOCK_FAULT_NO_DONE] = "no-done",
    [MOCK_FAULT_SLOW_HEADERS] = "slow-headers",
    [MOCK_FAULT_EVENT_ERROR] = "event-error",
    [MOCK_FAULT_NOT_SSE] = "not-sse",
};

/* Default waits: a stall outlasts any sensible request timeout; slow headers are a second. */
#define MOCK_FAULT_STALL_MS 600000.0
#define MOCK_FAULT_SLOW_HEADERS_MS 1000.0

const char *mock_fault_name(mock_fault_kind_t kind) {
    return kind < MOCK_FAULT__COUNT ? mock_fault_names[kind] : "unknown";
}

static mock_fault_kind_t mock_fault_lookup(const char *name, size_t len) {
    for (int k = MOCK_FAULT_NONE + 1; k < MOCK_FAULT__COUNT; k++)
        if (strlen(mock_fault_names[k]) == len && !strncmp(mock_fault_names[k], name, len))
            return (mock_fault_kind_t)k;
    return MOCK_FAULT_NONE;
}

/* Parses text[0..len) as a finite number within [min, max]. */
static int mock_faults_number(const char *text, size_t len, double min, double max, double *out) {
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end != '\0' || errno || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Parses one entry, e[0..len), into rule. */
static int mock_faults_entry(const char *e, size_t len, mock_fault_rule_t *rule, char *err,
                             size_t errlen) {
    size_t name_len = strcspn(e, ":@/");
    if (name_len > len)
        name_len = len;
    mock_fault_kind_t kind = mock_fault_lookup(e, name_len);
    if (kind == MOCK_FAULT_NONE) {
        int n =
            snprintf(err, errlen, "--faults: unknown kind '%.*s' in '%.*s' (kinds:", (int)name_len,
                     e, (int)len, e);
        for (int k = MOCK_FAULT_NONE + 1; k < MOCK_FAULT__COUNT && n >= 0 && (size_t)n < errlen;
             k++)
            n += snprintf(err + n, errlen - (size_t)n, " %s", mock_fault_names[k]);
        if (n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        return -1;
    }
    *rule = (mock_fault_rule_t){.kind = kind, .probability = 1};
    rule->delay_ms = kind == MOCK_FAULT_STALL          ? MOCK_FAULT_STALL_MS
                     : kind == MOCK_FAULT_SLOW_HEADERS ? MOCK_FAULT_SLOW_HEADERS_MS
                                                       : 0;
    const char *p = e + name_len, *end = e + len;
    const char *slash = memchr(p, '/', (size_t)(end - p));
    const char *how_end = slash ? slash : end;
    if (p < how_end) {
        double v;
        size_t n = (size_t)(how_end - p - 1);
        if (*p == ':' && mock_faults_number(p + 1, n, 0, 1, &v) == 0) {
            rule->probability = v;
        } else if (*p == '@' && mock_faults_number(p + 1, n, 1, 1e15, &v) == 0 && v == floor(v)) {
            rule->every = (uint64_t)v;
            rule->probability = 0;
        } else {
            snprintf(err, errlen,
                     "--faults: '%.*s': expected KIND:P with P in [0, 1] or KIND@N with N an "
                     "integer >= 1",
                     (int)len, e);
            return -1;
        }
    }
    if (slash) {
        if (kind != MOCK_FAULT_STALL && kind != MOCK_FAULT_SLOW_HEADERS) {
            snprintf(err, errlen, "--faults: '%.*s': only stall and slow-headers take a /MS delay",
                     (int)len, e);
            return -1;
        }
        if (mock_faults_number(slash + 1, (size_t)(end - slash - 1), 0, 1e12, &rule->delay_ms)) {
            snprintf(err, errlen, "--faults: '%.*s': expected a delay in ms >= 0 after '/'",
                     (int)len, e);
            return -1;
        }
    }
    return 0;
}

int mock_faults_parse(mock_faults_t *self, const char *spec, char *err, size_t errlen) {
    mock_faults_t parsed = {.n_rules = 0};
    double total = 0;
    const char *p = spec;
    if (*spec == '\0') {
        snprintf(err, errlen, "--faults: empty SPEC (e.g. 500:0.02,reset-mid@10)");
        return -1;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(err, errlen, "--faults: empty entry in '%s'", spec);
            return -1;
        }
        if (parsed.n_rules == MOCK_FAULTS_MAX_RULES) {
            snprintf(err, errlen, "--faults: more than %d entries", MOCK_FAULTS_MAX_RULES);
            return -1;
        }
        mock_fault_rule_t *rule = &parsed.rules[parsed.n_rules++];
        if (mock_faults_entry(p, len, rule, err, errlen))
            return -1;
        total += rule->every ? 0 : rule->probability;
        if (total > 1 + 1e-9) {
            snprintf(err, errlen,
                     "--faults: the probabilities add up to %.6g, more than 1 (one draw per "
                     "request picks at most one fault)",
                     total);
            return -1;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *self = parsed;
    return 0;
}

const mock_fault_rule_t *mock_faults_pick(const mock_faults_t *self, uint64_t number, double u,
                                          int connection) {
    for (size_t i = 0; i < self->n_rules; i++) {
        const mock_fault_rule_t *r = &self->rules[i];
        if ((r->kind == MOCK_FAULT_REFUSED) == !!connection && r->every && number % r->every == 0)
            return r;
    }
    double acc = 0;
    for (size_t i = 0; i < self->n_rules; i++) {
        const mock_fault_rule_t *r = &self->rules[i];
        if ((r->kind == MOCK_FAULT_REFUSED) != !!connection || r->every)
            continue;
        acc += r->probability;
        if (u < acc)
            return r;
    }
    return NULL;
}
