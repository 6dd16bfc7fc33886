/* Veeksha's timed_synthetic_session traces (format: veeksha): rows of session_id, input_length,
 * new_input_length, output_length and session_context {node_id, parent_nodes, history_parent,
 * wait_after_ready}, or legacy linear rows without session_context (node = turn_idx or the row's
 * place in its session, parent the row before, wait wait_after_previous_response_s). Each row is
 * translated into stampede's session-trace line and read as one. The sessions carry no arrival
 * times: under a rate scheduler they arrive as its sessions would (trace_veeksha_arrivals). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "trace_load_internal.h"
#include "workload.h"

/* Copies o[from] (when present) into out[to]. */
static int copy_key(json_t *out, const char *to, json_t *o, const char *from) {
    json_t *v = json_object_get(o, from);
    return v ? json_object_set(out, to, v) : 0;
}

/* Rows of session s read so far (0 for a new session). */
static uint32_t session_rows(loader_t *l, const char *id) {
    uint32_t s = trace_lines_session_index(l, id);
    return s == UINT32_MAX ? 0 : l->sessions[s].rows;
}

int trace_veeksha_line(loader_t *l, int line, json_t *o) {
    json_t *row = json_object();
    if (!row)
        return trace_lines_fail(l, line, NULL, "out of memory");
    char id[64];
    json_t *session = json_object_get(o, "session_id");
    if (!session || json_is_null(session)) { /* Veeksha assigns one: the row's own session */
        snprintf(id, sizeof id, "row-%d", line);
        session = json_string(id);
        json_object_set_new(row, "session", session);
    } else {
        json_object_set(row, "session", session);
    }
    int rc = copy_key(row, "input_length", o, "input_length") |
             copy_key(row, "new_input_length", o, "new_input_length") |
             copy_key(row, "output_length", o, "output_length");
    json_t *context = json_object_get(o, "session_context");
    if (context && json_is_object(context)) {
        if (!json_object_get(context, "node_id")) {
            json_decref(row);
            return trace_lines_fail(l, line, "session_context.node_id", "missing key 'node_id'");
        }
        rc |= copy_key(row, "node", context, "node_id") |
              copy_key(row, "parents", context, "parent_nodes") |
              copy_key(row, "history_parent", context, "history_parent") |
              copy_key(row, "wait_after_ready", context, "wait_after_ready");
    } else if (context && !json_is_null(context)) {
        json_decref(row);
        return trace_lines_fail(l, line, "session_context",
                                "expected {node_id, parent_nodes, history_parent, "
                                "wait_after_ready}");
    } else { /* legacy linear: each row continues the one before in its session */
        char key[64];
        const char *sid = json_is_string(session) ? json_string_value(session) : NULL;
        if (!sid && json_is_integer(session)) {
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(session));
            sid = key;
        }
        uint32_t rows = sid ? session_rows(l, sid) : 0;
        json_t *turn = json_object_get(o, "turn_idx");
        json_int_t node = turn && json_is_integer(turn) ? json_integer_value(turn) : rows;
        rc |= json_object_set_new(row, "node", json_integer(node));
        if (rows > 0) {
            json_t *parents = json_array();
            rc |= !parents || json_array_append_new(parents, json_integer(node - 1)) ||
                  json_object_set_new(row, "parents", parents);
        }
        rc |= copy_key(row, "wait_after_ready", o, "wait_after_previous_response_s");
    }
    if (rc != 0) {
        json_decref(row);
        return trace_lines_fail(l, line, NULL, "out of memory");
    }
    rc = trace_lines_session(l, line, row);
    json_decref(row);
    if (rc == 0)
        l->sessions[l->lines[l->n_lines - 1].session].rows++;
    return rc;
}

void trace_veeksha_arrivals(loader_t *l) {
    /* the scheduler's own arrival sequence, as a generated workload's sessions get it */
    config_t shadow = *l->cfg;
    shadow.workload.kind = WORKLOAD_REQUESTS;
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &shadow);
    for (size_t s = 0; s < l->n_sessions; s++)
        if (l->sessions[s].arrival_ns < 0)
            l->sessions[s].arrival_ns = workload_arrivals_time_ns(&arrivals, s);
}
