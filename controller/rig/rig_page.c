#include "rig_page.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_svg.h"

void rig_page_live_begin(rig_page_live_t *self, int64_t id, const char *user, const char *group) {
    memset(self, 0, sizeof *self);
    self->id = id;
    snprintf(self->user, sizeof self->user, "%s", user ? user : "");
    snprintf(self->group, sizeof self->group, "%s", group ? group : "");
    self->last.ttft_p50_ms = -1;
}

void rig_page_live_add(rig_page_live_t *self, const live_t *live) {
    self->last = *live;
    if (self->n == RIG_PAGE_SAMPLES) { /* the oldest second goes */
        memmove(self->t_s, self->t_s + 1, (RIG_PAGE_SAMPLES - 1) * sizeof *self->t_s);
        memmove(self->requests_per_s, self->requests_per_s + 1,
                (RIG_PAGE_SAMPLES - 1) * sizeof *self->requests_per_s);
        self->n--;
    }
    self->t_s[self->n] = live->elapsed_s;
    self->requests_per_s[self->n++] = live->requests_per_s;
}

/* The value of key in a query string ("user=alice&group=g1"), decoded into out; "" when absent. */
static void query_value(const char *query, size_t len, const char *key, char *out, size_t cap) {
    size_t klen = strlen(key), o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && query[end] != '&')
            end++;
        if (end - i > klen && !memcmp(query + i, key, klen) && query[i + klen] == '=') {
            for (size_t j = i + klen + 1; j < end && o + 1 < cap; j++) {
                char c = query[j];
                if (c == '+')
                    c = ' ';
                else if (c == '%' && j + 2 < end + 1 && isxdigit((unsigned char)query[j + 1]) &&
                         isxdigit((unsigned char)query[j + 2])) {
                    char hex[3] = {query[j + 1], query[j + 2], 0};
                    c = (char)strtol(hex, NULL, 16);
                    j += 2;
                }
                out[o++] = c;
            }
            out[o] = '\0';
            return;
        }
        i = end + 1;
    }
}

static void text(buffer_t *out, const char *s) {
    report_svg_text(out, s ? s : "");
}

static void cell_text(buffer_t *out, json_t *row, const char *key) {
    buffer_appendf(out, "<td>");
    json_t *v = json_object_get(row, key);
    if (json_is_string(v))
        text(out, json_string_value(v));
    else if (json_is_integer(v))
        buffer_appendf(out, "%lld", (long long)json_integer_value(v));
    else
        buffer_appendf(out, "—");
    buffer_appendf(out, "</td>");
}

static void cell_number(buffer_t *out, json_t *row, const char *key, const char *fmt) {
    json_t *v = json_object_get(row, key);
    buffer_appendf(out, "<td class=\"n\">");
    if (json_is_number(v))
        buffer_appendf(out, fmt, json_number_value(v));
    else
        buffer_appendf(out, "—");
    buffer_appendf(out, "</td>");
}

static void cell_time(buffer_t *out, json_t *row, const char *key) {
    json_t *v = json_object_get(row, key);
    char when[32] = "—";
    if (json_is_integer(v)) {
        time_t t = (time_t)json_integer_value(v);
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
    }
    buffer_appendf(out, "<td>%s</td>", when);
}

/* One run in progress: its figures, then a chart of its requests/s. */
static void running_one(buffer_t *out, const rig_page_live_t *live) {
    const live_t *l = &live->last;
    buffer_appendf(out,
                   "<article class=\"run\" id=\"run-%lld\"><table><tr><th>Run</th><th>User</th>"
                   "<th>Group</th><th>Phase</th><th>Elapsed</th><th>In flight</th>"
                   "<th>Requests/s</th><th>Output tokens/s</th><th>TTFT p50</th><th>OK</th>"
                   "<th>Failed</th></tr><tr><td>%lld</td><td>",
                   (long long)live->id, (long long)live->id);
    text(out, live->user);
    buffer_appendf(out, "</td><td>");
    text(out, live->group);
    buffer_appendf(out, "</td><td>");
    text(out, live->phase[0] ? live->phase : "run");
    buffer_appendf(out,
                   "</td><td class=\"n\">%.1f s</td><td class=\"n\">%u</td><td class=\"n\">%.1f"
                   "</td><td class=\"n\">%.0f</td>",
                   l->elapsed_s, l->in_flight, l->requests_per_s, l->output_tokens_per_s);
    if (l->ttft_p50_ms >= 0)
        buffer_appendf(out, "<td class=\"n\">%.1f ms</td>", l->ttft_p50_ms);
    else
        buffer_appendf(out, "<td class=\"n\">—</td>");
    buffer_appendf(out, "<td class=\"n\">%llu</td><td class=\"n\">%llu</td></tr></table>",
                   (unsigned long long)l->requests_ok, (unsigned long long)l->requests_failed);
    char title[96];
    snprintf(title, sizeof title, "Run %lld: requests per second", (long long)live->id);
    report_svg_series_t series = {
        .name = "requests/s", .n = live->n, .x = live->t_s, .y = live->requests_per_s};
    if (!report_svg_lines(out, title, "seconds since the start", "requests/s", &series, 1))
        buffer_appendf(out, "<p>No figure yet.</p>");
    buffer_appendf(out, "</article>");
}

static void running(buffer_t *out, const rig_page_live_t *const *live, size_t n) {
    buffer_appendf(out, "<section id=\"running\"><h2>Running</h2>");
    if (!n)
        buffer_appendf(out, "<p>Nothing is running.</p>");
    for (size_t i = 0; i < n; i++)
        running_one(out, live[i]);
    buffer_appendf(out, "</section>");
}

static void queue(buffer_t *out, archive_t *archive) {
    json_t *rows = archive_queue_json(archive);
    buffer_appendf(out, "<section><h2>Queue</h2>");
    if (!json_array_size(rows)) {
        buffer_appendf(out, "<p>The queue is empty.</p></section>");
        json_decref(rows);
        return;
    }
    buffer_appendf(out, "<table id=\"queue\"><tr><th>Place</th><th>Run</th><th>User</th>"
                        "<th>Group</th><th>Priority</th><th>Submitted (UTC)</th><th>Workload</th>"
                        "<th>Model</th></tr>");
    size_t i;
    json_t *row;
    const char *group = NULL;
    int place = 0;
    json_array_foreach(rows, i, row) { /* rows come by group, then in start order */
        const char *g = json_string_value(json_object_get(row, "target_group"));
        place = group && g && !strcmp(group, g) ? place + 1 : 1;
        group = g;
        buffer_appendf(out, "<tr><td class=\"n\">%d</td>", place);
        cell_text(out, row, "id");
        cell_text(out, row, "user");
        cell_text(out, row, "target_group");
        cell_text(out, row, "priority");
        cell_time(out, row, "submitted_at");
        cell_text(out, row, "workload_name");
        cell_text(out, row, "model");
        buffer_appendf(out, "</tr>");
    }
    buffer_appendf(out, "</table></section>");
    json_decref(rows);
}

static void filter_input(buffer_t *out, const char *name, const char *value) {
    buffer_appendf(out, "<label>%s <input name=\"%s\" value=\"", name, name);
    text(out, value);
    buffer_appendf(out, "\"></label> ");
}

static void archive_table(buffer_t *out, archive_t *archive, const char *user, const char *group,
                          const char *model) {
    buffer_appendf(out, "<section><h2>Archive</h2><form method=\"get\" action=\"/\">");
    filter_input(out, "user", user);
    filter_input(out, "group", group);
    filter_input(out, "model", model);
    buffer_appendf(out, "<button>Filter</button></form>");
    json_t *rows = archive_list_json(archive, *user ? user : NULL, *group ? group : NULL,
                                     *model ? model : NULL, NULL, 500);
    buffer_appendf(out, "<table id=\"archive\"><tr><th>Run</th><th>User</th><th>Group</th>"
                        "<th>Model</th><th>State</th><th>Valid</th><th>Outside load</th>"
                        "<th>Submitted (UTC)</th><th>Workload</th><th>Requests/s</th>"
                        "<th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>Levels</th></tr>");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        long long id = (long long)json_integer_value(json_object_get(row, "id"));
        const char *state = json_string_value(json_object_get(row, "state"));
        bool ran = state && strcmp(state, "queued") && strcmp(state, "running");
        if (ran)
            buffer_appendf(out, "<tr><td><a href=\"/runs/%lld/report.html\">%lld</a></td>", id, id);
        else
            buffer_appendf(out, "<tr><td>%lld</td>", id);
        cell_text(out, row, "user");
        cell_text(out, row, "target_group");
        cell_text(out, row, "model");
        cell_text(out, row, "state");
        json_t *valid = json_object_get(row, "valid"), *shared = json_object_get(row, "shared");
        buffer_appendf(out, "<td>%s</td><td>%s</td>",
                       !json_is_integer(valid)     ? "—"
                       : json_integer_value(valid) ? "yes"
                                                   : "no",
                       !json_is_integer(shared)     ? "—"
                       : json_integer_value(shared) ? "yes"
                                                    : "no");
        cell_time(out, row, "submitted_at");
        cell_text(out, row, "workload_name");
        cell_number(out, row, "requests_per_s", "%.2f");
        cell_number(out, row, "ttft_p50_ms", "%.1f");
        cell_number(out, row, "ttft_p99_ms", "%.1f");
        cell_text(out, row, "levels"); /* a sweep's; its figures left of it are its first level's */
        buffer_appendf(out, "</tr>");
    }
    buffer_appendf(out, "</table><p>%zu run%s.</p></section>", json_array_size(rows),
                   json_array_size(rows) == 1 ? "" : "s");
    json_decref(rows);
}

int rig_page_render(archive_t *archive, const rig_page_live_t *const *live, size_t n,
                    const char *query, size_t query_len, buffer_t *out) {
    char user[128], group[128], model[256];
    query_value(query, query_len, "user", user, sizeof user);
    query_value(query, query_len, "group", group, sizeof group);
    query_value(query, query_len, "model", model, sizeof model);
    buffer_appendf(out, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                        "<title>stampede rig</title><style>"
                        "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
                        "table{border-collapse:collapse;margin:.5em 0}"
                        "th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left}"
                        "td.n{text-align:right;font-variant-numeric:tabular-nums}"
                        "svg{max-width:720px;display:block}"
                        "</style></head><body><h1>stampede rig</h1>");
    running(out, live, n);
    queue(out, archive);
    archive_table(out, archive, user, group, model);
    return buffer_appendf(out, "</body></html>\n") < 0 ? 500 : 200;
}
