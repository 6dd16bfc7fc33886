#include "sweep_pool.h"

#include <string.h>

#include "session_report.h"

int sweep_pool_init(sweep_pool_t *self, size_t n_endpoints) {
    memset(self, 0, sizeof *self);
    if (sessions_stats_init(&self->sessions, n_endpoints) != 0 || !(self->decode = overlap_new())) {
        sweep_pool_free(self);
        return -1;
    }
    return 0;
}

void sweep_pool_free(sweep_pool_t *self) {
    for (uint32_t r = 0; r < MERGE_MAX_ROLES; r++)
        merge_stats_destroy(&self->roles[r]);
    if (self->sessions.makespan)
        sessions_stats_free(&self->sessions);
    overlap_destroy(&self->decode);
    json_decref(self->client_series);
    memset(self, 0, sizeof *self);
}

int sweep_pool_add(sweep_pool_t *self, const merge_t *merge, const client_series_t *series,
                   uint32_t rep) {
    int rc = 0;
    uint32_t n = merge_role_count(merge);
    for (uint32_t r = 0; r < n && r < MERGE_MAX_ROLES; r++) {
        const merge_stats_t *role = merge_role(merge, r);
        if (!role)
            continue;
        if (!self->roles[r] && !(self->roles[r] = merge_stats_new())) {
            rc = -1;
            continue;
        }
        merge_stats_pool(self->roles[r], role);
        if (r + 1 > self->n_roles)
            self->n_roles = r + 1;
    }
    if (self->sessions.makespan)
        sessions_stats_pool(&self->sessions, sessions_stats(merge_sessions(merge)));
    if (!self->decode || overlap_pool(self->decode, merge_decode(merge)) != 0)
        rc = -1;
    if (series) {
        json_decref(self->client_series);
        self->client_series = client_series_json(series);
        self->series_repetition = rep;
    }
    self->repetitions++;
    return rc;
}

void sweep_pool_json(sweep_pool_t *self, json_t *level, const report_meta_t *meta) {
    if (!self->decode || !self->sessions.makespan)
        return;
    session_report_pooled_json(level, (const merge_stats_t *const *)self->roles, self->n_roles,
                               &self->sessions, self->decode, meta);
    json_object_set_new(level, "client_series",
                        self->client_series ? json_incref(self->client_series) : json_null());
    json_object_set_new(level, "client_series_from_repetition",
                        self->client_series ? json_integer(self->series_repetition) : json_null());
}
