#include "console.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client_series.h"
#include "controller_internal.h"
#include "sweep_run.h"

void console_clear(controller_t *self) {
    if (self->live_shown) {
        fputs("\r\033[K", stderr);
        self->live_shown = false;
    }
}

void console_say(controller_t *self, const char *fmt, ...) {
    console_clear(self);
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", self->name, msg);
}

/* Says once per second while lines are being dropped, so a stalled trace is seen during the run. */
static void say_trace_drops(controller_t *self) {
    measurement_t *run = self->run;
    uint64_t dropped = run->trace_out ? report_trace_dropped(run->trace_out) : 0;
    if (dropped <= run->trace_dropped_said)
        return;
    int error = report_trace_error(run->trace_out);
    if (error)
        console_say(self, "cannot write %s/requests.jsonl: %s; %" PRIu64 " lines dropped so far",
                    run->cfg.output.dir, strerror(error), dropped);
    else
        console_say(self,
                    "the trace writer cannot keep up (slow disk or unread pipe): %" PRIu64
                    " lines dropped so far",
                    dropped);
    run->trace_dropped_said = dropped;
}

void console_live(controller_t *self, int64_t now) {
    say_trace_drops(self);
    live_t live;
    merge_live(self->run->merge, now, registry_inflight(self), &live);
    live.silent = registry_silent(self, now);
    live.duration_s = (double)self->run->cfg.limits.duration_ns / 1e9;
    client_series_add(self->run->client_series, live.elapsed_s, live.in_flight,
                      live.requests_per_s);
    char line[512];
    if (self->sweep) /* the level, its phase and what is left of it first */
        sweep_run_live_line(self->sweep, now, &live, line, sizeof line);
    else
        report_live_line(&live, line, sizeof line);
    if (self->tty) {
        fprintf(stderr, "\r\033[K%s", line);
        self->live_shown = true;
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        fprintf(stderr, "[%02d:%02d:%02d] %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, line);
    }
}
