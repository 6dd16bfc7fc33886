#include "config.h"
#include "config_graph.h"
#include "config_slo.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_compaction.h"
#include "config_dataset.h"
#include "config_deployment.h"
#include "config_dist.h"
#include "config_scaffold.h"
#include "config_sweep.h"
#include "config_telemetry.h"
#include "config_trace.h"
#include "units.h"

#define REDACTED "<redacted>"

/* The shortest %g form that reads back to the same double. */
static void format_double(double v, char *buf, size_t len) {
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, len, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* A YAML double-quoted scalar: safe for any text (URLs, paths, header values). */
static void put_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void put_optional_string(FILE *out, const char *s) {
    if (s == NULL)
        fputs("null", out);
    else
        put_string(out, s);
}

static void put_duration(FILE *out, int64_t ns) {
    char buf[32];
    units_format_duration(ns, buf, sizeof buf);
    fputs(buf, out);
}

/* Seconds as a duration when that reads back exactly ("200ms"), else as a plain number. */
static void put_seconds(FILE *out, double seconds) {
    char buf[40];
    if (seconds >= 0 && seconds < 9e9) {
        int64_t ns = llround(seconds * 1e9);
        if ((double)ns / 1e9 == seconds && units_format_duration(ns, buf, sizeof buf) > 0) {
            fputs(buf, out);
            return;
        }
    }
    format_double(seconds, buf, sizeof buf);
    fputs(buf, out);
}

static void put_value(FILE *out, double v, bool seconds) {
    char buf[40];
    if (seconds) {
        put_seconds(out, v);
        return;
    }
    format_double(v, buf, sizeof buf);
    fputs(buf, out);
}

static void put_list(FILE *out, const double *values, size_t n, bool seconds) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            fputs(", ", out);
        put_value(out, values[i], seconds);
    }
    fputc(']', out);
}

static void put_param(FILE *out, const dist_t *d, dist_param_t p, bool time_valued) {
    fprintf(out, ", %s: ", dist_param_name(p));
    put_value(out, d->param[p], time_valued && config_dist_param_has_unit(p));
}

/* The inside of a distribution's flow mapping: "dist: KIND, params...". */
static void put_dist_body(FILE *out, const dist_t *d, bool time_valued);

/* A plain number for fixed, else a flow mapping; empirical values are written inline so the
 * result stands alone (workers on other hosts do not have the file). */
static void put_dist(FILE *out, const dist_t *d, bool time_valued) {
    if (d->kind == DIST_FIXED) {
        put_value(out, d->param[DIST_P_VALUE], time_valued);
        return;
    }
    fputc('{', out);
    put_dist_body(out, d, time_valued);
    fputc('}', out);
    if (d->file != NULL) {
        fputs("  # values read from ", out);
        put_string(out, d->file);
    }
}

/* key (the text before the value, indentation and colon included) and the distribution. */
static void put_key_dist(FILE *out, const char *key, const dist_t *d, bool time_valued) {
    fputs(key, out);
    put_dist(out, d, time_valued);
}

static void put_dist_body(FILE *out, const dist_t *d, bool time_valued) {
    fprintf(out, "dist: %s", dist_kind_name(d->kind));
    char order[128], *save = NULL;
    unsigned written = 0;
    snprintf(order, sizeof order, "%s", dist_kind_params(d->kind));
    for (char *name = strtok_r(order, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
        dist_param_t p;
        if (dist_param_from_name(name, &p) == 0 && (d->given & (1u << p))) {
            put_param(out, d, p, time_valued);
            written |= 1u << p;
        }
    }
    for (int p = 0; p < DIST_P__COUNT; p++)
        if ((d->given & ~written) & (1u << p))
            put_param(out, d, (dist_param_t)p, time_valued);
    if (d->kind == DIST_EMPIRICAL) {
        fputs(", values: ", out);
        put_list(out, d->values, d->n_values, time_valued);
        if (d->weights != NULL) {
            fputs(", weights: ", out);
            put_list(out, d->weights, d->n_values, false);
        }
    }
    if (d->kind == DIST_MIXTURE) {
        fputs(", components: [", out);
        for (size_t i = 0; i < d->n_values; i++) {
            fputs(i ? ", {weight: " : "{weight: ", out);
            put_value(out, d->weights ? d->weights[i] : 1.0, false);
            fputs(", ", out);
            put_dist_body(out, &d->components[i], time_valued);
            fputc('}', out);
        }
        fputc(']', out);
    }
}

/* path, tls, proxy and preflight (common/config_net.c reads them); a proxy password only on the
 * wire. */
static void put_target_net(FILE *out, const config_target_t *t, bool redact) {
    fputs("  path: ", out);
    put_optional_string(out, t->path);
    fputs("\n  tls:\n    ca_file: ", out);
    put_optional_string(out, t->tls.ca_file);
    fprintf(out, "\n    insecure: %s\n    client_cert: ", t->tls.insecure ? "true" : "false");
    put_optional_string(out, t->tls.client_cert);
    fputs("\n    client_key: ", out);
    put_optional_string(out, t->tls.client_key);
    char label[1024];
    fputs("\n  proxy: ", out);
    if (t->proxy == CONFIG_PROXY_URL)
        put_string(out, redact ? config_proxy_label(t, label, sizeof label) : t->proxy_url);
    else
        fputs(config_proxy_label(t, label, sizeof label), out);
    fprintf(out, "\n  preflight: %s\n  session_header: ", t->preflight ? "true" : "false");
    put_optional_string(out, t->session_header);
    fputs("\n  replica_header: ", out);
    put_optional_string(out, t->replica_header);
    fputc('\n', out);
}

static void put_target(FILE *out, const config_target_t *t, bool redact) {
    fputs("target:\n  endpoints:", out);
    if (t->n_endpoints == 0)
        fputs(" []  # none: `stampede run` starts its embedded mock", out);
    for (size_t i = 0; i < t->n_endpoints; i++) {
        fputs("\n    - ", out);
        put_string(out, t->endpoints[i]);
    }
    fprintf(out, "\n  api: %s\n  model: ", config_api_name(t->api));
    put_string(out, t->model);
    fputs("\n  headers:", out);
    if (t->n_headers == 0)
        fputs(" {}", out);
    for (size_t i = 0; i < t->n_headers; i++) {
        bool hide = redact && config_header_is_secret(t->headers[i].name);
        fputs("\n    ", out);
        put_string(out, t->headers[i].name);
        fputs(": ", out);
        if (t->headers[i].value_env || t->headers[i].value_file) {
            fputs(t->headers[i].value_env ? "{env: " : "{file: ", out);
            put_string(out, t->headers[i].value_env ? t->headers[i].value_env
                                                    : t->headers[i].value_file);
            fputs("}", out);
            continue;
        }
        put_string(out, hide ? REDACTED : t->headers[i].value);
    }
    fputs("\n  api_key_env: ", out);
    put_optional_string(out, t->api_key_env);
    fputs("\n  api_key_file: ", out);
    put_optional_string(out, t->api_key_file);
    fputs("\n  timeout: ", out);
    put_duration(out, t->timeout_ns);
    fputs("\n  connect_timeout: ", out);
    put_duration(out, t->connect_timeout_ns);
    fprintf(out, "\n  routing: %s\n  ignore_eos: %s\n  min_tokens: %s\n  stream: %s\n",
            config_routing_name(t->routing), t->ignore_eos ? "true" : "false",
            t->min_tokens ? "true" : "false", t->stream ? "true" : "false");
    if (t->continuous_usage)
        fputs("  continuous_usage_stats: true\n", out);
    if (t->thinking_tokens)
        fprintf(out, "  thinking_tokens: %u\n", (unsigned)t->thinking_tokens);
    if (t->previous_response_id)
        fputs("  previous_response_id: true\n", out);
    fputs("  reasoning_tags: [", out);
    if (t->reasoning_open && t->reasoning_close) {
        put_string(out, t->reasoning_open);
        fputs(", ", out);
        put_string(out, t->reasoning_close);
    }
    fputs("]\n", out);
    if (t->max_completion_tokens)
        fputs("  max_tokens_param: max_completion_tokens\n", out);
    fprintf(out, "  retry_on_429: %s\n  retry_after_max: ", t->retry_on_429 ? "honour" : "ignore");
    put_duration(out, t->retry_after_max_ns);
    fprintf(out, "\n  retry_429_max: %u\n", (unsigned)t->retry_429_max);
    put_target_net(out, t, redact);
    if (t->tokenizer) {
        fputs("  tokenizer: ", out);
        put_string(out, t->tokenizer);
        fputs("\n", out);
    }
}

static void put_history(FILE *out, double history) {
    if (history >= 1.0)
        fputs("full", out);
    else if (history <= 0.0)
        fputs("none", out);
    else
        put_value(out, history, false);
}

/* One node: a template node (id, parents, history parent) or a shape's slot. */
static void put_graph_node(FILE *out, const config_workload_t *w, const config_graph_node_t *n,
                           bool template) {
    const config_graph_t *g = &w->graph;
    const char *in = template ? "      " : "        "; /* the node's keys */
    if (template) {
        fputs("    - id: ", out);
        put_string(out, n->id);
        fprintf(out, "\n%sparents: [", in);
        for (size_t p = 0; p < n->n_parents; p++) {
            fputs(p ? ", " : "", out);
            put_string(out, g->nodes[n->parents[p]].id);
        }
        fputs("]\n", out);
        if (n->n_parents) {
            fprintf(out, "%shistory_parent: ", in);
            put_string(out, g->nodes[n->history_parent].id);
            fputc('\n', out);
        }
    } else {
        fputs("      ", out);
        put_string(out, n->id);
        fputs(":\n", out);
    }
    fprintf(out, "%shistory: ", in);
    put_history(out, n->history);
    if (n->role < w->n_roles) { /* else role 0 with no names: the key left out reads back so */
        fprintf(out, "\n%srole: ", in);
        put_string(out, w->roles[n->role]);
    }
    fprintf(out, "\n%sappend_parent_replies: %s\n%sinput_tokens: ", in,
            n->append_parent_replies ? "true" : "false", in);
    put_dist(out, &n->input_tokens, false);
    fprintf(out, "\n%soutput_tokens: ", in);
    put_dist(out, &n->output_tokens, false);
    fprintf(out, "\n%swait_after_ready: ", in);
    put_dist(out, &n->wait_after_ready, true);
    fputc('\n', out);
}

/* workload.graph: every key of the shape, then its nodes. */
static void put_graph(FILE *out, const config_workload_t *w) {
    const config_graph_t *g = &w->graph;
    fprintf(out, "  graph:\n    shape: %s\n    message_overhead_tokens: %u\n",
            config_graph_shape_name(g->shape), (unsigned)g->message_overhead_tokens);
    if (!(g->step_overhead.kind == DIST_FIXED && dist_mean(&g->step_overhead) == 0)) {
        put_key_dist(out, "    step_overhead: ", &g->step_overhead, true);
        fputc('\n', out);
    }
    if (g->context_limit)
        fprintf(out, "    context_limit: %u\n    context_margin: %u\n", (unsigned)g->context_limit,
                (unsigned)g->context_margin);
    switch (g->shape) {
    case GRAPH_LINEAR:
        put_key_dist(out, "    length: ", &g->length, false);
        fputc('\n', out);
        break;
    case GRAPH_DIAMOND:
        fprintf(out, "    executors: %s\n    executor_count: %u\n",
                config_graph_executors_name(g->sequential), (unsigned)g->executor_count);
        break;
    case GRAPH_FANOUT:
        fprintf(out, "    children: %u\n    rounds: %u\n    child_length: ", (unsigned)g->children,
                (unsigned)g->rounds);
        put_dist(out, &g->child_length, false);
        fputc('\n', out);
        break;
    case GRAPH_BRANCHING:
        put_key_dist(out, "    depth: ", &g->depth, false);
        if (g->width_given) {
            put_key_dist(out, "\n    width: ", &g->width, false);
        }
        put_key_dist(out, "\n    fan_out: ", &g->fan_out, false);
        put_key_dist(out, "\n    fan_in: ", &g->fan_in, false);
        fprintf(out, "\n    max_depth: %u\n    max_width: %u\n", (unsigned)g->max_depth,
                (unsigned)g->max_width);
        break;
    case GRAPH_TEMPLATE:
        break;
    }
    fputs("    nodes:\n", out);
    for (size_t i = 0; i < g->n_nodes; i++)
        put_graph_node(out, w, &g->nodes[i], g->shape == GRAPH_TEMPLATE);
}

/* workload.trace: the file and how it is replayed (its sessions travel to workers apart). */
static void put_trace(FILE *out, const config_trace_t *t) {
    char scale[40];
    format_double(t->time_scale, scale, sizeof scale);
    fputs("  trace:\n    path: ", out);
    put_string(out, t->path ? t->path : "");
    fprintf(out, "\n    format: %s\n    block_size: %u\n    time_scale: %s\n    wrap: %s\n",
            config_trace_format_name(t->format), (unsigned)t->block_size, scale,
            t->wrap ? "true" : "false");
}

static void put_dataset(FILE *out, const config_workload_t *w) {
    const config_dataset_t *d = &w->dataset;
    fputs("  dataset:\n    path: ", out);
    put_string(out, d->path);
    fprintf(out,
            "\n    format: %s\n    min_input_tokens: %u\n    max_input_tokens: %u\n"
            "    max_context_tokens: %u\n    sample: %llu\n    output_tokens: ",
            config_dataset_format_name(d->format), (unsigned)d->min_input_tokens,
            (unsigned)d->max_input_tokens, (unsigned)d->max_context_tokens,
            (unsigned long long)d->sample);
    if (d->output_given)
        put_dist(out, &d->output_tokens, false);
    else
        fputs("replies", out);
    fputc('\n', out);
    if (d->roles == 0)
        return;
    fputs("    roles: [", out);
    for (size_t i = 0, n = 0; i < w->n_roles && i < 64; i++)
        if (d->roles >> i & 1) {
            fputs(n++ ? ", " : "", out);
            put_string(out, w->roles[i]);
        }
    fputs("]\n", out);
}

static void put_workload(FILE *out, const config_workload_t *w) {
    fprintf(out, "workload:\n  kind: %s\n  turns: ", config_workload_kind_name(w->kind));
    put_dist(out, &w->turns, false);
    put_key_dist(out, "\n  input_tokens: ", &w->input_tokens, false);
    put_key_dist(out, "\n  output_tokens: ", &w->output_tokens, false);
    put_key_dist(out, "\n  think_time: ", &w->think_time, true);
    fprintf(out, "\n  system_prompt_tokens: %u\n  roles: [", (unsigned)w->system_prompt_tokens);
    for (size_t i = 0; i < w->n_roles; i++) {
        fputs(i ? ", " : "", out);
        put_string(out, w->roles[i]);
    }
    fputs("]\n", out);
    config_scaffold_write(out, w);
    if (w->kind == WORKLOAD_GRAPH)
        put_graph(out, w);
    if (w->kind == WORKLOAD_TRACE)
        put_trace(out, &w->trace);
    if (w->dataset.path)
        put_dataset(out, w);
    config_compaction_write(out, w);
}

static void put_scheduler(FILE *out, const config_scheduler_t *s) {
    char rate[40], cv[40];
    format_double(s->rate, rate, sizeof rate);
    format_double(s->arrival_cv, cv, sizeof cv);
    fprintf(out, "scheduler:\n  kind: %s\n  concurrency: %u\n  ramp_up: ",
            config_scheduler_kind_name(s->kind), (unsigned)s->concurrency);
    put_duration(out, s->ramp_up_ns);
    fprintf(out, "\n  rate: %s/s\n  arrival: %s\n  arrival_cv: %s\n", rate,
            config_arrival_name(s->arrival), cv);
}

/* The mock section only when the file had one: a file without it stays without it. */
static void put_mock(FILE *out, const config_mock_t *m) {
    if (m->n_options == 0)
        return;
    fputs("mock:\n", out);
    for (size_t i = 0; i < m->n_options; i++) {
        fprintf(out, "  %s: ", m->options[i].key);
        if (m->options[i].quoted)
            put_string(out, m->options[i].value);
        else
            fputs(m->options[i].value, out);
        fputc('\n', out);
    }
}

static int write_config(const config_t *self, FILE *out, bool redact) {
    fputs("# stampede configuration, resolved: every key with its value, defaults included.\n"
          "# API keys are never written, only where they are read from.\n",
          out);
    fprintf(out, "seed: %llu\n", (unsigned long long)self->seed);
    if (self->text_seed)
        fprintf(out, "text_seed: %llu\n", (unsigned long long)self->text_seed);
    put_target(out, &self->target, redact);
    put_workload(out, &self->workload);
    put_scheduler(out, &self->scheduler);
    fputs("limits:\n  duration: ", out);
    put_duration(out, self->limits.duration_ns);
    fprintf(out, "\n  max_sessions: %llu\n  max_requests: %llu\n",
            (unsigned long long)self->limits.max_sessions,
            (unsigned long long)self->limits.max_requests);
    if (self->limits.max_error_pct > 0) {
        fputs("  max_error_pct: ", out);
        put_value(out, self->limits.max_error_pct, false);
        fputc('\n', out);
    }
    fputs("  endpoint_dead_after: ", out);
    put_duration(out, self->limits.endpoint_dead_after_ns);
    fputc('\n', out);
    fputs("warmup: ", out);
    put_duration(out, self->warmup_ns);
    fputs("\nvalidity:\n  max_schedule_lag: ", out);
    put_duration(out, self->validity.max_schedule_lag_ns);
    fputs("\nfleet:\n  heartbeat: ", out);
    put_duration(out, self->fleet.heartbeat_ns);
    fprintf(out, "\n  liveness: %u\n", self->fleet.liveness);
    if (self->fleet.abort_on_worker_loss_pct >= 0)
        fprintf(out, "  abort_on_worker_loss_pct: %.17g\n", self->fleet.abort_on_worker_loss_pct);
    fprintf(out, "  rebalance_on_join: %s", self->fleet.rebalance_on_join ? "true" : "false");
    fputs("\noutput:\n  dir: ", out);
    put_string(out, self->output.dir);
    fprintf(out, "\n  trace: %s\n", self->output.trace ? "true" : "false");
    put_mock(out, &self->mock);
    config_telemetry_write(out, &self->telemetry);
    config_sweep_write(out, &self->sweep);
    config_slo_write(out, &self->slo, &self->capacity);
    config_deployment_write(out, self->deployment);
    return ferror(out) ? -1 : 0;
}

int config_write_yaml(const config_t *self, FILE *out) {
    return write_config(self, out, true);
}

static char *to_yaml(const config_t *self, bool redact) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL)
        return NULL;
    int rc = write_config(self, out, redact);
    if (fclose(out) != 0 || rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

char *config_to_yaml(const config_t *self) {
    return to_yaml(self, true);
}

char *config_to_yaml_unredacted(const config_t *self) {
    return to_yaml(self, false);
}
