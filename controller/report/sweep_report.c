#include "sweep_report.h"

#include <math.h>
#include <string.h>

#include "report.h"

static const char *const sweep_report_names[SWEEP_FIG__COUNT] = {
    "ttft_p50_ms",    "ttft_p95_ms",         "tpot_p50_ms",    "tpot_p95_ms", "latency_p50_ms",
    "latency_p95_ms", "itl_p50_ms",          "itl_p95_ms",     "error_pct",   "actual_rps",
    "requests_per_s", "output_tokens_per_s", "kv_hit_rate_pct"};

/* A percentile in ms, NaN when the span has no sample. */
static double sweep_report_ms(const window_stats_t *s, metrics_kind_t k, double p) {
    double v = window_stats_percentile_ms(s, k, p);
    return v < 0 ? NAN : v;
}

void sweep_report_figures(const window_stats_t *s, double out[SWEEP_FIG__COUNT]) {
    out[SWEEP_FIG_TTFT_P50] = sweep_report_ms(s, METRIC_TTFT, 50);
    out[SWEEP_FIG_TTFT_P95] = sweep_report_ms(s, METRIC_TTFT, 95);
    out[SWEEP_FIG_TPOT_P50] = sweep_report_ms(s, METRIC_TPOT, 50);
    out[SWEEP_FIG_TPOT_P95] = sweep_report_ms(s, METRIC_TPOT, 95);
    out[SWEEP_FIG_LATENCY_P50] = sweep_report_ms(s, METRIC_E2E, 50);
    out[SWEEP_FIG_LATENCY_P95] = sweep_report_ms(s, METRIC_E2E, 95);
    out[SWEEP_FIG_ITL_P50] = sweep_report_ms(s, METRIC_ITL, 50);
    out[SWEEP_FIG_ITL_P95] = sweep_report_ms(s, METRIC_ITL, 95);
    out[SWEEP_FIG_ERROR_PCT] = s->ok + s->failed ? window_stats_error_pct(s) : NAN;
    out[SWEEP_FIG_ACTUAL_RPS] = window_stats_per_s(s, s->session_starts);
    out[SWEEP_FIG_REQUESTS_PER_S] = window_stats_per_s(s, s->requests_ended);
    out[SWEEP_FIG_TOPS] = window_stats_per_s(s, s->output_tokens);
    double hit = window_stats_cache_hit_pct(s);
    out[SWEEP_FIG_KV_HIT_PCT] = hit < 0 ? NAN : hit;
}

/* A number, or null for NaN (JSON has no NaN). */
static json_t *sweep_report_number(double v) {
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

json_t *sweep_report_value_json(double value) {
    return value == floor(value) && fabs(value) < 9e15 ? json_integer((json_int_t)value)
                                                       : json_real(value);
}

const char *sweep_report_axis_key(const level_spec_t *spec) {
    return spec->axis == SWEEP_AXIS_RATE ? "rate" : "concurrency";
}

json_t *sweep_report_stats_json(const window_stats_t *s) {
    json_t *o = json_object();
    double figures[SWEEP_FIG__COUNT];
    sweep_report_figures(s, figures);
    for (int f = 0; f < SWEEP_FIG__COUNT; f++)
        json_object_set_new(o, sweep_report_names[f], sweep_report_number(figures[f]));
    static const metrics_kind_t blocks[] = {METRIC_TTFT, METRIC_TTFC, METRIC_TPOT, METRIC_ITL,
                                            METRIC_E2E};
    char key[40];
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        snprintf(key, sizeof key, "%s_ms", metrics_name(blocks[i]));
        json_object_set_new(o, key, report_metric_json(s->latency[blocks[i]]));
    }
    json_object_set_new(o, "requests_ok", json_integer((json_int_t)s->ok));
    json_object_set_new(o, "requests_failed", json_integer((json_int_t)s->failed));
    json_object_set_new(o, "requests_cancelled", json_integer((json_int_t)s->cancelled));
    json_object_set_new(o, "errors", report_errors_json(s->errors));
    json_object_set_new(o, "finish_reasons", report_finish_reasons_json(s->finish_reasons));
    json_object_set_new(o, "refusals", json_integer((json_int_t)s->refusals));
    json_object_set_new(o, "requests_ended", json_integer((json_int_t)s->requests_ended));
    json_object_set_new(o, "session_starts", json_integer((json_int_t)s->session_starts));
    json_object_set_new(o, "output_tokens", json_integer((json_int_t)s->output_tokens));
    json_object_set_new(o, "duration_s", json_real((double)s->duration_ns / 1e9));
    return o;
}

json_t *sweep_report_reference_json(const level_spec_t *spec, const window_stats_t *pooled) {
    double f[SWEEP_FIG__COUNT];
    sweep_report_figures(pooled, f);
    return sweep_report_reference_of(spec, f);
}

json_t *sweep_report_reference_of(const level_spec_t *spec, const double f[SWEEP_FIG__COUNT]) {
    json_t *o = json_object();
    json_object_set_new(o, "concurrency",
                        spec->axis == SWEEP_AXIS_CONCURRENCY ? sweep_report_value_json(spec->value)
                                                             : json_null());
    json_object_set_new(o, "ttft_p50_ms", sweep_report_number(f[SWEEP_FIG_TTFT_P50]));
    json_object_set_new(o, "ttft_p95_ms", sweep_report_number(f[SWEEP_FIG_TTFT_P95]));
    json_object_set_new(o, "kv_hit_rate_pct", sweep_report_number(f[SWEEP_FIG_KV_HIT_PCT]));
    json_object_set_new(o, "error_pct", sweep_report_number(f[SWEEP_FIG_ERROR_PCT]));
    json_object_set_new(o, "actual_rps", sweep_report_number(f[SWEEP_FIG_ACTUAL_RPS]));
    json_object_set_new(o, "tops", sweep_report_number(f[SWEEP_FIG_TOPS]));
    json_object_set_new(o, "tpot_p50_ms", sweep_report_number(f[SWEEP_FIG_TPOT_P50]));
    json_object_set_new(o, "tpot_p95_ms", sweep_report_number(f[SWEEP_FIG_TPOT_P95]));
    json_object_set_new(o, "latency_p50_ms", sweep_report_number(f[SWEEP_FIG_LATENCY_P50]));
    json_object_set_new(o, "latency_p95_ms", sweep_report_number(f[SWEEP_FIG_LATENCY_P95]));
    return o;
}

/* Each figure summarised over n rows (its mean, spread and 95% interval across them). */
static void sweep_report_summarise(const double (*rows)[SWEEP_FIG__COUNT], size_t n,
                                   analysis_summary_t out[SWEEP_FIG__COUNT]) {
    double column[n ? n : 1];
    for (int f = 0; f < SWEEP_FIG__COUNT; f++) {
        for (size_t i = 0; i < n; i++)
            column[i] = rows[i][f];
        analysis_summarise(column, n, &out[f]);
    }
}

json_t *sweep_report_across_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n) {
    analysis_summary_t s[SWEEP_FIG__COUNT];
    sweep_report_summarise(rows, n, s);
    json_t *o = json_object();
    for (int f = 0; f < SWEEP_FIG__COUNT; f++)
        json_object_set_new(o, sweep_report_names[f],
                            json_pack("{s:I, s:o, s:o, s:o, s:o}", "n", (json_int_t)s[f].n, "mean",
                                      sweep_report_number(s[f].mean), "stddev",
                                      s[f].n ? json_real(s[f].stddev) : json_null(), "ci95_low",
                                      sweep_report_number(s[f].ci95_low), "ci95_high",
                                      sweep_report_number(s[f].ci95_high)));
    return o;
}

json_t *sweep_report_mean_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n) {
    analysis_summary_t s[SWEEP_FIG__COUNT];
    sweep_report_summarise(rows, n, s);
    json_t *o = json_object();
    for (int f = 0; f < SWEEP_FIG__COUNT; f++)
        json_object_set_new(o, sweep_report_names[f], sweep_report_number(s[f].mean));
    return o;
}

json_t *sweep_report_stability_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n) {
    static const sweep_figure_t p50[] = {SWEEP_FIG_TTFT_P50, SWEEP_FIG_TPOT_P50,
                                         SWEEP_FIG_LATENCY_P50};
    json_t *o = json_object();
    for (size_t k = 0; k < sizeof p50 / sizeof p50[0]; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = rows[i][p50[k]];
            if (isnan(v))
                continue;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        json_object_set_new(o, sweep_report_names[p50[k]],
                            hi >= lo ? json_real(hi - lo) : json_null());
    }
    return o;
}

/* The complete levels as analysis points (index map in used[]); returns their number. */
static size_t sweep_report_points(const sweep_report_level_t *levels, size_t n,
                                  analysis_point_t *points, size_t *used) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (levels[i].interrupted)
            continue;
        const double *f = levels[i].figures;
        points[m] = (analysis_point_t){
            .level = levels[i].spec->value,
            .error_pct = isnan(f[SWEEP_FIG_ERROR_PCT]) ? -1 : f[SWEEP_FIG_ERROR_PCT],
            .ttft_p50_ms = isnan(f[SWEEP_FIG_TTFT_P50]) ? -1 : f[SWEEP_FIG_TTFT_P50],
            .tpot_p50_ms = isnan(f[SWEEP_FIG_TPOT_P50]) ? -1 : f[SWEEP_FIG_TPOT_P50],
            .output_tokens_per_s = f[SWEEP_FIG_TOPS],
        };
        used[m++] = i;
    }
    return m;
}

/* {"level": value, "index": i} of point p, or null when not reached. */
static json_t *sweep_report_point_json(const sweep_report_level_t *levels, const size_t *used,
                                       int p) {
    if (p < 0)
        return json_null();
    const sweep_report_level_t *l = &levels[used[p]];
    return json_pack("{s:o, s:I}", sweep_report_axis_key(l->spec),
                     sweep_report_value_json(l->spec->value), "index", (json_int_t)used[p]);
}

static json_t *sweep_report_fit_json(const analysis_fit_t *fit) {
    return json_pack("{s:I, s:o, s:o, s:o}", "points", (json_int_t)fit->n, "base",
                     fit->ok ? sweep_report_number(fit->base) : json_null(), "exponent",
                     fit->ok ? sweep_report_number(fit->exponent) : json_null(), "r2",
                     fit->ok ? sweep_report_number(fit->r2) : json_null());
}

/* How many of the m points come before saturation: up to the TPOT plateau's first level, and
 * before the TTFT knee and sustained errors. */
static size_t sweep_report_unsaturated(const analysis_saturation_t *s, size_t m) {
    size_t end = m;
    if (s->tpot_plateau >= 0 && (size_t)s->tpot_plateau + 1 < end)
        end = (size_t)s->tpot_plateau + 1;
    if (s->ttft_knee >= 0 && (size_t)s->ttft_knee < end)
        end = (size_t)s->ttft_knee;
    if (s->sustained_errors >= 0 && (size_t)s->sustained_errors < end)
        end = (size_t)s->sustained_errors;
    return end;
}

/* The fits of the first m points: TPOT p50 and output tokens/s over the level. */
static void sweep_report_fits(const analysis_point_t *points, size_t m, analysis_fit_t *tpot,
                              analysis_fit_t *throughput) {
    double x[m ? m : 1], yt[m ? m : 1], ys[m ? m : 1];
    for (size_t i = 0; i < m; i++) {
        x[i] = points[i].level;
        yt[i] = points[i].tpot_p50_ms;
        ys[i] = points[i].output_tokens_per_s;
    }
    analysis_fit_power(x, yt, m, tpot);
    analysis_fit_power(x, ys, m, throughput);
}

/* Saturation and fits of the complete levels, for the JSON and the table. */
typedef struct sweep_report_analysis {
    size_t m;
    size_t *used;
    analysis_saturation_t saturation;
    analysis_fit_t tpot, throughput, tpot_unsaturated, throughput_unsaturated;
    size_t unsaturated;
} sweep_report_analysis_t;

static void sweep_report_analyse(const sweep_report_level_t *levels, size_t n, size_t *used,
                                 sweep_report_analysis_t *a) {
    analysis_point_t points[n ? n : 1];
    a->used = used;
    a->m = sweep_report_points(levels, n, points, used);
    analysis_saturation(points, a->m, &a->saturation);
    sweep_report_fits(points, a->m, &a->tpot, &a->throughput);
    a->unsaturated = sweep_report_unsaturated(&a->saturation, a->m);
    sweep_report_fits(points, a->unsaturated, &a->tpot_unsaturated, &a->throughput_unsaturated);
}

json_t *sweep_report_analysis_json(const sweep_report_level_t *levels, size_t n) {
    size_t used[n ? n : 1];
    sweep_report_analysis_t a;
    sweep_report_analyse(levels, n, used, &a);
    const analysis_saturation_t *s = &a.saturation;
    json_t *saturation = json_object();
    json_object_set_new(saturation, "first_errors",
                        sweep_report_point_json(levels, used, s->first_errors));
    json_object_set_new(saturation, "sustained_errors",
                        sweep_report_point_json(levels, used, s->sustained_errors));
    json_object_set_new(saturation, "ttft_p50_over_1s",
                        sweep_report_point_json(levels, used, s->ttft_knee));
    json_t *plateau = sweep_report_point_json(levels, used, s->tpot_plateau);
    if (json_is_object(plateau))
        json_object_set_new(plateau, "tpot_p50_ms", sweep_report_number(s->plateau_tpot_ms));
    json_object_set_new(saturation, "tpot_plateau", plateau);
    json_t *fits = json_object();
    json_object_set_new(fits, "tpot", sweep_report_fit_json(&a.tpot));
    json_object_set_new(fits, "throughput", sweep_report_fit_json(&a.throughput));
    json_object_set_new(fits, "tpot_unsaturated", sweep_report_fit_json(&a.tpot_unsaturated));
    json_object_set_new(fits, "throughput_unsaturated",
                        sweep_report_fit_json(&a.throughput_unsaturated));
    json_object_set_new(fits, "unsaturated_levels", json_integer((json_int_t)a.unsaturated));
    json_t *o = json_object();
    json_object_set_new(o, "levels_analysed", json_integer((json_int_t)a.m));
    json_object_set_new(o, "saturation", saturation);
    json_object_set_new(o, "fits", fits);
    /* Filled by the SLO evaluation and the capacity search (controller/slo, capacity). */
    json_object_set_new(o, "slo", json_null());
    json_object_set_new(o, "capacity", json_null());
    return o;
}

/* A table cell: ms with four significant digits, "-" for NaN. */
static void sweep_report_cell(char *buf, size_t len, double v) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        report_format_ms(buf, len, v);
}

static void sweep_report_print_point(FILE *out, const char *what,
                                     const sweep_report_level_t *levels, const size_t *used,
                                     int p) {
    if (p < 0) {
        fprintf(out, "  %-22s not reached\n", what);
        return;
    }
    const sweep_report_level_t *l = &levels[used[p]];
    fprintf(out, "  %-22s %s %g\n", what, sweep_report_axis_key(l->spec), l->spec->value);
}

static void sweep_report_print_fit(FILE *out, const char *what, const char *symbol,
                                   const analysis_fit_t *fit) {
    if (!fit->ok) {
        fprintf(out, "  %-22s not enough levels\n", what);
        return;
    }
    fprintf(out, "  %-22s base %.4g x level^%.3f  (%s = %.3f, R^2 %.3f, %zu levels)\n", what,
            fit->base, fit->exponent, symbol, fit->exponent, fit->r2, fit->n);
}

/* The number at a slash-separated path under o, NAN when absent or null. */
static double sweep_report_at(const json_t *o, const char *path) {
    char part[64];
    for (const char *p = path; o && *p;) {
        size_t len = strcspn(p, "/");
        snprintf(part, sizeof part, "%.*s", (int)len, p);
        o = json_object_get(o, part);
        p += len + (p[len] == '/');
    }
    return json_is_number(o) ? json_number_value(o) : NAN;
}

void sweep_report_server_figures(sweep_report_level_t *l, const json_t *server_and_gap) {
    l->server_ttft_mean_ms = sweep_report_at(server_and_gap, "gap/total/ttft/server_mean_ms");
    l->server_tpot_mean_ms = sweep_report_at(server_and_gap, "gap/total/tpot/server_mean_ms");
    l->server_gen_tps = sweep_report_at(server_and_gap, "server/total/generation_tokens_per_s");
}

static bool sweep_report_any_server(const sweep_report_level_t *levels, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isnan(levels[i].server_ttft_mean_ms) || !isnan(levels[i].server_gen_tps))
            return true;
    return false;
}

void sweep_report_print(FILE *out, const sweep_report_level_t *levels, size_t n) {
    bool server = sweep_report_any_server(levels, n);
    fprintf(out, "\n%-12s %5s %9s %9s %9s %9s %9s %9s %7s %8s %8s %9s\n", "level", "valid",
            "TTFT p50", "TTFT p95", "TPOT p50", "TPOT p95", "E2E p50", "E2E p95", "err %", "conv/s",
            "req/s", "tok/s");
    if (server) /* the header's line ended: the server columns go on a second header line */
        fprintf(out, "%-12s %5s %9s %9s %9s\n", "", "", "Srv TTFT", "Srv TPOT", "Gen TPS");
    for (size_t i = 0; i < n; i++) {
        const sweep_report_level_t *l = &levels[i];
        const double *f = l->figures;
        char level[32], valid[16], c[6][16];
        snprintf(level, sizeof level, "%s %g", l->spec->axis == SWEEP_AXIS_RATE ? "rate" : "c",
                 l->spec->value);
        snprintf(valid, sizeof valid, "%u/%u%s", l->valid, l->repetitions,
                 l->interrupted ? "!" : "");
        static const sweep_figure_t cols[] = {SWEEP_FIG_TTFT_P50,    SWEEP_FIG_TTFT_P95,
                                              SWEEP_FIG_TPOT_P50,    SWEEP_FIG_TPOT_P95,
                                              SWEEP_FIG_LATENCY_P50, SWEEP_FIG_LATENCY_P95};
        for (int k = 0; k < 6; k++)
            sweep_report_cell(c[k], sizeof c[k], f[cols[k]]);
        fprintf(out, "%-12s %5s %9s %9s %9s %9s %9s %9s %7.2f %8.3f %8.2f %9.1f\n", level, valid,
                c[0], c[1], c[2], c[3], c[4], c[5],
                isnan(f[SWEEP_FIG_ERROR_PCT]) ? 0 : f[SWEEP_FIG_ERROR_PCT], f[SWEEP_FIG_ACTUAL_RPS],
                f[SWEEP_FIG_REQUESTS_PER_S], f[SWEEP_FIG_TOPS]);
        if (server) {
            char tps[16];
            sweep_report_cell(c[0], sizeof c[0], l->server_ttft_mean_ms);
            sweep_report_cell(c[1], sizeof c[1], l->server_tpot_mean_ms);
            if (isnan(l->server_gen_tps))
                snprintf(tps, sizeof tps, "-");
            else
                snprintf(tps, sizeof tps, "%.1f", l->server_gen_tps);
            fprintf(out, "%-12s %5s %9s %9s %9s\n", "", "server", c[0], c[1], tps);
        }
    }
    fputs("(ms; pooled over the valid repetitions; valid = repetitions kept / run, ! = "
          "interrupted; conv/s = session starts per second)\n",
          out);
    if (server)
        fputs("(server: Srv TTFT and Srv TPOT are the server's exact means, Gen TPS its generated "
              "tokens per second, from one repetition's page)\n",
              out);
    size_t used[n ? n : 1];
    sweep_report_analysis_t a;
    sweep_report_analyse(levels, n, used, &a);
    fputs("\nSaturation\n", out);
    sweep_report_print_point(out, "first errors", levels, used, a.saturation.first_errors);
    sweep_report_print_point(out, "sustained > 5 % errors", levels, used,
                             a.saturation.sustained_errors);
    sweep_report_print_point(out, "TTFT p50 > 1 s", levels, used, a.saturation.ttft_knee);
    sweep_report_print_point(out, "TPOT p50 plateau", levels, used, a.saturation.tpot_plateau);
    if (a.saturation.tpot_plateau >= 0)
        fprintf(out, "  %-22s %.1f ms\n", "plateau TPOT p50", a.saturation.plateau_tpot_ms);
    fputs("\nScaling fits (least squares in log space)\n", out);
    sweep_report_print_fit(out, "TPOT p50, all", "alpha", &a.tpot);
    sweep_report_print_fit(out, "TPOT p50, unsaturated", "alpha", &a.tpot_unsaturated);
    sweep_report_print_fit(out, "tok/s, all", "beta", &a.throughput);
    sweep_report_print_fit(out, "tok/s, unsaturated", "beta", &a.throughput_unsaturated);
}
