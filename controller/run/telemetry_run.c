#include "telemetry_run.h"

#include "loop.h"
#include "telemetry_report.h"

/* How long before the start instant a run without warm-up takes its first mark. */
#define TELEMETRY_RUN_OPEN_LEAD_NS 50000000LL

void telemetry_run_open(measurement_t *run) {
    if (!(run->telemetry = telemetry_new(&run->cfg, run->options.name)))
        return;
    /* Without a warm-up the window opens with the first request: scrape just before the start
     * instant, while the server is still idle, not at it with requests already on their way. */
    int64_t opens = run->cfg.warmup_ns > 0 ? run->start_ns + run->cfg.warmup_ns
                                           : run->start_ns - TELEMETRY_RUN_OPEN_LEAD_NS;
    run->window_opens = telemetry_mark(run->telemetry, opens, "window-start");
    /* auto, the default, says nothing unless a page is absent (telemetry.c says it, once) */
    const config_telemetry_t *t = &run->cfg.telemetry;
    if (t->server_metrics == SERVER_METRICS_URLS || t->n_gpu_urls > 0)
        measurement_say(run, "server metrics: scraping every %.3g s",
                        telemetry_scrape_interval_s(run->telemetry));
}

int telemetry_run_close(measurement_t *run, telemetry_stats_t *stats) {
    if (!run->telemetry || run->start_ns == 0)
        return -1;
    run->window_closes = telemetry_mark(run->telemetry, 0, "window-end");
    telemetry_stop_series(run->telemetry);
    telemetry_wait(run->telemetry, loop_now_ns() + TELEMETRY_SCRAPE_TIMEOUT_NS + 500000000LL);
    return telemetry_stats_between(run->telemetry, run->window_opens, run->window_closes, stats);
}

void telemetry_run_judge(const telemetry_stats_t *stats, validity_t *validity) {
    validity_server_t in = {.shared = stats->shared,
                            .shared_why = stats->shared_why,
                            .restarted = stats->restarted,
                            .restarted_why = stats->restarted_why};
    validity_judge_server(&in, validity);
}

void telemetry_run_json(const measurement_t *run, const telemetry_stats_t *stats, json_t *level) {
    json_object_set_new(
        level, "server",
        telemetry_report_server_json(run->telemetry, stats, run->window_opens, run->window_closes,
                                     (const char *const *)run->cfg.target.endpoints));
    json_object_set_new(level, "gap", telemetry_report_gap_json(stats, run->merge));
}

json_t *telemetry_run_between_json(const measurement_t *run, telemetry_mark_t a,
                                   telemetry_mark_t b) {
    telemetry_stats_t stats;
    if (!run->telemetry || telemetry_stats_between(run->telemetry, a, b, &stats) != 0)
        return json_null();
    json_t *o = telemetry_report_server_json(run->telemetry, &stats, a, b,
                                             (const char *const *)run->cfg.target.endpoints);
    telemetry_stats_clear(&stats);
    return o;
}
