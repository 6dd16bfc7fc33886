#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "outfile.h"
#include "session_report.h"
#include "trace_keys.h"

#define JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

static const double table_percentiles[] = {50, 90, 95, 99};

static double ms(uint64_t ns) {
    return (double)ns / 1e6;
}

static double lag_threshold(const report_meta_t *meta) {
    return meta && meta->lag_warning_ms > 0 ? meta->lag_warning_ms : REPORT_LAG_WARNING_MS;
}

static const char *level_kind(const report_level_t *level, const report_meta_t *meta) {
    if (level->kind)
        return level->kind;
    return meta && meta->level_kind ? meta->level_kind : "concurrency";
}

static const char *token_source(const merge_stats_t *stats) {
    int sources = (stats->output_from_usage > 0) + (stats->output_from_chunks > 0) +
                  (stats->output_from_tokenizer > 0);
    if (sources > 1)
        return "mixed";
    if (stats->output_from_usage)
        return "usage";
    if (stats->output_from_tokenizer)
        return "tokenizer";
    return stats->output_from_chunks ? "chunks" : "none";
}

static double error_pct(const merge_stats_t *stats, uint64_t n) {
    uint64_t finished = stats->ok + stats->failed;
    return finished ? 100.0 * (double)n / (double)finished : 0.0;
}

static double per_s(uint64_t n, double duration_s) {
    return duration_s > 0 ? (double)n / duration_s : 0.0;
}

/* UTC ISO 8601 of a CLOCK_REALTIME instant. */
static void format_time(char *buf, size_t len, int64_t unix_ns) {
    time_t seconds = (time_t)(unix_ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void print_latency_row(FILE *out, const char *label, const histogram_t *h) {
    char cell[32];
    fprintf(out, "%-14s", label);
    if (histogram_count(h) == 0) {
        fprintf(out, "%10s%10s%10s%10s%10s%12d\n", "-", "-", "-", "-", "-", 0);
        return;
    }
    report_format_ms(cell, sizeof cell, histogram_mean(h) / 1e6);
    fprintf(out, "%10s", cell);
    for (size_t i = 0; i < sizeof table_percentiles / sizeof table_percentiles[0]; i++) {
        report_format_ms(cell, sizeof cell, ms(histogram_percentile(h, table_percentiles[i])));
        fprintf(out, "%10s", cell);
    }
    fprintf(out, "%12" PRIu64 "\n", histogram_count(h));
}

/* "server        URL: Server uvicorn, version 0.10.1, models m1" for each endpoint that said
 * something about itself at the preflight (meta->server_said). */
static void print_server_said(const report_meta_t *meta, FILE *out) {
    json_t *said = meta && meta->server_said ? json_loads(meta->server_said, 0, NULL) : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(said, i, e) {
        const char *header = json_string_value(json_object_get(e, "server_header"));
        const char *version = json_string_value(json_object_get(e, "version"));
        json_t *models = json_object_get(e, "models");
        if (!header && !version && !json_array_size(models))
            continue;
        fprintf(out, "server        %s:", json_string_value(json_object_get(e, "endpoint")));
        const char *sep = " ";
        if (header)
            fprintf(out, "%sServer %s", sep, header), sep = ", ";
        if (version)
            fprintf(out, "%sversion %s", sep, version), sep = ", ";
        size_t k;
        json_t *m;
        json_array_foreach(models, k, m) {
            fprintf(out, "%s%s%s", k ? ", " : sep, k ? "" : "models ", json_string_value(m));
            sep = ", ";
        }
        fputc('\n', out);
    }
    json_decref(said);
}

static void print_header(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    const merge_stats_t *all = merge_overall(merge);
    const char *reason;
    if (merge_partial(merge, &reason))
        fprintf(out, "PARTIAL RESULTS: %s\n", *reason ? reason : "the run did not finish");
    fprintf(out, "stampede results");
    if (meta && meta->simulation) {
        char text[256];
        report_simulation_text(meta->simulation, text, sizeof text);
        fprintf(out, " - SIMULATED (%s)", text);
    } else if (meta && meta->simulated_profile)
        fprintf(out, " - simulated server (profile %s)", meta->simulated_profile);
    if (meta && meta->level_value > 0)
        fprintf(out, " - %s %g", meta->level_kind ? meta->level_kind : "concurrency",
                meta->level_value);
    if (meta && meta->level_value > 0 && meta->level_note && *meta->level_note)
        fprintf(out, " (%s)", meta->level_note);
    fprintf(out, " - %.1f s measured", merge_duration_s(merge));
    if (meta && meta->workers)
        fprintf(out, " - %" PRIu32 " worker%s", meta->workers, meta->workers == 1 ? "" : "s");
    if (meta && meta->stop_reason)
        fprintf(out, " - stopped: %s", meta->stop_reason);
    fprintf(out, "\n\n");
    fprintf(out,
            "requests      %" PRIu64 " ok, %" PRIu64 " failed (%.2f %%), %" PRIu64
            " cancelled, %" PRIu64 " warm-up (kept out of the latencies)\n",
            all->ok, all->failed, error_pct(all, all->failed), all->cancelled, merge_warmup(merge));
    print_server_said(meta, out);
    if (all->failed) {
        const char *separator = "errors        ";
        for (int c = ERROR_NONE + 1; c < ERROR__COUNT; c++) {
            if (c == ERROR_CANCELLED || !all->errors[c])
                continue;
            fprintf(out, "%s%s %" PRIu64 " (%.2f %%)", separator,
                    error_class_name((error_class_t)c), all->errors[c],
                    error_pct(all, all->errors[c]));
            separator = ", ";
        }
        fprintf(out, "\n");
    }
    if (all->retries || all->resends)
        fprintf(out,
                "retries       %" PRIu64 " after HTTP 429 (%" PRIu64
                " requests, %.1f s waited), %" PRIu64
                " resent by libcurl after a reused connection closed unanswered\n",
                all->retries, all->retried_requests, (double)all->retry_wait_ns / 1e9,
                all->resends);
}

/* The rows measured from the send, then, when the client fell behind its schedule (lag p99 above
 * 1 ms), TTFT and E2E from the intended start, which include that lag. */
static void print_latency_table(const merge_stats_t *all, FILE *out) {
    fprintf(out, "\n%-14s%10s%10s%10s%10s%10s%12s\n", "latency (ms)", "mean", "p50", "p90", "p95",
            "p99", "count");
    for (int k = 0; k < METRIC_SCHEDULE_LAG; k++)
        print_latency_row(out, metrics_label((metrics_kind_t)k), all->latency[k]);
    const histogram_t *lag = all->latency[METRIC_SCHEDULE_LAG];
    if (histogram_count(lag) == 0 ||
        ms(histogram_percentile(lag, 99)) <= REPORT_INTENDED_ROWS_LAG_MS)
        return;
    for (int k = METRIC_SCHEDULE_LAG + 1; k < METRIC__COUNT; k++)
        print_latency_row(out, metrics_label((metrics_kind_t)k), all->latency[k]);
    fprintf(out, "(\"intended\": from the scheduled start, the schedule lag included)\n");
}

/* The ok requests by finish_reason (the reasons that occurred), and the refusals. */
static void print_finish_reasons(const merge_stats_t *all, FILE *out) {
    if (!all->ok)
        return;
    const char *separator = "finish        ";
    for (int f = 0; f < FINISH__COUNT; f++) {
        if (!all->finish_reasons[f])
            continue;
        fprintf(out, "%s%s %" PRIu64, separator, finish_reason_name((finish_reason_t)f),
                all->finish_reasons[f]);
        separator = ", ";
    }
    fprintf(out, "; %" PRIu64 " refusal%s\n", all->refusals, all->refusals == 1 ? "" : "s");
}

static void print_tokens(const merge_t *merge, FILE *out) {
    const merge_stats_t *all = merge_overall(merge);
    double duration = merge_duration_s(merge);
    fprintf(out,
            "\nthroughput    %.1f output tok/s, %.1f input tok/s, %.2f req/s, %.3f sessions/s "
            "(in the measured window, warm-up requests' share included)\n",
            per_s(all->window_output_tokens, duration), per_s(all->window_input_tokens, duration),
            per_s(all->window_requests, duration), per_s(all->window_sessions, duration));
    fprintf(out, "tokens        %" PRIu64 " output, %" PRIu64 " input; ", all->output_tokens,
            all->input_tokens);
    if (all->output_from_tokenizer && (all->output_from_usage || all->output_from_chunks))
        fprintf(out,
                "counts from usage for %" PRIu64 " requests, the tokenizer for %" PRIu64
                ", the chunks for %" PRIu64,
                all->output_from_usage, all->output_from_tokenizer, all->output_from_chunks);
    else if (all->output_from_tokenizer)
        fprintf(out, "counts from the target's tokenizer (no usage sent)");
    else if (all->output_from_usage && all->output_from_chunks)
        fprintf(out, "counts from usage for %" PRIu64 " requests, from the chunks for %" PRIu64,
                all->output_from_usage, all->output_from_chunks);
    else
        fprintf(out, "counts from %s",
                all->output_from_chunks ? "the chunks (no usage sent)" : token_source(all));
    if (all->usage_prompt_tokens)
        fprintf(out, "; %.1f %% of prompt tokens cached",
                100.0 * (double)all->cached_tokens / (double)all->usage_prompt_tokens);
    fprintf(out, "\n");
    if (all->usage_chunks_differ)
        fprintf(out,
                "              %" PRIu64 " requests streamed a different number of tokens "
                "than their usage reports (several tokens per chunk, or non-token chunks)\n",
                all->usage_chunks_differ);
    if (all->usage_tokenizer_differ)
        fprintf(out,
                "              %" PRIu64 " requests' usage differs from the target's tokenizer's "
                "count of their reply\n",
                all->usage_tokenizer_differ);
    if (all->prompt_checked)
        fprintf(out,
                "prompt        the server counted %+.1f tokens per prompt beyond those intended "
                "(min %+" PRId64 ", max %+" PRId64 ", %" PRIu64 " requests with usage)\n",
                (double)all->prompt_extra_sum / (double)all->prompt_checked, all->prompt_extra_min,
                all->prompt_extra_max, all->prompt_checked);
    if (all->requested_checked) {
        double pct = all->requested_output_tokens ? 100.0 * (double)all->received_output_tokens /
                                                        (double)all->requested_output_tokens
                                                  : 0.0;
        fprintf(out,
                "requested     %" PRIu64 " of %" PRIu64 " requests got the output length they "
                "asked for; %" PRIu64 " of %" PRIu64 " tokens received (%.1f %%)\n",
                all->requested_checked - all->output_mismatched, all->requested_checked,
                all->received_output_tokens, all->requested_output_tokens, pct);
        if (all->stopped_early)
            fprintf(out,
                    "              %" PRIu64 " ended with finish_reason stop before the length "
                    "asked for\n",
                    all->stopped_early);
    }
    print_finish_reasons(all, out);
}

static void print_schedule(const merge_stats_t *all, const report_meta_t *meta, FILE *out) {
    const histogram_t *lag = all->latency[METRIC_SCHEDULE_LAG];
    if (histogram_count(lag) == 0)
        return;
    char p99[32], max[32];
    double lag_p99 = ms(histogram_percentile(lag, 99));
    report_format_ms(p99, sizeof p99, lag_p99);
    report_format_ms(max, sizeof max, ms(histogram_max(lag)));
    fprintf(out, "schedule lag  p99 %s ms, max %s ms (send - intended start)\n", p99, max);
    if (lag_p99 > lag_threshold(meta) && meta && meta->cap_waits)
        fprintf(
            out,
            "WARNING: schedule lag p99 %s ms is above %g ms: scheduler.concurrency held %" PRIu64
            " arrivals back until a session ended, so the offered load was lower than asked "
            "and latencies measured from the send hide that wait\n",
            p99, lag_threshold(meta), meta->cap_waits);
    else if (lag_p99 > lag_threshold(meta))
        fprintf(out,
                "WARNING: schedule lag p99 %s ms is above %g ms: the client could not keep the "
                "schedule, so the offered load was lower than asked and latencies measured from "
                "the send hide that wait\n",
                p99, lag_threshold(meta));
}

/* The HTTP phases of the ok requests and the share sent on a reused connection. */
static void print_http_phases(const merge_stats_t *all, FILE *out) {
    fprintf(out, "\n%-14s%10s%10s%10s%10s%10s%12s\n", "HTTP (ms)", "mean", "p50", "p90", "p95",
            "p99", "count");
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        print_latency_row(out, record_phase_name((record_phase_t)p), all->phase[p]);
    if (all->phases_measured)
        fprintf(out, "connections   %" PRIu64 " of %" PRIu64 " requests reused one (%.1f %%)\n",
                all->connection_reused, all->phases_measured,
                100.0 * (double)all->connection_reused / (double)all->phases_measured);
    uint64_t tls = 0;
    for (int v = 0; v < 4; v++)
        tls += all->tls_version[v];
    if (!tls)
        return;
    fputs("tls sessions ", out);
    for (int v = 3; v >= 0; v--)
        if (all->tls_version[v])
            fprintf(out, " TLSv1.%d %" PRIu64 " requests;", v, all->tls_version[v]);
    fprintf(out, " %" PRIu64 " new TLS connections, %" PRIu64 " of them resumed a session\n",
            all->tls_connections, all->tls_resumed);
}

/* "TLSv1.3" for a record's tls_version 13; NULL for 0 (plain HTTP, or unknown). */
static const char *tls_name(uint8_t version) {
    static const char *const names[] = {"TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"};
    return version >= 10 && version <= 13 ? names[version - 10] : NULL;
}

static void print_slice_row(FILE *out, int width, const char *name, const merge_stats_t *s) {
    char ttft50[32] = "-", ttft99[32] = "-", e2e50[32] = "-";
    const histogram_t *ttft = s->latency[METRIC_TTFT], *e2e = s->latency[METRIC_E2E];
    if (histogram_count(ttft)) {
        report_format_ms(ttft50, sizeof ttft50, ms(histogram_percentile(ttft, 50)));
        report_format_ms(ttft99, sizeof ttft99, ms(histogram_percentile(ttft, 99)));
    }
    if (histogram_count(e2e))
        report_format_ms(e2e50, sizeof e2e50, ms(histogram_percentile(e2e, 50)));
    fprintf(out, "%-*s%10" PRIu64 "%10" PRIu64 "%8" PRIu64 "%12s%12s%12s\n", width, name,
            s->requests, s->ok, s->failed, ttft50, ttft99, e2e50);
}

static void print_slice_header(FILE *out, int width, const char *title) {
    fprintf(out, "\n%-*s%10s%10s%8s%12s%12s%12s\n", width, title, "requests", "ok", "failed",
            "TTFT p50", "TTFT p99", "E2E p50");
}

/* The name column fits the longest name (URLs can be long) and is at least 32 wide. */
static int name_width(const merge_t *merge, const report_meta_t *meta) {
    size_t width = 30;
    char name[32];
    for (size_t e = 0; e < merge_endpoint_count(merge); e++)
        if (strlen(merge_endpoint_url(merge, e)) > width)
            width = strlen(merge_endpoint_url(merge, e));
    for (uint32_t r = 0; r < merge_role_count(merge); r++)
        if (strlen(report_role_name(meta, r, name, sizeof name)) > width)
            width = strlen(report_role_name(meta, r, name, sizeof name));
    return (int)width + 2;
}

static void print_slices(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    int width = name_width(merge, meta);
    if (merge_endpoint_count(merge) > 0) {
        print_slice_header(out, width, "endpoint");
        for (size_t e = 0; e < merge_endpoint_count(merge); e++)
            print_slice_row(out, width, merge_endpoint_url(merge, e), merge_endpoint(merge, e));
    }
    if (merge_role_count(merge) > 1) {
        char name[32];
        print_slice_header(out, width, "role");
        for (uint32_t r = 0; r < merge_role_count(merge); r++)
            if (merge_role(merge, r))
                print_slice_row(out, width, report_role_name(meta, r, name, sizeof name),
                                merge_role(merge, r));
    }
}

void report_print(const merge_t *merge, const report_meta_t *meta, FILE *out) {
    const merge_stats_t *all = merge_overall(merge);
    print_header(merge, meta, out);
    print_latency_table(all, out);
    print_tokens(merge, out);
    print_schedule(all, meta, out);
    if (meta && meta->http_phases)
        print_http_phases(all, out);
    print_slices(merge, meta, out);
    session_report_print(merge, meta, out);
    if (merge_unplaced(merge))
        fprintf(out,
                "\nnote: %" PRIu64 " requests named an endpoint or role with no slot; they "
                "count in the totals only\n",
                merge_unplaced(merge));
    fprintf(out, "\nworkload digest %016" PRIx64 "\n", merge_digest(merge));
}

/* {"mean","p50","p90","p95","p99"} in ms; nulls when empty. */
static json_t *phase_json(const histogram_t *h) {
    static const struct {
        const char *key;
        double p;
    } percentiles[] = {{"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}};
    bool any = histogram_count(h) > 0;
    json_t *block = json_object();
    json_object_set_new(block, "mean", any ? json_real(histogram_mean(h) / 1e6) : json_null());
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++)
        json_object_set_new(block, percentiles[i].key,
                            any ? json_real(ms(histogram_percentile(h, percentiles[i].p)))
                                : json_null());
    return block;
}

/* Adds "http_ms" (one block per phase) and "connection_reused" (a share of the requests whose
 * phases were measured; null without any) to a slice's object. */
static void http_json(json_t *o, const merge_stats_t *s) {
    json_t *phases = json_object();
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        json_object_set_new(phases, record_phase_name((record_phase_t)p), phase_json(s->phase[p]));
    json_object_set_new(o, "http_ms", phases);
    json_object_set_new(o, "connection_reused",
                        s->phases_measured
                            ? json_real((double)s->connection_reused / (double)s->phases_measured)
                            : json_null());
    json_t *versions = json_object();
    for (int v = 0; v < 4; v++)
        if (s->tls_version[v])
            json_object_set_new(versions, tls_name((uint8_t)(10 + v)),
                                json_integer((json_int_t)s->tls_version[v]));
    json_object_set_new(o, "tls",
                        json_object_size(versions)
                            ? json_pack("{s:o, s:I, s:I}", "requests_by_version", versions,
                                        "new_connections", (json_int_t)s->tls_connections,
                                        "resumed", (json_int_t)s->tls_resumed)
                            : (json_decref(versions), json_null()));
}

json_t *report_errors_json(const uint64_t errors[ERROR__COUNT]) {
    json_t *o = json_object();
    for (int c = ERROR_NONE + 1; c < ERROR__COUNT; c++)
        if (c != ERROR_CANCELLED)
            json_object_set_new(o, error_class_name((error_class_t)c),
                                json_integer((json_int_t)errors[c]));
    return o;
}

static json_t *token_source_json(const merge_stats_t *s) {
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "output", token_source(s), "from_usage",
                     (json_int_t)s->output_from_usage, "from_chunks",
                     (json_int_t)s->output_from_chunks, "from_tokenizer",
                     (json_int_t)s->output_from_tokenizer, "usage_chunks_differ",
                     (json_int_t)s->usage_chunks_differ, "usage_tokenizer_differ",
                     (json_int_t)s->usage_tokenizer_differ);
}

/* The server's prompt_tokens against the prompt tokens intended, over requests with usage. */
static json_t *prompt_json(const merge_stats_t *s) {
    if (!s->prompt_checked)
        return json_pack("{s:I}", "requests_checked", (json_int_t)0);
    return json_pack("{s:I, s:f, s:I, s:I}", "requests_checked", (json_int_t)s->prompt_checked,
                     "mean_extra_tokens", (double)s->prompt_extra_sum / (double)s->prompt_checked,
                     "min_extra_tokens", (json_int_t)s->prompt_extra_min, "max_extra_tokens",
                     (json_int_t)s->prompt_extra_max);
}

json_t *report_finish_reasons_json(const uint64_t finish_reasons[FINISH__COUNT]) {
    json_t *o = json_object();
    for (int f = 0; f < FINISH__COUNT; f++)
        json_object_set_new(o, finish_reason_name((finish_reason_t)f),
                            json_integer((json_int_t)finish_reasons[f]));
    return o;
}

static json_t *requested_json(const merge_stats_t *s) {
    json_t *pct = s->requested_output_tokens ? json_real(100.0 * (double)s->received_output_tokens /
                                                         (double)s->requested_output_tokens)
                                             : json_null();
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "requests_checked",
                     (json_int_t)s->requested_checked, "requested_tokens",
                     (json_int_t)s->requested_output_tokens, "received_tokens",
                     (json_int_t)s->received_output_tokens, "mismatched_requests",
                     (json_int_t)s->output_mismatched, "stopped_early",
                     (json_int_t)s->stopped_early, "received_pct", pct);
}

/* Counts, errors, every metric block and the rates of one slice. */
static json_t *stats_json(const merge_stats_t *s, double duration_s) {
    json_t *o = json_object();
    json_object_set_new(o, "requests_ok", json_integer((json_int_t)s->ok));
    json_object_set_new(o, "requests_failed", json_integer((json_int_t)s->failed));
    json_object_set_new(o, "requests_cancelled", json_integer((json_int_t)s->cancelled));
    json_object_set_new(o, "error_pct", json_real(error_pct(s, s->failed)));
    json_object_set_new(o, "errors", report_errors_json(s->errors));
    json_object_set_new(o, "retries",
                        json_pack("{s:I, s:I, s:f, s:I}", "retries_429", (json_int_t)s->retries,
                                  "requests_retried", (json_int_t)s->retried_requests,
                                  "retry_wait_s", (double)s->retry_wait_ns / 1e9,
                                  "connection_resends", (json_int_t)s->resends));
    char key[32];
    for (int k = 0; k < METRIC__COUNT; k++) {
        snprintf(key, sizeof key, "%s_ms", metrics_name((metrics_kind_t)k));
        json_object_set_new(o, key, report_metric_json(s->latency[k]));
    }
    json_object_set_new(o, "output_tokens_per_s",
                        json_real(per_s(s->window_output_tokens, duration_s)));
    json_object_set_new(o, "input_tokens_per_s",
                        json_real(per_s(s->window_input_tokens, duration_s)));
    json_object_set_new(o, "requests_per_s", json_real(per_s(s->window_requests, duration_s)));
    json_object_set_new(o, "sessions_per_s", json_real(per_s(s->window_sessions, duration_s)));
    json_object_set_new(
        o, "window",
        json_pack("{s:I, s:I, s:I, s:I}", "output_tokens", (json_int_t)s->window_output_tokens,
                  "requests", (json_int_t)s->window_requests, "input_tokens",
                  (json_int_t)s->window_input_tokens, "sessions", (json_int_t)s->window_sessions));
    json_object_set_new(o, "output_tokens", json_integer((json_int_t)s->output_tokens));
    json_object_set_new(o, "input_tokens", json_integer((json_int_t)s->input_tokens));
    json_object_set_new(o, "cached_tokens", json_integer((json_int_t)s->cached_tokens));
    json_object_set_new(o, "prefix_cache_hit_pct",
                        s->usage_prompt_tokens ? json_real(100.0 * (double)s->cached_tokens /
                                                           (double)s->usage_prompt_tokens)
                                               : json_null());
    json_object_set_new(o, "sessions_completed", json_integer((json_int_t)s->sessions_ended));
    json_object_set_new(o, "token_source", token_source_json(s));
    json_object_set_new(o, "output_vs_requested", requested_json(s));
    json_object_set_new(o, "finish_reasons", report_finish_reasons_json(s->finish_reasons));
    json_object_set_new(o, "refusals", json_integer((json_int_t)s->refusals));
    json_object_set_new(o, "prompt_vs_intended", prompt_json(s));
    http_json(o, s);
    return o;
}

/* The non-empty buckets of h as [[upper_ms, count], ...] in increasing order (the histogram's
 * layout, common/histogram.h): what the .hgrm export and the HTML CDFs read. */
static json_t *report_buckets_json(const histogram_t *h) {
    json_t *array = json_array();
    histogram_iter_t iter = HISTOGRAM_ITER_INIT;
    histogram_bucket_t b;
    while (histogram_next(h, &iter, &b))
        json_array_append_new(array, json_pack("[f, I]", ms(b.highest_ns), (json_int_t)b.count));
    return array;
}

void report_add_buckets(json_t *o, const histogram_t *const latency[METRIC__COUNT]) {
    static const metrics_kind_t kinds[] = {METRIC_TTFT, METRIC_TTFC, METRIC_TPOT, METRIC_ITL,
                                           METRIC_E2E};
    char key[32];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        snprintf(key, sizeof key, "%s_ms", metrics_name(kinds[i]));
        json_t *block = json_object_get(o, key);
        if (json_is_object(block))
            json_object_set_new(block, "buckets", report_buckets_json(latency[kinds[i]]));
    }
}

static json_t *level_json(const report_level_t *level, const report_meta_t *meta) {
    const merge_t *merge = level->merge;
    double duration = merge_duration_s(merge);
    const merge_stats_t *all = merge_overall(merge);
    json_t *o = json_object();
    double target = level->kind || !meta ? level->value : meta->level_value;
    json_object_set_new(o, level_kind(level, meta),
                        target == (double)(json_int_t)target ? json_integer((json_int_t)target)
                                                             : json_real(target));
    json_object_set_new(o, "duration_s", json_real(duration));
    const char *reason;
    bool partial = merge_partial(merge, &reason);
    json_object_set_new(o, "partial", json_boolean(partial));
    if (partial)
        json_object_set_new(o, "partial_reason", json_string(reason));
    json_object_update_new(o, stats_json(all, duration));
    report_add_buckets(o, (const histogram_t *const *)all->latency);
    json_object_set_new(o, "requests_warmup", json_integer((json_int_t)merge_warmup(merge)));
    json_object_set_new(o, "requests_warmup_failed",
                        json_integer((json_int_t)merge_warmup_failed(merge)));
    double lag_p99 = ms(histogram_percentile(all->latency[METRIC_SCHEDULE_LAG], 99));
    json_object_set_new(o, "schedule_lag_warning", json_boolean(lag_p99 > lag_threshold(meta)));

    json_t *endpoints = json_object(), *per_endpoint = json_object();
    for (size_t e = 0; e < merge_endpoint_count(merge); e++) {
        const char *url = merge_endpoint_url(merge, e);
        json_object_set_new(endpoints, url,
                            json_integer((json_int_t)merge_endpoint_sent(merge, e)));
        json_object_set_new(per_endpoint, url, stats_json(merge_endpoint(merge, e), duration));
    }
    json_object_set_new(o, "endpoints", endpoints);
    json_object_set_new(o, "per_endpoint", per_endpoint);
    json_t *per_role = json_object();
    char name[32];
    for (uint32_t r = 0; r < merge_role_count(merge); r++)
        if (merge_role(merge, r))
            json_object_set_new(per_role, report_role_name(meta, r, name, sizeof name),
                                stats_json(merge_role(merge, r), duration));
    json_object_set_new(o, "per_role", per_role);
    json_object_set_new(o, "unplaced_requests", json_integer((json_int_t)merge_unplaced(merge)));
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, merge_digest(merge));
    json_object_set_new(o, "workload_digest", json_string(digest));
    session_report_json(o, merge, meta);
    return o;
}

static json_t *run_json(const report_level_t *levels, size_t n_levels, const report_meta_t *meta) {
    json_t *run = json_object();
    report_meta_t none = {0};
    if (!meta)
        meta = &none;
    json_object_set_new(run, "workers", json_integer(meta->workers));
    if (meta->run_id) {
        char id[20];
        snprintf(id, sizeof id, "%016" PRIx64, meta->run_id);
        json_object_set_new(run, "run_id", json_string(id));
    }
    if (meta->traced)
        json_object_set_new(run, "trace",
                            json_pack("{s:I, s:I}", "lines_written",
                                      (json_int_t)meta->trace_lines_written, "lines_dropped",
                                      (json_int_t)meta->trace_lines_dropped));
    if (meta->start_unix_ns) {
        char when[40];
        format_time(when, sizeof when, meta->start_unix_ns);
        json_object_set_new(run, "start_time", json_string(when));
    }
    json_object_set_new(run, "stop_reason",
                        meta->stop_reason ? json_string(meta->stop_reason) : json_null());
    json_object_set_new(run, "config",
                        meta->config_file ? json_string(meta->config_file) : json_null());
    json_object_set_new(run, "seed", json_integer((json_int_t)meta->seed));
    json_object_set_new(run, "lag_warning_ms", json_real(lag_threshold(meta)));
    json_t *clocks = json_array();
    double worst = 0;
    for (size_t i = 0; i < meta->n_clocks; i++) {
        const report_worker_clock_t *c = &meta->clocks[i];
        double bound = (double)c->rtt_ns / 2e6;
        worst = bound > worst ? bound : worst;
        json_array_append_new(clocks, json_pack("{s:i, s:f, s:f, s:f}", "worker", (int)c->worker,
                                                "offset_ms", (double)c->offset_ns / 1e6, "rtt_ms",
                                                (double)c->rtt_ns / 1e6, "error_bound_ms", bound));
    }
    json_object_set_new(run, "clock", clocks);
    json_object_set_new(run, "clock_error_bound_ms", json_real(worst));
    json_t *urls = json_array();
    if (n_levels > 0)
        for (size_t e = 0; e < merge_endpoint_count(levels[0].merge); e++)
            json_array_append_new(urls, json_string(merge_endpoint_url(levels[0].merge, e)));
    json_object_set_new(run, "endpoint_urls", urls);
    return run;
}

json_t *report_served_by_json(const char *simulated_profile, const char *server_said) {
    json_t *o = simulated_profile
                    ? json_pack("{s:b, s:s}", "simulated", 1, "profile", simulated_profile)
                    : json_pack("{s:b}", "simulated", 0);
    json_t *said = server_said ? json_loads(server_said, 0, NULL) : NULL;
    if (json_is_array(said))
        json_object_set_new(o, "reported", said);
    else
        json_decref(said);
    return o;
}

void report_simulation_mark(json_t *root, const report_simulation_t *simulation) {
    json_object_set_new(root, "simulated", json_true());
    json_t *served_by = json_object();
    json_object_set_new(served_by, "simulated", json_true());
    json_object_set_new(served_by, "profile", json_string(simulation->profile));
    json_object_set_new(served_by, "virtual_time", json_true());
    json_object_set_new(served_by, "replicas", json_integer(simulation->replicas));
    json_object_set_new(served_by, "router", json_string(simulation->router));
    json_object_set_new(root, "served_by", served_by);
}

json_t *report_json(const report_level_t *levels, size_t n_levels, const report_meta_t *meta) {
    json_t *root = json_object();
    if (!root)
        return NULL;
    bool partial = false;
    json_t *array = json_array();
    for (size_t i = 0; i < n_levels; i++) {
        partial = partial || merge_partial(levels[i].merge, NULL);
        json_array_append_new(array, level_json(&levels[i], meta));
    }
    json_object_set_new(root, "schema_version", json_integer(REPORT_SCHEMA_VERSION));
    json_object_set_new(root, "generator", json_string("stampede"));
    json_object_set_new(root, "partial", json_boolean(partial));
    json_object_set_new(root, "served_by",
                        report_served_by_json(meta ? meta->simulated_profile : NULL,
                                              meta ? meta->server_said : NULL));
    if (meta && meta->simulation)
        report_simulation_mark(root, meta->simulation);
    json_object_set_new(root, "run", run_json(levels, n_levels, meta));
    json_object_set_new(root, "levels", array);
    return root;
}

/* A rate with four significant digits, whole from 1000/s up (never in exponent form). */
static void format_rate(char *buf, size_t len, double value) {
    snprintf(buf, len, value >= 1000 ? "%.0f" : "%.4g", value);
}

void report_print_rate(FILE *out, double requested_per_s, double achieved_per_s,
                       const char *warning) {
    char requested[32], achieved[32];
    format_rate(requested, sizeof requested, requested_per_s);
    format_rate(achieved, sizeof achieved, achieved_per_s);
    fprintf(out, "Rate: requested %s/s, achieved %s/s\n", requested, achieved);
    if (warning)
        fprintf(out, "WARNING: the achieved rate is below the requested one: %s\n", warning);
}

void report_print_validity(FILE *out, const validity_t *validity) {
    if (validity->valid) {
        fprintf(out, "\nRun valid\n");
        return;
    }
    fprintf(out, "\nRun INVALID:\n");
    for (size_t i = 0; i < validity->n_reasons; i++)
        fprintf(out, "  - %s\n", validity->reasons[i]);
}

int report_write_json_root(json_t *root, const char *path) {
    /* written beside and renamed, so a reader never sees half a file */
    size_t tmp_len = strlen(path) + 8;
    char *tmp = malloc(tmp_len);
    int rc = -1;
    errno = 0;
    if (tmp) {
        snprintf(tmp, tmp_len, "%s.tmp", path);
        FILE *f = outfile_fopen(tmp);
        if (f) {
            int written = json_dumpf(root, f, JSON_FLAGS);
            int closed = fputc('\n', f) == EOF ? EOF : 0;
            closed = fclose(f) == EOF ? EOF : closed;
            if (written == 0 && closed == 0 && rename(tmp, path) == 0)
                rc = 0;
            else if (errno == 0)
                errno = EIO;
            if (rc != 0)
                remove(tmp);
        }
        free(tmp);
    } else {
        errno = ENOMEM;
    }
    return rc;
}

struct report_trace {
    FILE *file; /* a memory stream: the line being formatted (the loop never touches the disk) */
    char *line;
    size_t line_len;
    trace_writer_t *writer; /* the thread that writes the lines to the file */
    int64_t run_start_ns;
    bool failed;
    trace_keys_t *replay; /* the keys that make each line replayable (NULL: not written) */
};

report_trace_t *report_trace_open(const char *path, int64_t run_start_ns) {
    report_trace_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    size_t queue = REPORT_TRACE_QUEUE_BYTES;
    const char *hook = getenv("STAMPEDE_TEST_TRACE_QUEUE_BYTES");
    if (hook && strtoull(hook, NULL, 10) > 0) {
        queue = (size_t)strtoull(hook, NULL, 10);
        fprintf(stderr, "TEST HOOK: the trace queue holds %zu bytes\n", queue);
    }
    self->file = open_memstream(&self->line, &self->line_len);
    if (self->file)
        self->writer = trace_writer_new(path, queue);
    if (!self->writer) {
        int saved = errno;
        if (self->file)
            fclose(self->file);
        free(self->line);
        free(self);
        errno = saved;
        return NULL;
    }
    self->run_start_ns = run_start_ns;
    return self;
}

/* Hands the formatted line to the writer and empties the memory stream for the next one. */
static int trace_queue_line(report_trace_t *self) {
    if (fflush(self->file) != 0 || ferror(self->file)) {
        self->failed = true;
        return -1;
    }
    trace_writer_push(self->writer, self->line, self->line_len);
    fseeko(self->file, 0, SEEK_SET);
    return 0;
}

/* "key":µs since the run start, or null when the instant did not happen. */
static void trace_instant(report_trace_t *self, const char *key, int64_t ns) {
    if (ns == 0)
        fprintf(self->file, ",\"%s\":null", key);
    else
        fprintf(self->file, ",\"%s\":%.3f", key, (double)(ns - self->run_start_ns) / 1e3);
}

/* Printable ASCII without quote or backslash goes out as it is: no JSON escaping needed. */
static bool plain_ascii(const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            return false;
    }
    return true;
}

static void trace_message(report_trace_t *self, const char *message) {
    size_t len = strnlen(message, sizeof((request_record_t *)0)->error_message);
    if (plain_ascii(message,
                    len)) { /* the usual case (empty for every ok request): no allocation */
        fprintf(self->file, ",\"error_message\":\"%.*s\"", (int)len, message);
        return;
    }
    json_t *string = json_stringn(message, len);
    char *text = string ? json_dumps(string, JSON_ENCODE_ANY) : NULL;
    if (text) {
        fprintf(self->file, ",\"error_message\":%s", text);
    } else { /* not UTF-8: keep the ASCII and say so */
        fputs(",\"error_message\":\"", self->file);
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)message[i];
            fputc(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '?', self->file);
        }
        fputc('"', self->file);
    }
    free(text);
    json_decref(string);
}

static void trace_metrics(report_trace_t *self, const metrics_t *m) {
    static const metrics_kind_t kinds[] = {METRIC_TTFT,
                                           METRIC_TTFC,
                                           METRIC_TPOT,
                                           METRIC_E2E,
                                           METRIC_SCHEDULE_LAG,
                                           METRIC_TTFT_FROM_INTENDED,
                                           METRIC_E2E_FROM_INTENDED};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (m->has[kinds[i]])
            fprintf(self->file, ",\"%s_ms\":%.6f", metrics_name(kinds[i]),
                    ms(m->value_ns[kinds[i]]));
        else
            fprintf(self->file, ",\"%s_ms\":null", metrics_name(kinds[i]));
    }
}

/* "http_ms":{"blocked":ms,...},"connection_reused":bool, or nulls when curl reported none. */
static void trace_phases(report_trace_t *self, const request_record_t *rec) {
    if (!rec->has_phases) {
        fputs(",\"http_ms\":null,\"connection_reused\":null,\"tls_version\":null,"
              "\"tls_resumed\":null",
              self->file);
        return;
    }
    fputs(",\"http_ms\":{", self->file);
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        fprintf(self->file, "%s\"%s\":%.6f", p ? "," : "", record_phase_name((record_phase_t)p),
                (double)rec->phase_ns[p] / 1e6);
    fprintf(self->file, "},\"connection_reused\":%s", rec->connection_reused ? "true" : "false");
    if (tls_name(rec->tls_version))
        fprintf(self->file, ",\"tls_version\":\"%s\",\"tls_resumed\":%s",
                tls_name(rec->tls_version), rec->tls_resumed ? "true" : "false");
    else
        fputs(",\"tls_version\":null,\"tls_resumed\":null", self->file);
}

/* "retries", "retry_wait_ms" and "resends" (docs/metrics.md section 3). */
static void trace_retries(report_trace_t *self, const request_record_t *rec) {
    fprintf(self->file, ",\"retries\":%" PRIu32 ",\"retry_wait_ms\":%.3f,\"resends\":%" PRIu32,
            rec->retries, (double)rec->retry_wait_ns / 1e6, rec->resends);
}

static void trace_chunks(report_trace_t *self, const request_record_t *rec) {
    fputs(",\"chunks_us\":[", self->file);
    for (uint32_t i = 0; i < rec->n_chunks; i++)
        fprintf(self->file, i ? ",%.3f" : "%.3f",
                (double)(rec->chunk_ns[i] - self->run_start_ns) / 1e3);
    fputc(']', self->file);
    if (rec->chunk_tokens) {
        fputs(",\"chunk_tokens\":[", self->file);
        for (uint32_t i = 0; i < rec->n_chunks; i++)
            fprintf(self->file, i ? ",%u" : "%u", (unsigned)rec->chunk_tokens[i]);
        fputc(']', self->file);
    }
}

int report_trace_write(report_trace_t *self, const request_record_t *rec, const metrics_t *m) {
    metrics_t computed;
    if (!m) {
        metrics_compute(rec, &computed);
        m = &computed;
    }
    FILE *f = self->file;
    fprintf(f,
            "{\"request_id\":%" PRIu64 ",\"session\":%" PRIu64 ",\"node\":%" PRIu32
            ",\"role\":%" PRIu32 ",\"endpoint\":%" PRIu32 ",\"worker\":%" PRIu32
            ",\"warmup\":%s,\"session_end\":%s,\"status\":%d,\"error\":\"%s\"",
            rec->request_id, rec->session, rec->node, rec->role, rec->endpoint, rec->worker,
            rec->warmup ? "true" : "false", rec->session_end ? "true" : "false", rec->http_status,
            error_class_name(rec->error));
    trace_message(self, rec->error_message);
    trace_instant(self, "intended_us", rec->intended_ns);
    trace_instant(self, "send_us", rec->send_ns);
    trace_instant(self, "headers_us", rec->headers_ns);
    trace_instant(self, "first_token_us", rec->first_token_ns);
    trace_instant(self, "first_content_us", rec->first_content_ns);
    trace_instant(self, "end_us", rec->end_ns);
    trace_metrics(self, m);
    trace_phases(self, rec);
    trace_retries(self, rec);
    if (rec->has_usage)
        fprintf(f,
                ",\"usage\":{\"prompt_tokens\":%" PRIu32 ",\"completion_tokens\":%" PRIu32
                ",\"cached_tokens\":%" PRIu32 "}",
                rec->prompt_tokens, rec->completion_tokens, rec->cached_tokens);
    else
        fputs(",\"usage\":null", f);
    fprintf(f,
            ",\"requested_input_tokens\":%" PRIu32 ",\"requested_output_tokens\":%" PRIu32
            ",\"output_tokens\":%" PRIu32 ",\"output_tokens_source\":\"%s\""
            ",\"reasoning_chunks\":%" PRIu32 ",\"content_chunks\":%" PRIu32
            ",\"content_bytes\":%" PRIu64,
            rec->requested_input_tokens, rec->requested_output_tokens, m->output_tokens,
            m->output_from_usage       ? "usage"
            : rec->has_tokenizer_count ? "tokenizer"
                                       : "chunks",
            rec->reasoning_chunks, rec->content_chunks, rec->content_bytes);
    if (rec->has_tokenizer_count)
        fprintf(f, ",\"tokenizer_tokens\":%" PRIu32, rec->tokenizer_tokens);
    fprintf(f, ",\"finish_reason\":\"%s\",\"refusal\":%s", finish_reason_name(rec->finish_reason),
            rec->refusal ? "true" : "false");
    if (rec->body_hash)
        fprintf(f, ",\"body_hash\":\"%016" PRIx64 "\"", rec->body_hash);
    else
        fputs(",\"body_hash\":null", f);
    if (self->replay && trace_keys_skip(self->replay, rec->role))
        fputs(",\"compaction\":true", f);
    else if (self->replay)
        trace_keys_write(self->replay, f, rec->session, rec->node);
    trace_chunks(self, rec);
    if (fputs("}\n", f) == EOF || ferror(f))
        self->failed = true;
    return self->failed ? -1 : trace_queue_line(self);
}

int report_trace_set_workload(report_trace_t *self, const config_t *cfg) {
    trace_keys_destroy(&self->replay);
    self->replay = trace_keys_new(cfg);
    return self->replay ? 0 : -1;
}

uint64_t report_trace_dropped(report_trace_t *self) {
    return trace_writer_dropped(self->writer);
}

int report_trace_error(report_trace_t *self) {
    return trace_writer_error(self->writer);
}

int report_trace_finish(report_trace_t **self_p, trace_writer_stats_t *stats) {
    report_trace_t *self = *self_p;
    if (!self)
        return 0;
    bool failed = self->failed || ferror(self->file);
    trace_keys_destroy(&self->replay);
    fclose(self->file);
    free(self->line);
    if (trace_writer_close(&self->writer, REPORT_TRACE_STALL_MS, stats) != 0)
        failed = true;
    free(self);
    *self_p = NULL;
    return failed ? -1 : 0;
}

int report_trace_close(report_trace_t **self_p) {
    return report_trace_finish(self_p, NULL);
}

void report_live_in_flight(const live_t *live, char *buf, size_t len) {
    if (live->silent)
        snprintf(buf, len, "in flight %" PRIu32 " (%" PRIu32 " worker%s silent)", live->in_flight,
                 live->silent, live->silent == 1 ? "" : "s");
    else
        snprintf(buf, len, "in flight %" PRIu32, live->in_flight);
}

void report_live_line(const live_t *live, char *buf, size_t len) {
    char ttft[48] = "TTFT p50 -";
    if (live->ttft_p50_ms >= 0) {
        char value[32];
        report_format_ms(value, sizeof value, live->ttft_p50_ms);
        snprintf(ttft, sizeof ttft, "TTFT p50 %s ms", value);
    }
    char in_flight[64];
    report_live_in_flight(live, in_flight, sizeof in_flight);
    char elapsed[48];
    if (live->duration_s > 0)
        snprintf(elapsed, sizeof elapsed, "%.1f s of %.0f s", live->elapsed_s, live->duration_s);
    else
        snprintf(elapsed, sizeof elapsed, "%.1f s", live->elapsed_s);
    snprintf(buf, len,
             "%s | %s | %.1f req/s | %.0f tok/s | %s | %" PRIu64 " ok, %" PRIu64 " failed", elapsed,
             in_flight, live->requests_per_s, live->output_tokens_per_s, ttft, live->requests_ok,
             live->requests_failed);
}
