#include "report_doc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_fmt.h"

double report_doc_number(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *report_doc_simulated(const json_t *root) {
    const json_t *served_by = json_object_get(root, "served_by");
    if (!json_is_true(json_object_get(served_by, "simulated")))
        return NULL;
    const char *profile = json_string_value(json_object_get(served_by, "profile"));
    return profile ? profile : "unknown";
}

const char *report_doc_simulation(const json_t *root, char *buf, size_t len) {
    const json_t *served_by = json_object_get(root, "served_by");
    if (!json_is_true(json_object_get(served_by, "virtual_time")))
        return NULL;
    const char *router = json_string_value(json_object_get(served_by, "router"));
    report_simulation_t s = {
        .profile = report_doc_simulated(root),
        .replicas = (uint32_t)json_integer_value(json_object_get(served_by, "replicas")),
        .router = router ? router : "?"};
    report_simulation_text(&s, buf, len);
    return buf;
}

const char *report_doc_replicas(const json_t *root) {
    const json_t *replicas = json_object_get(json_object_get(root, "analysis"), "replicas");
    return json_string_value(json_object_get(replicas, "statement"));
}

const char *report_doc_axis(const json_t *root) {
    const char *axis = json_string_value(json_object_get(json_object_get(root, "sweep"), "axis"));
    if (axis)
        return axis;
    /* A run's level also has a "rate" object (requested and achieved): the level is a number. */
    const json_t *first = json_array_get(json_object_get(root, "levels"), 0);
    return json_is_number(json_object_get(first, "concurrency")) ? "concurrency" : "rate";
}

double report_doc_level_value(const json_t *root, const json_t *level) {
    const json_t *v = json_object_get(level, report_doc_axis(root));
    /* A rate run's level keeps its target in the rate block (docs/metrics.md section 8). */
    if (json_is_object(v))
        return report_doc_number(v, "requested_per_s");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *report_doc_level_text(const json_t *root, const json_t *level, char *buf, size_t len) {
    double v = report_doc_level_value(root, level);
    if (isnan(v))
        snprintf(buf, len, "?");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%g", v);
    return buf;
}

void report_doc_level_name(const json_t *root, size_t i, char *buf, size_t len) {
    const json_t *level = json_array_get(json_object_get(root, "levels"), i);
    char value[32];
    report_doc_level_text(root, level, value, sizeof value);
    snprintf(buf, len, "%02zu-%s%s", i + 1, strcmp(report_doc_axis(root), "rate") ? "c" : "r",
             value);
}

void report_doc_figure(char *buf, size_t len, double x, const char *unit) {
    if (isnan(x))
        snprintf(buf, len, "—");
    else
        snprintf(buf, len, "%.*f%s", fabs(x) >= 100 ? 0 : fabs(x) >= 10 ? 1 : 2, x, unit);
}

void report_doc_csv_field(FILE *out, const char *text) {
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}
