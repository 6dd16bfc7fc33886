#include "measurement.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "controller_internal.h"
#include "results.h"

/* Loads path into *cfg with the --target URLs applied. 0 ok, -1 after printing why. */
static int load_config(const controller_t *self, const char *path, config_t *cfg) {
    const controller_options_t *o = &self->options;
    config_error_t err;
    if (config_load_file(cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", self->name, msg);
        return -1;
    }
    if (o->n_targets) {
        char why[512];
        size_t bad = 0;
        if (config_endpoints_check((char **)o->targets, o->n_targets, &bad, why, sizeof why)) {
            fprintf(stderr, "%s: --target %s: %s\n", self->name, o->targets[bad], why);
            config_free(cfg);
            return -1;
        }
        if (config_set_endpoints(cfg, (char **)o->targets, o->n_targets) != 0) {
            fprintf(stderr, "%s: out of memory setting the --target URLs\n", self->name);
            config_free(cfg);
            return -1;
        }
    }
    if (cfg->target.n_endpoints == 0) {
        fprintf(stderr, "%s: %s names no endpoint (target.endpoints) and no --target was given\n",
                self->name, path);
        config_free(cfg);
        return -1;
    }
    return 0;
}

int measurement_check(const controller_t *self, const char *config_path) {
    config_t cfg;
    if (load_config(self, config_path, &cfg) != 0)
        return -1;
    config_free(&cfg);
    return 0;
}

/* The run's output directory, its trace flag and the YAML its workers are sent. */
static int resolve_output(controller_t *self, size_t number, size_t n_runs) {
    const controller_options_t *o = &self->options;
    const char *base = o->out_dir             ? o->out_dir
                       : self->cfg.output.dir ? self->cfg.output.dir
                                              : "results";
    char dir[4096];
    if (n_runs > 1)
        snprintf(dir, sizeof dir, "%s/run-%zu", base, number);
    else
        snprintf(dir, sizeof dir, "%s", base);
    self->out_dir = strdup(dir);
    self->trace = o->trace || self->cfg.output.trace;
    free(self->cfg.output.dir);
    self->cfg.output.dir = strdup(dir);
    self->cfg.output.trace = self->trace;
    /* Headers travel unredacted to the workers (they send them); files get the redacted form. */
    self->config_yaml = config_to_yaml_unredacted(&self->cfg);
    if (!self->out_dir || !self->cfg.output.dir || !self->config_yaml)
        return -1;
    if (results_make_dir(self->out_dir) != 0) {
        fprintf(stderr, "%s: cannot create the output directory %s: %s\n", self->name,
                self->out_dir, strerror(errno));
        return -1;
    }
    return 0;
}

static uint64_t new_run_id(void) {
    uint64_t run_id = 0;
    while (!run_id) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&run_id, sizeof run_id, 1, f) != 1)
            run_id = (uint64_t)controller_now_ns() * 0x9e3779b97f4a7c15ULL;
        if (f)
            fclose(f);
    }
    return run_id;
}

int measurement_begin(controller_t *self, const char *config_path, size_t number, size_t n_runs) {
    measurement_end(self);
    self->config_path = config_path;
    if (load_config(self, config_path, &self->cfg) != 0)
        return -1;
    self->cfg_loaded = true;
    if (resolve_output(self, number, n_runs) != 0)
        return -1;
    self->merge = merge_new(&self->cfg);
    self->ingest = ingest_new();
    if (!self->merge || !self->ingest)
        return -1;
    self->run_id = new_run_id();
    self->phase = PHASE_REGISTER;
    self->deadline_ns = controller_now_ns() + self->options.register_timeout_ns;
    registry_next_run(self);
    return 0;
}

void measurement_end(controller_t *self) {
    report_trace_close(&self->trace_out);
    merge_destroy(&self->merge);
    ingest_destroy(&self->ingest);
    if (self->cfg_loaded)
        config_free(&self->cfg);
    free(self->config_yaml);
    free(self->out_dir);
    /* The run part is the struct's last member: all of it back to zero, whatever it holds. */
    size_t at = offsetof(controller_t, config_path);
    memset((char *)self + at, 0, sizeof *self - at);
    self->phase = PHASE_REGISTER;
}
