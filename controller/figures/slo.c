#include "slo.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* The tail-most statistic ranks highest: max, then the percentiles by p, then the mean. */
static double slo_tail_rank(const config_slo_item_t *item) {
    switch (item->stat) {
    case CONFIG_SLO_MAX:
        return 100;
    case CONFIG_SLO_PERCENTILE:
        return item->percentile;
    default:
        return 0;
    }
}

int64_t slo_request_bound_ns(const config_slo_t *slo, metrics_kind_t k) {
    int64_t bound = 0;
    double rank = -1;
    for (size_t i = 0; i < slo->n; i++) {
        const config_slo_item_t *item = &slo->items[i];
        if (item->stat == CONFIG_SLO_ERROR_PCT || item->metric != (uint32_t)k)
            continue;
        if (slo_tail_rank(item) > rank) {
            rank = slo_tail_rank(item);
            bound = item->bound_ns;
        }
    }
    return bound;
}

bool slo_request_meets(const config_slo_t *slo, const metrics_t *m) {
    if (!m->ok)
        return false;
    for (int k = 0; k < METRIC__COUNT; k++) {
        int64_t bound = slo_request_bound_ns(slo, (metrics_kind_t)k);
        if (bound > 0 && m->has[k] && m->value_ns[k] > (uint64_t)bound)
            return false;
    }
    return true;
}

void slo_goodput_add(slo_goodput_t *self, const config_slo_t *slo, const request_record_t *rec,
                     const metrics_t *m, bool in_window) {
    if (m->cancelled)
        return;
    bool good = slo_request_meets(slo, m);
    /* the rates count what ended in the window whenever it was sent, as the request rate does */
    if (good && in_window) {
        self->window_good++;
        self->window_good_output_tokens += m->output_tokens;
    }
    if (rec->warmup)
        return;
    self->checked++;
    self->good += good;
}

void slo_goodput_pool(slo_goodput_t *dst, const slo_goodput_t *src) {
    dst->checked += src->checked;
    dst->good += src->good;
    dst->window_good += src->window_good;
    dst->window_good_output_tokens += src->window_good_output_tokens;
}

/* The statistic spec asks for, in ms (percent for errors); false when nothing was measured. */
static bool slo_measure(const config_slo_item_t *spec, const slo_input_t *in, double *value) {
    if (spec->stat == CONFIG_SLO_ERROR_PCT) {
        uint64_t finished = in->ok + in->failed;
        *value = finished ? 100.0 * (double)in->failed / (double)finished : 0;
        return finished > 0;
    }
    const histogram_t *h = in->latency[spec->metric];
    if (!h || histogram_count(h) == 0)
        return false;
    switch (spec->stat) {
    case CONFIG_SLO_PERCENTILE:
        *value = (double)histogram_percentile(h, spec->percentile) / 1e6;
        break;
    case CONFIG_SLO_MEAN:
        *value = histogram_mean(h) / 1e6;
        break;
    default:
        *value = (double)histogram_max(h) / 1e6;
        break;
    }
    return true;
}

static void slo_check(const config_slo_item_t *spec, const slo_input_t *in, slo_check_t *out) {
    *out = (slo_check_t){.spec = *spec};
    out->bound = spec->stat == CONFIG_SLO_ERROR_PCT ? spec->max_pct : (double)spec->bound_ns / 1e6;
    out->measured = slo_measure(spec, in, &out->value);
    if (!out->measured) {
        out->margin = -INFINITY;
        return;
    }
    out->pass = out->value <= out->bound;
    if (out->bound > 0)
        out->margin = (out->bound - out->value) / out->bound;
    else /* errors: {max_pct: 0} */
        out->margin = out->pass ? 0 : -out->value / 100;
}

void slo_evaluate(const config_slo_t *slo, const slo_input_t *in, slo_result_t *out) {
    memset(out, 0, sizeof *out);
    out->pass = true;
    out->binding = -1;
    out->n = slo->n;
    for (size_t i = 0; i < slo->n; i++) {
        slo_check(&slo->items[i], in, &out->checks[i]);
        out->pass = out->pass && out->checks[i].pass;
        if (out->binding < 0 || out->checks[i].margin < out->checks[out->binding].margin)
            out->binding = (int)i;
    }
    if (!in->goodput)
        return;
    const slo_goodput_t *g = in->goodput;
    out->has_goodput = true;
    out->good_requests = g->good;
    out->checked_requests = g->checked;
    out->attainment_pct = g->checked ? 100.0 * (double)g->good / (double)g->checked : 0;
    if (in->window_s > 0) {
        out->goodput_requests_per_s = (double)g->window_good / in->window_s;
        out->goodput_output_tokens_per_s = (double)g->window_good_output_tokens / in->window_s;
    }
}

void slo_label(const config_slo_item_t *spec, char *buf, size_t len) {
    char key[48];
    if (spec->stat == CONFIG_SLO_ERROR_PCT) {
        snprintf(buf, len, "errors <= %g %%", spec->max_pct);
        return;
    }
    config_slo_key(spec, key, sizeof key);
    snprintf(buf, len, "%s %s <= %g ms", metrics_label(spec->metric), key,
             (double)spec->bound_ns / 1e6);
}

/* Misses of one SLO so far and the most its whole level may have; false when it cannot be judged
 * early (the mean). */
static bool slo_misses(const config_slo_item_t *spec, const slo_input_t *in, double progress,
                       uint64_t *misses, double *allowed) {
    if (spec->stat == CONFIG_SLO_ERROR_PCT) {
        *misses = in->failed;
        *allowed = spec->max_pct / 100 * (double)(in->ok + in->failed) / progress;
        return true;
    }
    const histogram_t *h = in->latency[spec->metric];
    if (spec->stat == CONFIG_SLO_MEAN || !h)
        return false;
    uint64_t count = histogram_count(h);
    *misses = count - histogram_count_at_or_below(h, (uint64_t)spec->bound_ns);
    *allowed = spec->stat == CONFIG_SLO_MAX ? 0 : (1 - spec->percentile / 100) * count / progress;
    return true;
}

bool slo_clearly_lost(const config_slo_t *slo, const slo_input_t *in, double progress, char *why,
                      size_t len) {
    assert(progress > 0);
    if (progress > 1)
        progress = 1;
    for (size_t i = 0; i < slo->n; i++) {
        const config_slo_item_t *spec = &slo->items[i];
        uint64_t misses;
        double allowed;
        if (!slo_misses(spec, in, progress, &misses, &allowed))
            continue;
        bool lost = spec->stat == CONFIG_SLO_MAX
                        ? misses > 0
                        : misses >= SLO_LOST_MIN_MISSES && misses > allowed * SLO_LOST_SAFETY;
        if (!lost)
            continue;
        char label[96];
        slo_label(spec, label, sizeof label);
        if (spec->stat == CONFIG_SLO_MAX)
            snprintf(why, len, "%s lost: a value above the bound already", label);
        else
            snprintf(why, len,
                     "%s lost: %llu misses at %.0f %% of the level, more than the %.0f the whole "
                     "level may have",
                     label, (unsigned long long)misses, progress * 100, allowed);
        return true;
    }
    return false;
}

static json_t *slo_number_or_null(bool have, double v) {
    return have && isfinite(v) ? json_real(v) : json_null();
}

static json_t *slo_check_json(const slo_check_t *c) {
    char key[48], label[96];
    config_slo_key(&c->spec, key, sizeof key);
    slo_label(&c->spec, label, sizeof label);
    json_t *o = json_object();
    json_object_set_new(o, "metric", json_string(config_slo_metric_name(&c->spec)));
    json_object_set_new(o, "statistic", json_string(key));
    json_object_set_new(o, "label", json_string(label));
    json_object_set_new(o, "unit", json_string(c->spec.stat == CONFIG_SLO_ERROR_PCT ? "%" : "ms"));
    json_object_set_new(o, "bound", json_real(c->bound));
    json_object_set_new(o, "value", slo_number_or_null(c->measured, c->value));
    json_object_set_new(o, "pass", json_boolean(c->pass));
    json_object_set_new(o, "margin", slo_number_or_null(c->measured, c->margin));
    return o;
}

json_t *slo_json(const slo_result_t *r) {
    json_t *checks = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(checks, slo_check_json(&r->checks[i]));
    json_t *o = json_object();
    json_object_set_new(o, "pass", json_boolean(r->pass));
    char label[96] = "";
    if (r->binding >= 0)
        slo_label(&r->checks[r->binding].spec, label, sizeof label);
    json_object_set_new(o, "binding", r->binding >= 0 ? json_string(label) : json_null());
    json_object_set_new(o, "checks", checks);
    json_t *g = json_null();
    if (r->has_goodput) {
        g = json_object();
        json_object_set_new(g, "good_requests", json_integer((json_int_t)r->good_requests));
        json_object_set_new(g, "checked_requests", json_integer((json_int_t)r->checked_requests));
        json_object_set_new(g, "attainment_pct", json_real(r->attainment_pct));
        json_object_set_new(g, "requests_per_s", json_real(r->goodput_requests_per_s));
        json_object_set_new(g, "output_tokens_per_s", json_real(r->goodput_output_tokens_per_s));
    }
    json_object_set_new(o, "goodput", g);
    return o;
}

void slo_level_json(json_t *level, const config_slo_t *slo, const window_stats_t *pooled,
                    const slo_goodput_t *goodput) {
    if (slo->n == 0)
        return;
    slo_input_t in = {.latency = pooled->latency,
                      .ok = pooled->ok,
                      .failed = pooled->failed,
                      .goodput = goodput,
                      .window_s = (double)pooled->duration_ns / 1e9};
    slo_result_t r;
    slo_evaluate(slo, &in, &r);
    json_object_set_new(level, "slo", slo_json(&r));
}

void slo_analysis_json(json_t *analysis, json_t *levels) {
    json_t *out = json_array();
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *level = json_array_get(levels, i), *slo = json_object_get(level, "slo");
        if (!slo)
            continue;
        json_t *o = json_deep_copy(slo);
        const char *axis = json_object_get(level, "concurrency") ? "concurrency" : "rate";
        json_object_set(o, axis, json_object_get(level, axis));
        json_array_append_new(out, o);
    }
    if (json_array_size(out) > 0)
        json_object_set_new(analysis, "slo", out);
    else
        json_decref(out);
}

void slo_print(FILE *out, const slo_result_t *r) {
    if (r->n == 0)
        return;
    fprintf(out, "\nSLOs: %s\n", r->pass ? "all met" : "NOT MET");
    for (size_t i = 0; i < r->n; i++) {
        const slo_check_t *c = &r->checks[i];
        char label[96];
        slo_label(&c->spec, label, sizeof label);
        const char *unit = c->spec.stat == CONFIG_SLO_ERROR_PCT ? "%" : "ms";
        if (c->measured)
            fprintf(out, "  %-4s %-28s measured %10.3f %-2s  margin %+6.1f %%%s\n",
                    c->pass ? "PASS" : "FAIL", label, c->value, unit, c->margin * 100,
                    (int)i == r->binding ? "  (binding)" : "");
        else
            fprintf(out, "  FAIL %-28s nothing measured%s\n", label,
                    (int)i == r->binding ? "  (binding)" : "");
    }
    if (r->has_goodput)
        fprintf(out,
                "  goodput: %.3f req/s, %.1f output tok/s (%llu of %llu requests met every "
                "per-request bound, %.1f %%)\n",
                r->goodput_requests_per_s, r->goodput_output_tokens_per_s,
                (unsigned long long)r->good_requests, (unsigned long long)r->checked_requests,
                r->attainment_pct);
}

void slo_print_levels(FILE *out, json_t *levels) {
    bool header = false;
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *level = json_array_get(levels, i), *slo = json_object_get(level, "slo");
        if (!slo)
            continue;
        if (!header)
            fprintf(out,
                    "\nSLOs per level (binding SLO: measured against bound, margin; goodput)\n");
        header = true;
        const char *axis = json_object_get(level, "concurrency") ? "concurrency" : "rate";
        json_t *binding = NULL, *checks = json_object_get(slo, "checks");
        for (size_t k = 0; k < json_array_size(checks); k++)
            if (json_equal(json_object_get(json_array_get(checks, k), "label"),
                           json_object_get(slo, "binding")))
                binding = json_array_get(checks, k);
        json_t *value = json_object_get(binding, "value"), *g = json_object_get(slo, "goodput");
        fprintf(out, "  %-11s %-8g %-4s %s", axis, json_number_value(json_object_get(level, axis)),
                json_is_true(json_object_get(slo, "pass")) ? "PASS" : "FAIL",
                json_string_value(json_object_get(slo, "binding")));
        if (json_is_number(value))
            fprintf(out, ": %.3f %s, margin %+.1f %%", json_number_value(value),
                    json_string_value(json_object_get(binding, "unit")),
                    json_number_value(json_object_get(binding, "margin")) * 100);
        if (json_is_object(g))
            fprintf(out, "; goodput %.3f req/s (%.1f %% of requests)",
                    json_number_value(json_object_get(g, "requests_per_s")),
                    json_number_value(json_object_get(g, "attainment_pct")));
        fputc('\n', out);
    }
}
