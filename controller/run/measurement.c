#include "measurement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envelope.h"
#include "loop.h"
#include "outfile.h"
#include "spool.h"

/* Loads path into *cfg with the --target URLs of o applied. 0 ok, -1 after printing why. */
static int load_config(const run_options_t *o, const char *path, config_t *cfg) {
    const char *name = o->name;
    config_error_t err;
    if (config_load_file(cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", name, msg);
        return -1;
    }
    if (o->n_targets) {
        char why[1024];
        size_t bad = 0;
        if (config_endpoints_check((char **)o->targets, o->n_targets, &bad, why, sizeof why)) {
            fprintf(stderr, "%s: --target %s: %s\n", name, o->targets[bad], why);
            config_free(cfg);
            return -1;
        }
        if (config_set_endpoints(cfg, (char **)o->targets, o->n_targets) != 0) {
            fprintf(stderr, "%s: out of memory setting the --target URLs\n", name);
            config_free(cfg);
            return -1;
        }
        if (config_target_check(&cfg->target, &bad, why, sizeof why) != 0) {
            fprintf(stderr, "%s: --target %s: %s\n", name, o->targets[bad], why);
            config_free(cfg);
            return -1;
        }
    }
    if (o->no_preflight)
        cfg->target.preflight = false;
    if (cfg->target.n_endpoints == 0) {
        fprintf(stderr, "%s: %s names no endpoint (target.endpoints) and no --target was given\n",
                name, path);
        config_free(cfg);
        return -1;
    }
    return 0;
}

int measurement_check(const run_options_t *options, const char *config_path) {
    config_t cfg;
    if (load_config(options, config_path, &cfg) != 0)
        return -1;
    config_free(&cfg);
    return 0;
}

/* The run's output directory, its trace flag and the YAML its workers are sent. */
static int resolve_output(measurement_t *self, const run_options_t *o, size_t number,
                          size_t n_runs) {
    const char *name = o->name;
    const char *base = o->out_dir             ? o->out_dir
                       : self->cfg.output.dir ? self->cfg.output.dir
                                              : "results";
    char dir[4096];
    if (n_runs > 1)
        snprintf(dir, sizeof dir, "%s/run-%zu", base, number);
    else
        snprintf(dir, sizeof dir, "%s", base);
    free(self->cfg.output.dir);
    self->cfg.output.dir = strdup(dir);
    self->cfg.output.trace = o->trace || self->cfg.output.trace;
    /* Headers travel unredacted to the workers (they send them); files get the redacted form. */
    self->config_yaml = config_to_yaml_unredacted(&self->cfg);
    if (!self->cfg.output.dir || !self->config_yaml) {
        fprintf(stderr, "%s: out of memory setting up the run of %s\n", name, self->config_path);
        return -1;
    }
    if (outfile_make_dir(self->cfg.output.dir) != 0) {
        fprintf(stderr, "%s: cannot create the output directory %s: %s\n", name,
                self->cfg.output.dir, strerror(errno));
        return -1;
    }
    return 0;
}

static uint64_t new_run_id(void) {
    uint64_t run_id = 0;
    while (!run_id) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&run_id, sizeof run_id, 1, f) != 1)
            run_id = (uint64_t)loop_now_ns() * 0x9e3779b97f4a7c15ULL;
        if (f)
            fclose(f);
    }
    return run_id;
}

/* The merge, the ingest and the client series of a run whose config is loaded; false when out of
 * memory (measurement_destroy frees what was made). */
static bool new_collectors(measurement_t *self) {
    self->merge = merge_new(&self->cfg);
    self->ingest = ingest_new();
    self->client_series = client_series_new();
    return self->merge && self->ingest && self->client_series;
}

measurement_t *measurement_new(const run_options_t *options, const char *config_path, size_t number,
                               size_t n_runs) {
    const char *name = options->name;
    measurement_t *self = calloc(1, sizeof *self);
    if (!self) {
        fprintf(stderr, "%s: out of memory for run %zu\n", name, number);
        return NULL;
    }
    self->options = *options;
    self->config_path = config_path;
    if (load_config(options, config_path, &self->cfg) != 0) {
        measurement_destroy(&self);
        return NULL;
    }
    self->cfg_loaded = true;
    if (resolve_output(self, options, number, n_runs) != 0) {
        measurement_destroy(&self);
        return NULL;
    }
    if (!new_collectors(self)) {
        fprintf(stderr, "%s: out of memory setting up run %zu\n", name, number);
        measurement_destroy(&self);
        return NULL;
    }
    self->id = new_run_id();
    self->phase = PHASE_REGISTER;
    self->deadline_ns = loop_now_ns() + options->register_timeout_ns;
    return self;
}

int measurement_add_sink(measurement_t *self, run_sink_t sink) {
    if (self->n_sinks >= RUN_MAX_SINKS)
        return -1;
    self->sinks[self->n_sinks++] = sink;
    return 0;
}

void measurement_abort(measurement_t *self, const char *fmt, ...) {
    if (self->abort_reason[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->abort_reason, sizeof self->abort_reason, fmt, ap);
    va_end(ap);
    self->phase = PHASE_OVER;
}

static void say(const run_link_t *link, const char *name, const char *fmt, va_list ap) {
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (link && link->say)
        link->say(link->arg, msg);
    else
        fprintf(stderr, "%s: %s\n", name ? name : "run", msg);
}

void measurement_link_say(const run_link_t *link, const char *name, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say(link, name, fmt, ap);
    va_end(ap);
}

void measurement_say(measurement_t *self, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say(&self->link, self->options.name, fmt, ap);
    va_end(ap);
}

int measurement_send(measurement_t *self, run_worker_t *w, Stampede__Envelope *env) {
    return self->link.send ? self->link.send(self->link.arg, w, env, false) : -1;
}

int measurement_send_stop(measurement_t *self, run_worker_t *w, const char *reason, bool cancel,
                          bool abandon) {
    Stampede__Stop stop;
    Stampede__Envelope env;
    envelope_stop(&env, &stop, self->id, reason, cancel, abandon);
    return measurement_send(self, w, &env);
}

uint32_t measurement_inflight(const measurement_t *self) {
    return self->link.inflight ? self->link.inflight(self->link.arg) : 0;
}

int64_t measurement_heartbeat_ns(const measurement_t *self) {
    return self->cfg.fleet.heartbeat_ns > 0 ? self->cfg.fleet.heartbeat_ns
                                            : MEASUREMENT_HEARTBEAT_NS;
}

int64_t measurement_silence_ns(const measurement_t *self) {
    uint32_t liveness = self->cfg.fleet.liveness ? self->cfg.fleet.liveness : MEASUREMENT_LIVENESS;
    return measurement_heartbeat_ns(self) * liveness;
}

bool measurement_logged(uint64_t failures) {
    return failures <= MEASUREMENT_LOGGED_FIRST || failures % 1000 == 0;
}

void measurement_refuse_number(measurement_t *self, run_worker_t *w, const char *what,
                               const char *why) {
    if (!w->refused++)
        snprintf(w->refused_first, sizeof w->refused_first, "%s: %s", what, why);
    if (measurement_logged(w->refused))
        measurement_say(self,
                        "worker %s: refused %s outside what the plan allows: %s (%" PRIu64
                        " from this worker so far; the run is invalid)",
                        w->name, what, why, w->refused);
}

void measurement_renew_id(measurement_t *self) {
    uint64_t old = self->id;
    while (self->id == old)
        self->id = new_run_id();
}

measurement_t *measurement_restore(const char *name, const char *source, const char *yaml,
                                   const char *out_dir, uint64_t run_id) {
    measurement_t *self = calloc(1, sizeof *self);
    if (!self) {
        fprintf(stderr, "%s: out of memory\n", name);
        return NULL;
    }
    self->config_path = source;
    config_error_t err;
    if (config_load_string(&self->cfg, yaml, strlen(yaml), source, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: the run's config in %s does not load: %s\n", name, source, msg);
        free(self);
        return NULL;
    }
    self->cfg_loaded = true;
    self->options = (run_options_t){.name = name, .out_dir = out_dir};
    if (resolve_output(self, &self->options, 1, 1) != 0) {
        measurement_destroy(&self);
        return NULL;
    }
    if (!new_collectors(self)) {
        fprintf(stderr, "%s: out of memory setting up the run\n", name);
        measurement_destroy(&self);
        return NULL;
    }
    self->id = run_id;
    self->phase = PHASE_RUN;
    return self;
}

void measurement_destroy(measurement_t **self_p) {
    measurement_t *self = *self_p;
    if (!self)
        return;
    report_trace_close(&self->trace_out);
    spool_writer_close(&self->journal);
    telemetry_destroy(&self->telemetry);
    merge_destroy(&self->merge);
    ingest_destroy(&self->ingest);
    client_series_destroy(&self->client_series);
    if (self->cfg_loaded)
        config_free(&self->cfg);
    free(self->config_yaml);
    free(self->window_starts);
    json_decref(self->server_figures);
    free(self->failing_since_ns);
    free(self->server_said);
    self->server_said = NULL;
    free(self->losses);
    free(self);
    *self_p = NULL;
}
