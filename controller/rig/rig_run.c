/* A run of the rig on its group, from its start to its row in the archive: a plain run on the
 * fleet, or a sweep (controller/sweep/sweep_run.h, the controller's own driver of levels) whose
 * repetitions run one after another on the same group, the group held between them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_target.h"
#include "loop.h"
#include "outfile.h"
#include "redact.h"
#include "report.h"
#include "rig_internal.h"

#define RIG_LIVE_EVERY_NS 1000000000LL

/* The end table a run prints on stdout goes to DIR/table.txt as well as it would to a
 * controller's terminal: its followers get it, and fetch brings it. The saved stdout, or -1. */
static int capture_stdout(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/" RIG_TABLE_FILE, dir);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = outfile_open(path, 0);
    if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        if (fd >= 0)
            close(fd);
        if (saved >= 0)
            close(saved);
        return -1;
    }
    close(fd);
    return saved;
}

static void release_stdout(int saved) {
    if (saved < 0)
        return;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
}

/* The queued file of a run, kept as DIR/workload.yaml with the secrets its config holds (secret
 * header values, a proxy's URL) replaced by REDACT_MARK: the queued copy is removed when the run
 * ends, and results.json's run.config names this one. 0 kept, -1 not (said in the log). */
static int keep_workload(rig_t *self, const measurement_t *run, const char *queued,
                         const char *kept) {
    size_t len;
    char *text = outfile_read_all(queued, &len);
    size_t cap = 3 * len + 1; /* a secret is at least REDACT_MIN_LEN bytes, the mark 10 */
    char *redacted = text ? malloc(cap) : NULL;
    int fd = redacted ? outfile_open(kept, 0) : -1;
    int rc = -1;
    if (fd >= 0) {
        memcpy(redacted, text, len + 1);
        const config_target_t *t = &run->cfg.target;
        for (size_t i = 0; i < t->n_headers; i++)
            if (config_header_is_secret(t->headers[i].name))
                redact_text(redacted, cap, t->headers[i].value);
        redact_text(redacted, cap, t->proxy_url);
        size_t n = strlen(redacted);
        rc = write(fd, redacted, n) == (ssize_t)n ? 0 : -1;
        rc = close(fd) == 0 ? rc : -1;
    }
    if (rc != 0)
        fleet_say(self->fleet, "cannot keep %s: %s", kept, strerror(errno ? errno : EIO));
    free(redacted);
    free(text);
    return rc;
}

uint32_t rig_run_share(rig_t *self, const rig_group_t *group) {
    uint32_t workers = fleet_workers_connected(self->fleet), free = fleet_workers_free(self->fleet);
    uint32_t groups = self->config.n_groups ? (uint32_t)self->config.n_groups : 1;
    uint32_t share = group && group->workers ? group->workers : (workers + groups - 1) / groups;
    share = share ? share : 1;
    /* never 0 (fleet_start's "every worker"): a level whose workers were all lost waits for one */
    return share <= free || !free ? share : free;
}

bool rig_run_can_start(rig_t *self, const rig_group_t *group) {
    uint32_t free = fleet_workers_free(self->fleet);
    if (!group || !group->workers) /* the rig's share: whatever is free, one at least */
        return free > 0;
    uint32_t connected = fleet_workers_connected(self->fleet);
    uint32_t want = group->workers < connected ? group->workers : connected;
    return free > 0 && free >= want;
}

/* The state a run ended in, from its exit status. */
static const char *end_state(const rig_active_t *a, int rc) {
    if (a->cancelled_by[0])
        return "cancelled";
    if (fleet_signals())
        return "interrupted";
    if (!a->started)
        return "failed";
    return rc == 0 || rc == 3 ? "done" : "failed";
}

/* A run that could not start at all: its row says why, its followers are told. */
static void start_failed(rig_t *self, rig_active_t *a, int64_t id, const char *why) {
    sweep_run_destroy(&a->sweep);
    memset(a, 0, sizeof *a);
    archive_finished(self->archive, id, "failed", 1, why);
    rig_tell_followers(self, id, rig_end_event(self, id));
}

/* A run (a plain run, or one repetition of the sweep) of a's file, on share workers. */
static measurement_t *new_run(rig_t *self, rig_active_t *a, uint32_t share) {
    run_options_t o = {.name = self->options.name,
                       .targets = (const char *const *)a->target->urls,
                       .n_targets = a->target->n_urls,
                       .out_dir = a->dir,
                       .allow_invalid = true,
                       .expect_workers = share,
                       .register_timeout_ns = 60000000000LL};
    measurement_t *run = measurement_new(&o, a->workload, 1, 1);
    if (run && a->kept[0])
        run->config_path = a->kept;
    return run;
}

/* Hands run to the fleet on share workers; its lines carry a's label, a sweep's repetition the
 * sweep's hooks (its drain bound, its live line). 0, or -1 (the fleet holds all it can). */
static int launch(rig_t *self, rig_active_t *a, measurement_t *run, uint32_t share) {
    if (fleet_start(self->fleet, run, share) != 0)
        return -1;
    fleet_hooks_t hooks = a->sweep ? sweep_run_hooks(a->sweep) : (fleet_hooks_t){0};
    fleet_set_run_hooks(self->fleet, run, a->sweep ? &hooks : NULL, a->label);
    a->run = run;
    a->workers = share;
    return 0;
}

/* The sweep's repetition a->rep of its current level, on share workers. 0, or -1 said. */
static int launch_repetition(rig_t *self, rig_active_t *a, measurement_t *run, uint32_t share) {
    if (!run)
        run = new_run(self, a, share);
    if (!run || sweep_run_prepare(a->sweep, run, a->rep) != 0 || launch(self, a, run, share) != 0) {
        fleet_say(self->fleet, "%s: repetition %u of its level could not start", a->label,
                  (unsigned)a->rep);
        measurement_destroy(&run);
        return -1;
    }
    return 0;
}

void rig_run_start(rig_t *self, rig_active_t *a, int64_t id) {
    memset(a, 0, sizeof *a);
    archive_lookup(self->archive, id, a->group, sizeof a->group, a->user, sizeof a->user, NULL, 0);
    archive_workload_path(self->archive, id, a->workload, sizeof a->workload);
    archive_run_dir(self->archive, id, a->dir, sizeof a->dir);
    snprintf(a->label, sizeof a->label, "run %lld", (long long)id);
    if (!(a->target = rig_config_group(&self->config, a->group))) {
        start_failed(self, a, id, "its group is no longer in the rig's config");
        return;
    }
    uint32_t share = rig_run_share(self, a->target);
    measurement_t *run = new_run(self, a, share);
    if (!run) {
        start_failed(self, a, id, "the workload did not load at its start (serve's log says why)");
        return;
    }
    snprintf(a->kept, sizeof a->kept, "%s/" RIG_WORKLOAD_FILE, a->dir);
    if (keep_workload(self, run, a->workload, a->kept) == 0)
        run->config_path = a->kept;
    else
        a->kept[0] = '\0';
    bool sweep = run->cfg.sweep.axis != SWEEP_AXIS_NONE;
    if (sweep && (a->sweep = sweep_run_new(self->fleet, run, NULL)))
        sweep_run_set_label(a->sweep, a->label);
    if (sweep && (!a->sweep || sweep_run_next_level(a->sweep) <= 0)) {
        measurement_destroy(&run);
        start_failed(self, a, id,
                     "the sweep's first level could not be set up (serve's log says why)");
        return;
    }
    a->rep = 1;
    if (sweep ? launch_repetition(self, a, run, share) != 0 : launch(self, a, run, share) != 0) {
        if (!sweep)
            measurement_destroy(&run);
        start_failed(self, a, id, "its first run could not start (serve's log says why)");
        return;
    }
    a->id = id;
    a->since_ns = loop_now_ns();
    archive_started(self->archive, id, share);
    fleet_say(self->fleet, "run %lld of %s on %s (%s%s) starts on %u worker%s", (long long)id,
              a->user, a->group, a->workload, sweep ? ", a sweep" : "", share,
              share == 1 ? "" : "s");
    rig_page_live_begin(&a->page, id, a->user, a->group);
    rig_tell_followers(
        self, id,
        json_pack("{s:s, s:I, s:s}", "event", "started", "id", (json_int_t)id, "group", a->group));
}

/* The end: its row (state, note, what its directory holds), its followers told, retention. */
static void record_end(rig_t *self, rig_active_t *a, int rc) {
    int64_t id = a->id;
    const char *state = end_state(a, rc);
    if (!a->note[0] && a->cancelled_by[0])
        snprintf(a->note, sizeof a->note, "cancelled by %s", a->cancelled_by);
    archive_finished(self->archive, id, state, rc, a->note[0] ? a->note : NULL);
    fleet_say(self->fleet, "run %lld %s (exit status %d)", (long long)id, state, rc);
    sweep_run_destroy(&a->sweep);
    memset(a, 0, sizeof *a);
    rig_tell_followers(self, id, rig_end_event(self, id));
    int removed = archive_retain(self->archive, self->config.keep_runs, self->config.keep_age_s);
    if (removed > 0)
        fleet_say(self->fleet, "retention removed %d run%s", removed, removed == 1 ? "" : "s");
}

/* The fleet's end of a's run in progress (its results, or a repetition's figures handed to the
 * sweep): its exit status; its start instant and abort reason kept. */
static int end_run(rig_t *self, rig_active_t *a, bool *started) {
    measurement_t *run = a->run;
    int rc = fleet_finish(self->fleet, run, started);
    a->started |= *started;
    if (run->start_unix_ns && !a->start_kept) {
        archive_set_start(self->archive, a->id, run->start_unix_ns);
        a->start_kept = true;
    }
    if (run->abort_reason[0] && !a->note[0] && !a->cancelled_by[0]) /* a cancel says who */
        snprintf(a->note, sizeof a->note, "%s", run->abort_reason);
    measurement_destroy(&a->run);
    return rc;
}

/* A plain run over: its results and its end table (into its directory), its row. */
static void end_plain(rig_t *self, rig_active_t *a) {
    bool started;
    int table = capture_stdout(a->dir);
    int rc = end_run(self, a, &started);
    release_stdout(table);
    record_end(self, a, rc);
}

/* The sweep over: its results.json, reports and end table (into its directory), its row. */
static void end_sweep(rig_t *self, rig_active_t *a, bool interrupted) {
    int table = capture_stdout(a->dir);
    if (sweep_run_finish(a->sweep, interrupted) != 0 && !a->status)
        a->status = 1;
    release_stdout(table);
    record_end(self, a, interrupted && fleet_signals() ? 130 : a->status);
}

/* A repetition of the sweep over: the next repetition of its level, else its next level (on the
 * share of the fleet as it is now: a worker that registered since is taken in), else the end.
 * A cancel, an interrupt or a repetition that could not start ends the sweep, its level marked
 * interrupted. */
static void next_repetition(rig_t *self, rig_active_t *a) {
    bool started;
    int rc = end_run(self, a, &started);
    if (!a->status)
        a->status = rc;
    bool go_on = started && !a->cancelled_by[0] && !fleet_signals();
    if (go_on && a->rep < sweep_run_spec(a->sweep)->repeat) {
        a->rep++;
        if (launch_repetition(self, a, NULL, a->workers) == 0)
            return;
        go_on = false;
        a->status = a->status ? a->status : 1;
    }
    sweep_run_end_level(a->sweep, !go_on);
    int got = go_on ? sweep_run_next_level(a->sweep) : 0;
    if (got > 0) {
        a->rep = 1;
        uint32_t share = rig_run_share(self, a->target);
        if (share != a->workers)
            fleet_say(self->fleet, "%s: its next level runs on %u worker%s (was %u)", a->label,
                      share, share == 1 ? "" : "s", a->workers);
        if (launch_repetition(self, a, NULL, share) == 0)
            return;
        sweep_run_end_level(a->sweep, true);
        got = -1;
    }
    if (got < 0 && !a->status)
        a->status = 1;
    end_sweep(self, a, a->cancelled_by[0] || fleet_signals());
}

/* After every turn of the fleet, for a run in progress: its followers get the live line (a
 * sweep's names its level and repetition), the page its figures, and a cancelled run is
 * stopped. */
static void tend(rig_t *self, rig_active_t *a) {
    measurement_t *run = a->run;
    int64_t now = loop_now_ns();
    if (run->phase == PHASE_RUN && now >= a->next_live_ns) {
        a->next_live_ns = now + RIG_LIVE_EVERY_NS;
        live_t live;
        char line[512];
        merge_live(run->merge, now, measurement_inflight(run), &live);
        live.duration_s = (double)run->cfg.limits.duration_ns / 1e9;
        if (a->sweep) {
            sweep_run_live_line(a->sweep, now, &live, line, sizeof line);
            size_t len = strcspn(line, "|"); /* "level 1/2 concurrency 4 rep 1/1 | ..." */
            while (len > 0 && line[len - 1] == ' ')
                len--;
            snprintf(a->page.phase, sizeof a->page.phase, "%.*s", (int)len, line);
        } else {
            report_live_line(&live, line, sizeof line);
        }
        live.elapsed_s = (double)(now - a->since_ns) / 1e9; /* the page: since the run's start */
        rig_page_live_add(&a->page, &live);
        rig_tell_followers(
            self, a->id,
            json_pack("{s:s, s:I, s:s}", "event", "live", "id", (json_int_t)a->id, "line", line));
    }
    if (a->cancelled_by[0] && !a->cancel_told) {
        a->cancel_told = true;
        char why[256];
        snprintf(why, sizeof why, "run %lld cancelled by %s", (long long)a->id, a->cancelled_by);
        fleet_stop(self->fleet, run, why);
    }
}

void rig_run_turn(rig_t *self, rig_active_t *a) {
    if (!fleet_over(self->fleet, a->run))
        tend(self, a);
    else if (a->sweep)
        next_repetition(self, a);
    else
        end_plain(self, a);
}
