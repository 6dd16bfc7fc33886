#include "report_fmt.h"

#include <inttypes.h>
#include <stdio.h>

static double report_fmt_ms(uint64_t ns) {
    return (double)ns / 1e6;
}

/* {"count","mean","p50","p90","p95","p99","p99_9","min","max"} in ms, nulls when empty, and
 * "clamped": how many samples lay above the histogram's range (1 hour), in its top bucket. */
json_t *report_metric_json(const histogram_t *h) {
    static const struct {
        const char *key;
        double p;
    } percentiles[] = {{"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}};
    uint64_t count = histogram_count(h);
    json_t *block = json_object();
    json_object_set_new(block, "count", json_integer((json_int_t)count));
    json_object_set_new(block, "mean", count ? json_real(histogram_mean(h) / 1e6) : json_null());
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++)
        json_object_set_new(
            block, percentiles[i].key,
            count ? json_real(report_fmt_ms(histogram_percentile(h, percentiles[i].p)))
                  : json_null());
    json_object_set_new(block, "min",
                        count ? json_real(report_fmt_ms(histogram_min(h))) : json_null());
    json_object_set_new(block, "max",
                        count ? json_real(report_fmt_ms(histogram_max(h))) : json_null());
    json_object_set_new(block, "clamped", json_integer((json_int_t)histogram_clamped(h)));
    return block;
}

const char *report_role_name(const report_meta_t *meta, uint32_t role, char *buf, size_t len) {
    if (meta && role < meta->n_role_names && meta->role_names[role])
        return meta->role_names[role];
    snprintf(buf, len, "role %" PRIu32, role);
    return buf;
}

void report_format_ms(char *buf, size_t len, double value) {
    const char *format = value < 1       ? "%.3f"
                         : value < 100   ? "%.2f"
                         : value < 10000 ? "%.1f"
                                         : "%.0f";
    snprintf(buf, len, format, value);
}

void report_simulation_text(const report_simulation_t *simulation, char *buf, size_t len) {
    if (simulation->replicas > 1)
        snprintf(buf, len,
                 "virtual time through the engine model, profile %s, %u replicas behind router %s",
                 simulation->profile, simulation->replicas, simulation->router);
    else
        snprintf(buf, len, "virtual time through the engine model, profile %s",
                 simulation->profile);
}
