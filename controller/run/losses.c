#include "losses.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The run's full load: its concurrency, or its rate. */
static double losses_full_load(const measurement_t *run) {
    return run->cfg.scheduler.kind == SCHEDULER_RATE ? run->cfg.scheduler.rate
                                                     : (double)run->cfg.scheduler.concurrency;
}

/* Sessions counted lost over the run. */
static uint64_t losses_lost_sessions(const measurement_t *run) {
    uint64_t n = 0;
    for (size_t i = 0; i < run->n_losses; i++)
        n += run->losses[i].lost_sessions;
    return n;
}

/* The end of loss i's shortfall. */
static int64_t loss_end(const run_loss_t *loss, int64_t end_ns) {
    int64_t to = loss->taken_over ? loss->to_ns : end_ns;
    return to < end_ns ? to : end_ns;
}

/* The share of the load missing at instant t. */
static double missing_at(const measurement_t *run, int64_t t, int64_t end_ns) {
    double missing = 0;
    for (size_t i = 0; i < run->n_losses; i++) {
        const run_loss_t *loss = &run->losses[i];
        if (loss->from_ns <= t && t < loss_end(loss, end_ns))
            missing += loss->share;
    }
    return missing > 1 ? 1 : missing;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The load held at instant t (concurrency rounded to a whole slot). */
static double held_at(const measurement_t *run, int64_t t, int64_t end_ns) {
    double held = losses_full_load(run) * (1 - missing_at(run, t, end_ns));
    return (run->cfg.scheduler.kind == SCHEDULER_RATE) ? held : round(held);
}

/* Calls fn for each stretch [from, to) of constant load from the start to end_ns. */
static void each_stretch(const measurement_t *run, int64_t end_ns,
                         void (*fn)(void *arg, int64_t from, int64_t to, double load), void *arg) {
    size_t n = 0;
    int64_t *edges = calloc(2 * run->n_losses + 2, sizeof *edges);
    if (!edges)
        return;
    edges[n++] = run->start_ns;
    edges[n++] = end_ns;
    for (size_t i = 0; i < run->n_losses; i++) {
        edges[n++] = run->losses[i].from_ns;
        edges[n++] = loss_end(&run->losses[i], end_ns);
    }
    qsort(edges, n, sizeof *edges, cmp_i64);
    int64_t from = run->start_ns;
    double load = held_at(run, from, end_ns);
    for (size_t i = 0; i < n; i++) {
        int64_t t = edges[i];
        if (t <= from || t > end_ns)
            continue;
        double next = t < end_ns ? held_at(run, t, end_ns) : NAN;
        if (t == end_ns || next != load) {
            fn(arg, from, t, load);
            from = t;
            load = next;
        }
    }
    free(edges);
}

typedef struct shortfall {
    double lowest;
    int64_t short_ns;
    double full;
} shortfall_t;

static void add_shortfall(void *arg, int64_t from, int64_t to, double load) {
    shortfall_t *s = arg;
    if (load >= s->full)
        return;
    s->short_ns += to - from;
    if (load < s->lowest)
        s->lowest = load;
}

void losses_label(const measurement_t *run, int64_t end_ns, char *buf, size_t len) {
    shortfall_t s = {.lowest = losses_full_load(run), .full = losses_full_load(run)};
    buf[0] = '\0';
    if (!run->n_losses || end_ns <= run->start_ns)
        return;
    each_stretch(run, end_ns, add_shortfall, &s);
    if (s.short_ns <= 0)
        return;
    if ((run->cfg.scheduler.kind == SCHEDULER_RATE))
        snprintf(buf, len, "held %.3g/s for %.1f s", s.lowest, s.short_ns / 1e9);
    else
        snprintf(buf, len, "held %.0f for %.1f s", s.lowest, s.short_ns / 1e9);
}

typedef struct stretch_json {
    const measurement_t *run;
    json_t *array;
} stretch_json_t;

static void add_stretch_json(void *arg, int64_t from, int64_t to, double load) {
    stretch_json_t *s = arg;
    int64_t start = s->run->start_ns;
    bool rate = s->run->cfg.scheduler.kind == SCHEDULER_RATE;
    json_array_append_new(s->array,
                          json_pack("{s:f, s:f, s:o}", "from_s", (from - start) / 1e9, "to_s",
                                    (to - start) / 1e9, rate ? "rate" : "concurrency",
                                    rate ? json_real(load) : json_integer((json_int_t)load)));
}

void losses_json(const measurement_t *run, int64_t end_ns, json_t *level) {
    json_t *losses = json_array();
    bool degraded = false;
    for (size_t i = 0; i < run->n_losses; i++) {
        const run_loss_t *l = &run->losses[i];
        degraded |= l->taken_over && l->share > 0;
        json_array_append_new(
            losses,
            json_pack("{s:s, s:i, s:f, s:f, s:o, s:b, s:f, s:I}", "worker", l->worker, "index",
                      (int)l->index, "from_s", (l->from_ns - run->start_ns) / 1e9, "declared_s",
                      (l->declared_ns - run->start_ns) / 1e9, "to_s",
                      l->taken_over ? json_real((l->to_ns - run->start_ns) / 1e9) : json_null(),
                      "taken_over", l->taken_over, "share", l->share, "lost_sessions",
                      (json_int_t)l->lost_sessions));
    }
    json_object_set_new(level, "degraded", json_boolean(degraded));
    json_object_set_new(level, "ended_on_worker_loss",
                        run->loss_abort[0] ? json_string(run->loss_abort) : json_null());
    json_object_set_new(level, "worker_losses", losses);
    json_object_set_new(level, "lost_sessions",
                        json_integer((json_int_t)losses_lost_sessions(run)));
    stretch_json_t s = {run, json_array()};
    if (end_ns > run->start_ns)
        each_stretch(run, end_ns, add_stretch_json, &s);
    json_object_set_new(level, "load_held", s.array);
    json_object_set_new(level, "workers", losses_workers_json(run));
}

void losses_print(const measurement_t *run, FILE *out) {
    for (size_t i = 0; i < run->n_losses; i++) {
        const run_loss_t *l = &run->losses[i];
        fprintf(out, "Worker lost: %s (worker %u, %.1f %% of the load) silent from %.1f s, ",
                l->worker, l->index, l->share * 100, (l->from_ns - run->start_ns) / 1e9);
        if (l->taken_over)
            fprintf(out, "its share taken over at %.1f s (DEGRADED for %.1f s)",
                    (l->to_ns - run->start_ns) / 1e9, (l->to_ns - l->from_ns) / 1e9);
        else
            fprintf(out, "its share NOT taken over");
        fprintf(out, "; %" PRIu64 " session%s lost\n", l->lost_sessions,
                l->lost_sessions == 1 ? "" : "s");
    }
    if (run->loss_abort[0])
        fprintf(out, "Run ended early: %s\n", run->loss_abort);
}

/* Whether a worker may join the run in progress (fleet.rebalance_on_join and a run that can
 * give it a share). */
json_t *losses_workers_json(const measurement_t *run) {
    uint32_t carried = 0;
    for (size_t i = 0; i < run->n_workers; i++)
        carried += run_worker_in_run(run->workers[i]) && run->workers[i]->state != RUN_WORKER_LOST;
    return json_pack("{s:i, s:i, s:i, s:i, s:i}", "expected", (int)run->options.expect_workers,
                     "started", (int)run->started_with, "joined",
                     (int)(run->in_run - run->started_with), "lost", (int)run->n_losses,
                     "carried_by", (int)carried);
}
