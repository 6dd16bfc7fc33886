#include "trace_load_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "buffer.h"
#include "workload.h"

int trace_lines_fail(loader_t *l, int line, const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    config_error_setv(l->err, l->file, line, 0, key, fmt, ap);
    va_end(ap);
    return -1;
}

const char *trace_lines_text(const loader_t *l, uint32_t offset) {
    return l->arena.data + offset;
}

/* Interns text in the arena; its offset, or UINT32_MAX on no memory. */
uint32_t trace_lines_intern(loader_t *l, const char *text, size_t len) {
    if (l->arena.len + len + 1 >= UINT32_MAX - 1)
        return UINT32_MAX;
    uint32_t at = (uint32_t)l->arena.len;
    if (buffer_append(&l->arena, text, len) != 0 || buffer_append(&l->arena, "", 1) != 0)
        return UINT32_MAX;
    return at;
}

static int load_grow_slots(loader_t *l) {
    size_t cap = l->cap_slots ? l->cap_slots * 2 : 1024;
    id_slot_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < l->cap_slots; i++) {
        id_slot_t *s = &l->slots[i];
        if (!s->key)
            continue;
        const char *text = trace_lines_text(l, s->key - 1);
        uint64_t h = XXH3_64bits_withSeed(text, strlen(text), s->scope);
        size_t k = h & (cap - 1);
        while (slots[k].key)
            k = (k + 1) & (cap - 1);
        slots[k] = *s;
    }
    free(l->slots);
    l->slots = slots;
    l->cap_slots = cap;
    return 0;
}

/* Looks up (scope, text); when absent and value != UINT32_MAX, adds it with that value. Returns
 * the slot, NULL when absent (lookup only) or on no memory (*oom set). */
static id_slot_t *load_id(loader_t *l, uint32_t scope, const char *text, uint32_t value,
                          bool *oom) {
    if ((l->n_slots + 1) * 2 > l->cap_slots && load_grow_slots(l) != 0) {
        *oom = true;
        return NULL;
    }
    uint64_t h = XXH3_64bits_withSeed(text, strlen(text), scope);
    size_t k = h & (l->cap_slots - 1);
    while (l->slots[k].key) {
        id_slot_t *s = &l->slots[k];
        if (s->scope == scope && strcmp(trace_lines_text(l, s->key - 1), text) == 0)
            return s;
        k = (k + 1) & (l->cap_slots - 1);
    }
    if (value == UINT32_MAX)
        return NULL;
    uint32_t at = trace_lines_intern(l, text, strlen(text));
    if (at == UINT32_MAX) {
        *oom = true;
        return NULL;
    }
    l->slots[k] = (id_slot_t){.key = at + 1, .scope = scope, .value = value};
    l->n_slots++;
    return &l->slots[k];
}

/* An id (a string, or an integer written as its decimal text) into buf; false otherwise. */
static bool load_id_text(json_t *v, char *buf, size_t len, int64_t *number, bool *is_number) {
    *is_number = false;
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
        return json_string_length(v) > 0 && json_string_length(v) < len;
    }
    if (json_is_integer(v)) {
        *number = (int64_t)json_integer_value(v);
        *is_number = true;
        snprintf(buf, len, "%" PRId64, *number);
        return true;
    }
    return false;
}

/* A whole number >= min under key, or -1 with the error set (absent: *out untouched, 0). */
int trace_lines_count(loader_t *l, int line, json_t *o, const char *key, bool required, int64_t min,
                      int64_t *out) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required)
            return trace_lines_fail(l, line, key, "missing key '%s'", key);
        return 0;
    }
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(x >= (double)min) || x != floor(x) || x > (double)WORKLOAD_MAX_TOKENS)
        return trace_lines_fail(l, line, key, "expected a whole number from %" PRId64 " to %u", min,
                                WORKLOAD_MAX_TOKENS);
    *out = (int64_t)x;
    return 0;
}

/* Seconds (>= 0) under key into ns; absent leaves *out. */
static int load_seconds(loader_t *l, int line, json_t *o, const char *key, int64_t *out) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(x >= 0.0) || !isfinite(x))
        return trace_lines_fail(l, line, key, "expected a number of seconds >= 0");
    *out = workload_seconds_to_ns(x);
    return 0;
}

/* The list at key of o into *list (NULL when absent or null), with room made for its items after
 * the n_items a growable array (items_p, cap) holds; -1 (said, naming key) when it is not a list
 * (what: what it should be) or memory is short. */
static int trace_lines_list(loader_t *l, int line, json_t *o, const char *key, const char *what,
                            void *items_p, size_t *cap, size_t n_items, size_t item_size,
                            json_t **list) {
    json_t *v = json_object_get(o, key);
    *list = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return trace_lines_fail(l, line, key, "expected %s", what);
    if (buffer_grow_array(items_p, cap, n_items + json_array_size(v), item_size) != 0)
        return trace_lines_fail(l, line, key, "out of memory");
    *list = v;
    return 0;
}

int trace_lines_hashes(loader_t *l, int line, json_t *o, load_line_t *rec) {
    json_t *v;
    rec->hashes_at = (uint32_t)l->n_hashes;
    if (trace_lines_list(l, line, o, "hash_ids", "a list of whole numbers", &l->hashes,
                         &l->cap_hashes, l->n_hashes, sizeof *l->hashes, &v) != 0)
        return -1;
    if (!v)
        return 0;
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        json_t *h = json_array_get(v, i);
        if (!json_is_integer(h) || json_integer_value(h) < 0)
            return trace_lines_fail(l, line, "hash_ids", "item %zu: expected a whole number >= 0",
                                    i);
        l->hashes[l->n_hashes++] = (uint64_t)json_integer_value(h);
    }
    rec->n_hashes = (uint32_t)n;
    return 0;
}

load_line_t *trace_lines_new_line(loader_t *l, int line) {
    if (buffer_grow_array(&l->lines, &l->cap_lines, l->n_lines + 1, sizeof *l->lines) != 0) {
        trace_lines_fail(l, line, NULL, "out of memory");
        return NULL;
    }
    load_line_t *rec = &l->lines[l->n_lines];
    memset(rec, 0, sizeof *rec);
    rec->line = line;
    rec->input_length = rec->new_input_length = -1;
    rec->history_parent = UINT32_MAX;
    rec->history = 1.0;
    return rec;
}

/* A new session (first appearance order) for rec. */
int trace_lines_new_session(loader_t *l, load_line_t *rec, uint32_t id, int64_t number,
                            bool is_number) {
    if (buffer_grow_array(&l->sessions, &l->cap_sessions, l->n_sessions + 1, sizeof *l->sessions) !=
        0)
        return trace_lines_fail(l, rec->line, NULL, "out of memory");
    rec->session = (uint32_t)l->n_sessions;
    l->sessions[l->n_sessions++] = (load_session_t){.id = id,
                                                    .id_number = number,
                                                    .id_is_number = is_number,
                                                    .first_line = (uint32_t)l->n_lines,
                                                    .arrival_ns = -1};
    return 0;
}

static int load_role(loader_t *l, int line, json_t *o, load_line_t *rec) {
    json_t *v = json_object_get(o, "role_name");
    const char *key = "role_name";
    if (!v || json_is_null(v)) {
        v = json_object_get(o, "role");
        key = "role";
    }
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) { /* an unnamed role's index */
        if (json_integer_value(v) < 0 || json_integer_value(v) >= CONFIG_MAX_ROLES)
            return trace_lines_fail(l, line, key, "a role index is from 0 to %d",
                                    CONFIG_MAX_ROLES - 1);
        rec->role = (uint32_t)json_integer_value(v);
        return 0;
    }
    const char *name = json_is_string(v) ? json_string_value(v) : NULL;
    if (!name || !*name ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
            strlen(name))
        return trace_lines_fail(l, line, key,
                                "expected a role name (letters, digits, '_', '-', '.')");
    bool known = false;
    for (size_t i = 0; i < l->cfg->workload.n_roles && !known; i++)
        known = strcmp(l->cfg->workload.roles[i], name) == 0;
    if (!known && l->cfg->workload.n_roles >= CONFIG_MAX_ROLES)
        return trace_lines_fail(l, line, key, "at most %d roles", CONFIG_MAX_ROLES);
    if (config_role_index(l->cfg, name, &rec->role) != 0)
        return trace_lines_fail(l, line, key, "out of memory");
    return 0;
}

/* history: "full", "none" or a fraction in [0, 1]. */
static int load_history(loader_t *l, int line, json_t *o, load_line_t *rec) {
    json_t *v = json_object_get(o, "history");
    if (!v || json_is_null(v))
        return 0;
    if (json_is_string(v) && strcmp(json_string_value(v), "full") == 0)
        rec->history = 1.0;
    else if (json_is_string(v) && strcmp(json_string_value(v), "none") == 0)
        rec->history = 0.0;
    else if (json_is_number(v) && json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0)
        rec->history = json_number_value(v);
    else
        return trace_lines_fail(l, line, "history", "expected full, none or a fraction in [0, 1]");
    return 0;
}

static int load_parents(loader_t *l, int line, json_t *o, load_line_t *rec) {
    json_t *v;
    char id[256];
    int64_t number;
    bool is_number;
    rec->refs_at = (uint32_t)l->n_refs;
    if (trace_lines_list(l, line, o, "parents", "a list of node ids", &l->refs, &l->cap_refs,
                         l->n_refs, sizeof *l->refs, &v) != 0)
        return -1;
    if (!v)
        return 0;
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        if (!load_id_text(json_array_get(v, i), id, sizeof id, &number, &is_number))
            return trace_lines_fail(l, line, "parents", "item %zu: expected a node id", i);
        uint32_t at = trace_lines_intern(l, id, strlen(id));
        if (at == UINT32_MAX)
            return trace_lines_fail(l, line, "parents", "out of memory");
        l->refs[l->n_refs++] = at;
    }
    rec->n_parents = (uint32_t)n;
    v = json_object_get(o, "history_parent");
    if (!v && n > 0)
        rec->history_parent = l->refs[rec->refs_at];
    return 0;
}

/* Session trace: one request node per line. */
int trace_lines_session(loader_t *l, int line, json_t *o) {
    load_line_t *rec = trace_lines_new_line(l, line);
    if (!rec)
        return -1;
    char id[256];
    int64_t number = 0, output = 0;
    bool is_number, oom = false;
    json_t *v = json_object_get(o, "session");
    if (!v)
        return trace_lines_fail(l, line, "session", "missing key 'session'");
    if (!load_id_text(v, id, sizeof id, &number, &is_number))
        return trace_lines_fail(l, line, "session", "expected a string or a whole number");
    id_slot_t *slot = load_id(l, UINT32_MAX, id, (uint32_t)l->n_sessions, &oom);
    if (!slot)
        return trace_lines_fail(l, line, "session", "out of memory");
    if (slot->value == l->n_sessions &&
        trace_lines_new_session(l, rec, slot->key - 1, number, is_number) != 0)
        return -1;
    rec->session = slot->value;
    load_session_t *session = &l->sessions[rec->session];
    v = json_object_get(o, "node");
    if (!v)
        return trace_lines_fail(l, line, "node", "missing key 'node'");
    if (!load_id_text(v, id, sizeof id, &rec->id_number, &rec->id_is_number))
        return trace_lines_fail(l, line, "node", "expected a string or a whole number");
    slot = load_id(l, rec->session, id, (uint32_t)l->n_lines, &oom);
    if (!slot)
        return trace_lines_fail(l, line, "node", "out of memory");
    if (slot->value != l->n_lines)
        return trace_lines_fail(l, line, "node",
                                "session '%s': node '%s' is given twice (first at line %d)",
                                trace_lines_text(l, session->id), id, l->lines[slot->value].line);
    rec->id = slot->key - 1;
    if (load_parents(l, line, o, rec) != 0)
        return -1;
    v = json_object_get(o, "history_parent");
    if (v && json_is_null(v))
        rec->history_parent = UINT32_MAX; /* explicitly none */
    if (v && !json_is_null(v)) {
        if (!load_id_text(v, id, sizeof id, &number, &is_number))
            return trace_lines_fail(l, line, "history_parent", "expected a node id or null");
        if ((rec->history_parent = trace_lines_intern(l, id, strlen(id))) == UINT32_MAX)
            return trace_lines_fail(l, line, "history_parent", "out of memory");
    }
    int64_t arrival_ns = -1;
    json_t *arrival = json_object_get(o, "arrival");
    if (trace_lines_count(l, line, o, "input_length", false, 1, &rec->input_length) != 0 ||
        trace_lines_count(l, line, o, "new_input_length", false, 1, &rec->new_input_length) != 0 ||
        trace_lines_count(l, line, o, "output_length", true, 1, &output) != 0 ||
        load_seconds(l, line, o, "wait_after_ready", &rec->wait_ns) != 0 ||
        load_seconds(l, line, o, "arrival", &arrival_ns) != 0 || load_role(l, line, o, rec) != 0 ||
        load_history(l, line, o, rec) != 0 || trace_lines_hashes(l, line, o, rec) != 0)
        return -1;
    if (rec->input_length < 0 && rec->new_input_length < 0)
        return trace_lines_fail(l, line, "new_input_length",
                                "missing key 'new_input_length' (or 'input_length')");
    rec->output_length = (uint32_t)output;
    json_t *append = json_object_get(o, "append_parent_replies");
    if (append && !json_is_boolean(append) && !json_is_null(append))
        return trace_lines_fail(l, line, "append_parent_replies", "expected true or false");
    rec->append = json_is_true(append);
    if (arrival && !json_is_null(arrival) &&
        (session->arrival_ns < 0 || arrival_ns < session->arrival_ns))
        session->arrival_ns = arrival_ns;
    l->n_lines++;
    return 0;
}

uint32_t trace_lines_session_index(loader_t *l, const char *id) {
    bool oom = false;
    id_slot_t *slot = load_id(l, UINT32_MAX, id, UINT32_MAX, &oom);
    return slot ? slot->value : UINT32_MAX;
}

uint32_t trace_lines_find(loader_t *l, uint32_t s, uint32_t id) {
    bool oom = false;
    id_slot_t *slot = load_id(l, s, trace_lines_text(l, id), UINT32_MAX, &oom);
    return slot ? slot->value : UINT32_MAX;
}
