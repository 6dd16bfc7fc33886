#include "session_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static double ratio(uint64_t part, uint64_t whole) {
    return whole ? (double)part / (double)whole : 0;
}

static json_t *ratio_json(uint64_t part, uint64_t whole) {
    return whole ? json_real(ratio(part, whole)) : json_null();
}

static json_t *role_json(const merge_stats_t *s) {
    json_t *o = json_object();
    json_object_set_new(o, "requests", json_integer((json_int_t)s->requests));
    json_object_set_new(o, "ttft_ms", report_metric_json(s->latency[METRIC_TTFT]));
    json_object_set_new(o, "ttfc_ms", report_metric_json(s->latency[METRIC_TTFC]));
    json_object_set_new(o, "tpot_ms", report_metric_json(s->latency[METRIC_TPOT]));
    json_object_set_new(o, "itl_ms", report_metric_json(s->latency[METRIC_ITL]));
    json_object_set_new(o, "prompt_tokens_mean",
                        s->ok ? json_real(ratio(s->input_tokens, s->ok)) : json_null());
    json_object_set_new(o, "completion_tokens_mean",
                        s->ok ? json_real(ratio(s->output_tokens, s->ok)) : json_null());
    json_object_set_new(o, "errors", json_integer((json_int_t)s->failed));
    /* Every HTTP 4xx answer, as the scaling report's "400s" (§4.7) count them: the level's
       `errors` block has each class once, so its http_4xx leaves out the 429s and the
       max_model_len 400s that have classes of their own. */
    uint64_t http_4xx =
        s->errors[ERROR_HTTP_4XX] + s->errors[ERROR_HTTP_429] + s->errors[ERROR_CONTEXT_LENGTH];
    json_object_set_new(o, "errors_http_4xx", json_integer((json_int_t)http_4xx));
    json_object_set_new(o, "errors_context_length",
                        json_integer((json_int_t)s->errors[ERROR_CONTEXT_LENGTH]));
    return o;
}

/* roles[r] (NULL: role r never seen) for r < n_roles. */
static json_t *roles_json(const merge_stats_t *const *roles, uint32_t n_roles,
                          const report_meta_t *meta) {
    json_t *o = json_object();
    char name[32];
    for (uint32_t r = 0; r < n_roles; r++)
        if (roles[r])
            json_object_set_new(o, report_role_name(meta, r, name, sizeof name),
                                role_json(roles[r]));
    return o;
}

static json_t *merge_roles_json(const merge_t *merge, const report_meta_t *meta) {
    const merge_stats_t *roles[MERGE_MAX_ROLES];
    uint32_t n = merge_role_count(merge);
    for (uint32_t r = 0; r < n && r < MERGE_MAX_ROLES; r++)
        roles[r] = merge_role(merge, r);
    return roles_json(roles, n < MERGE_MAX_ROLES ? n : MERGE_MAX_ROLES, meta);
}

/* Requests per session: a histogram of counts, not of nanoseconds. */
static json_t *count_json(const histogram_t *h) {
    if (!histogram_count(h))
        return json_null();
    return json_pack("{s:f, s:I, s:I, s:I, s:I, s:I}", "mean", histogram_mean(h), "p50",
                     (json_int_t)histogram_percentile(h, 50), "p90",
                     (json_int_t)histogram_percentile(h, 90), "p99",
                     (json_int_t)histogram_percentile(h, 99), "min", (json_int_t)histogram_min(h),
                     "max", (json_int_t)histogram_max(h));
}

static json_t *sessions_json(const sessions_stats_t *s, const report_meta_t *meta) {
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)s->counted));
    json_object_set_new(o, "closed", json_integer((json_int_t)s->closed));
    json_object_set_new(o, "closed_span_max_ms",
                        s->closed ? json_real((double)s->closed_span_max_ns / 1e6) : json_null());
    json_object_set_new(o, "requests", count_json(s->requests));
    json_object_set_new(o, "makespan_ms", report_metric_json(s->makespan));
    json_object_set_new(o, "critical_path_ms", report_metric_json(s->critical));
    json_object_set_new(o, "idle_ms", report_metric_json(s->idle));
    json_object_set_new(o, "sibling_wait_ms", report_metric_json(s->sibling_wait));
    json_t *share = json_object();
    char name[32];
    for (uint32_t r = 0; r < s->n_roles && s->critical_ns; r++)
        json_object_set_new(share, report_role_name(meta, r, name, sizeof name),
                            json_real(ratio(s->role_critical_ns[r], s->critical_ns)));
    json_object_set_new(o, "critical_path_share", share);
    json_t *compactions = count_json(s->compactions);
    if (json_is_object(compactions))
        json_object_set_new(compactions, "total", json_integer((json_int_t)s->compactions_total));
    json_object_set_new(o, "compactions", compactions);
    return o;
}

/* Replica affinity: {sessions_checked, sessions_moved, held}; null when no answer named its
 * replica (no target.replica_header, or a server that never sent it). */
static json_t *replica_json(uint64_t checked, uint64_t moved) {
    if (!checked)
        return json_null();
    return json_pack("{s:I, s:I, s:b}", "sessions_checked", (json_int_t)checked, "sessions_moved",
                     (json_int_t)moved, "held", moved == 0);
}

static json_t *affinity_json(const merge_t *merge) {
    const sessions_t *sessions = merge_sessions(merge);
    const sessions_stats_t *s = sessions_stats(sessions);
    const merge_stats_t *all = merge_overall(merge);
    json_t *o = json_object();
    json_object_set_new(o, "sticky", json_boolean(sessions_sticky(sessions)));
    json_object_set_new(o, "sessions_checked", json_integer((json_int_t)s->affinity_checked));
    json_object_set_new(o, "sessions_split", json_integer((json_int_t)s->affinity_split));
    json_object_set_new(o, "held", json_boolean(s->affinity_split == 0));
    json_object_set_new(o, "replica", replica_json(s->replica_checked, s->replica_moved));
    json_object_set_new(o, "prefix_cache_hit_rate",
                        ratio_json(all->cached_tokens, all->usage_prompt_tokens));
    return o;
}

/* [{k, share}] for k = 1 .. the most requests decoding at once. */
static json_t *overlap_json(overlap_t *decode) {
    json_t *array = json_array();
    double *share = NULL;
    long most = overlap_shares(decode, &share);
    for (long k = 1; k <= most; k++)
        json_array_append_new(array,
                              json_pack("{s:I, s:f}", "k", (json_int_t)k, "share", share[k - 1]));
    free(share);
    return array;
}

void session_report_json(json_t *level, const merge_t *merge, const report_meta_t *meta) {
    const sessions_stats_t *s = sessions_stats(merge_sessions(merge));
    const merge_stats_t *all = merge_overall(merge);
    json_object_set_new(level, "roles", merge_roles_json(merge, meta));
    json_object_set_new(level, "sessions", sessions_json(s, meta));
    json_object_set_new(level, "prefix_cache_hit_rate",
                        ratio_json(all->cached_tokens, all->usage_prompt_tokens));
    json_object_set_new(level, "prompt_reuse_ratio", ratio_json(s->reuse_shared, s->reuse_prompt));
    json_object_set_new(level, "affinity", affinity_json(merge));
    json_object_set_new(level, "decode_overlap", overlap_json(merge_decode(merge)));
    json_object_set_new(level, "wall_clock_s", json_real(merge_wall_clock_s(merge)));
    json_t *per_endpoint = json_object_get(level, "per_endpoint");
    for (size_t e = 0; per_endpoint && e < merge_endpoint_count(merge); e++) {
        json_t *o = json_object_get(per_endpoint, merge_endpoint_url(merge, e));
        const merge_stats_t *es = merge_endpoint(merge, e);
        if (!o)
            continue;
        json_object_set_new(o, "prefix_cache_hit_rate",
                            ratio_json(es->cached_tokens, es->usage_prompt_tokens));
        json_object_set_new(o, "prompt_reuse_ratio",
                            e < s->n_endpoints
                                ? ratio_json(s->endpoint_shared[e], s->endpoint_prompt[e])
                                : json_null());
        json_object_set_new(o, "replica_affinity",
                            e < s->n_endpoints ? replica_json(s->endpoint_replica_checked[e],
                                                              s->endpoint_replica_moved[e])
                                               : json_null());
    }
}

void session_report_pooled_json(json_t *level, const merge_stats_t *const *roles, uint32_t n_roles,
                                const sessions_stats_t *sessions, overlap_t *decode,
                                const report_meta_t *meta) {
    json_object_set_new(level, "roles", roles_json(roles, n_roles, meta));
    json_object_set_new(level, "sessions", sessions_json(sessions, meta));
    json_object_set_new(level, "prompt_reuse_ratio",
                        ratio_json(sessions->reuse_shared, sessions->reuse_prompt));
    json_object_set_new(level, "decode_overlap", overlap_json(decode));
}

/* One cell: p50 of h in ms, "-" when empty. */
static const char *p50_cell(char *buf, size_t len, const histogram_t *h) {
    if (!histogram_count(h))
        return "-";
    report_format_ms(buf, len, (double)histogram_percentile(h, 50) / 1e6);
    return buf;
}

/* Only when the workload names its roles or uses more than one: a single unnamed role repeats the
 * latency table above. */
static void print_roles(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    if (!(meta && meta->n_role_names) && merge_role_count(merge) < 2)
        return;
    fprintf(out, "\n%-16s%9s%11s%11s%11s%11s%9s%9s%8s\n", "role (p50 ms)", "requests", "TTFT",
            "TTFC", "TPOT", "ITL", "prompt", "compl.", "errors");
    char name[32], c[4][32];
    for (uint32_t r = 0; r < merge_role_count(merge); r++) {
        const merge_stats_t *s = merge_role(merge, r);
        if (!s)
            continue;
        fprintf(out, "%-16s%9" PRIu64 "%11s%11s%11s%11s%9.0f%9.0f%8" PRIu64 "\n",
                report_role_name(meta, r, name, sizeof name), s->requests,
                p50_cell(c[0], sizeof c[0], s->latency[METRIC_TTFT]),
                p50_cell(c[1], sizeof c[1], s->latency[METRIC_TTFC]),
                p50_cell(c[2], sizeof c[2], s->latency[METRIC_TPOT]),
                p50_cell(c[3], sizeof c[3], s->latency[METRIC_ITL]), ratio(s->input_tokens, s->ok),
                ratio(s->output_tokens, s->ok), s->failed);
    }
}

static void print_session_row(FILE *out, const char *label, const histogram_t *h) {
    char cells[4][32];
    const double p[] = {50, 90, 99};
    report_format_ms(cells[0], sizeof cells[0], histogram_mean(h) / 1e6);
    for (int i = 0; i < 3; i++)
        report_format_ms(cells[i + 1], sizeof cells[i + 1],
                         (double)histogram_percentile(h, p[i]) / 1e6);
    fprintf(out, "%-16s%11s%11s%11s%11s\n", label, cells[0], cells[1], cells[2], cells[3]);
}

static void print_sessions(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    if (!sessions_multi_request(merge_sessions(merge)))
        return;
    const sessions_stats_t *s = sessions_stats(merge_sessions(merge));
    fprintf(out, "\nsessions: %" PRIu64 " complete inside the window (of %" PRIu64 " closed)",
            s->counted, s->closed);
    if (!s->counted) {
        if (s->closed)
            fprintf(out, "; a session counts only when it starts after the warm-up and ends "
                         "before the run's end: run longer, or bound it by max_sessions");
        fprintf(out, "\n");
        return;
    }
    fprintf(out, ", %.1f requests each on average", histogram_mean(s->requests));
    if (s->compactions_total)
        fprintf(out, ", %.2f compactions (max %" PRIu64 ", %" PRIu64 " in all)",
                histogram_mean(s->compactions), histogram_max(s->compactions),
                s->compactions_total);
    fprintf(out, "\n");
    fprintf(out, "%-16s%11s%11s%11s%11s\n", "session (ms)", "mean", "p50", "p90", "p99");
    print_session_row(out, "makespan", s->makespan);
    print_session_row(out, "critical path", s->critical);
    print_session_row(out, "idle/wait", s->idle);
    print_session_row(out, "sibling wait", s->sibling_wait);
    fprintf(out, "critical path share:");
    char name[32];
    for (uint32_t r = 0; r < s->n_roles; r++)
        fprintf(out, " %s %.1f %%", report_role_name(meta, r, name, sizeof name),
                100 * ratio(s->role_critical_ns[r], s->critical_ns));
    fprintf(out, "\n");
}

static void print_reuse(const merge_t *merge, FILE *out) {
    const sessions_t *sessions = merge_sessions(merge);
    const sessions_stats_t *s = sessions_stats(sessions);
    const merge_stats_t *all = merge_overall(merge);
    fprintf(out, "prefix reuse: prompt reuse %.1f %%",
            100 * ratio(s->reuse_shared, s->reuse_prompt));
    if (all->usage_prompt_tokens)
        fprintf(out, ", prefix-cache hits %.1f %%",
                100 * ratio(all->cached_tokens, all->usage_prompt_tokens));
    fprintf(out, "\n");
    if (sessions_sticky(sessions))
        fprintf(out, "sticky routing: affinity %s (%" PRIu64 " of %" PRIu64 " sessions split)\n",
                s->affinity_split ? "BROKEN" : "held", s->affinity_split, s->affinity_checked);
    if (s->replica_checked)
        fprintf(out, "replica affinity: %s (%" PRIu64 " of %" PRIu64 " sessions moved replica)\n",
                s->replica_moved ? "BROKEN" : "held", s->replica_moved, s->replica_checked);
}

/* The shares at k = 1, 2, 4, 8 ... up to the most decoding at once. */
static void print_overlap(const merge_t *merge, FILE *out) {
    double *share = NULL;
    long most = overlap_shares(merge_decode(merge), &share);
    if (most <= 0)
        return;
    fprintf(out, "decode overlap (share of decode time with >= k decoding):");
    for (long k = 1; k <= most; k *= 2)
        fprintf(out, " k=%ld %.1f %%", k, 100 * share[k - 1]);
    if ((most & (most - 1)) != 0)
        fprintf(out, " k=%ld %.1f %%", most, 100 * share[most - 1]);
    fprintf(out, "\n");
    free(share);
}

void session_report_print(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    print_roles(merge, meta, out);
    print_sessions(merge, meta, out);
    print_reuse(merge, out);
    print_overlap(merge, out);
    fprintf(out, "wall clock: %.3f s (first send -> last end of every request)\n",
            merge_wall_clock_s(merge));
}
