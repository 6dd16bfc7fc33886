#include "bounds.h"

#include <inttypes.h>
#include <stdio.h>

/* The span a timestamp of the run may lie in: [start - slack, now + slack]. */
static int64_t slack(const bounds_t *b) {
    int64_t since = b->now_ns > b->start_ns ? b->now_ns - b->start_ns : 0;
    return BOUNDS_CLOCK_SLACK_NS + since / 1000;
}

static bool in_span(const bounds_t *b, int64_t t) {
    return t == 0 || (t >= b->start_ns - slack(b) && t <= b->now_ns + slack(b));
}

/* The timestamps and durations: each one within the run's span. */
static bool times_ok(const bounds_t *b, const request_record_t *rec, char *why, size_t len) {
    const struct {
        const char *name;
        int64_t t;
    } stamps[] = {{"send time", rec->send_ns},
                  {"intended start", rec->intended_ns},
                  {"headers time", rec->headers_ns},
                  {"first token time", rec->first_token_ns},
                  {"first content time", rec->first_content_ns},
                  {"end time", rec->end_ns}};
    for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
        if (!in_span(b, stamps[i].t)) {
            snprintf(why, len, "its %s lies %.1f s from the start, outside the run's span",
                     stamps[i].name, (double)(stamps[i].t - b->start_ns) / 1e9);
            return false;
        }
    }
    if (rec->n_chunks && !in_span(b, rec->chunk_ns[rec->n_chunks - 1])) {
        snprintf(why, len, "its last chunk lies %.1f s from the start, outside the run's span",
                 (double)(rec->chunk_ns[rec->n_chunks - 1] - b->start_ns) / 1e9);
        return false;
    }
    int64_t span = b->now_ns - b->start_ns + 2 * slack(b);
    for (int p = 0; rec->has_phases && p < RECORD_PHASE__COUNT; p++)
        if (rec->phase_ns[p] < 0 || rec->phase_ns[p] > span) {
            snprintf(why, len, "its HTTP phase %s of %.1f s is longer than the run so far",
                     record_phase_name((record_phase_t)p), (double)rec->phase_ns[p] / 1e9);
            return false;
        }
    if (rec->retry_wait_ns > span) {
        snprintf(why, len, "its retry wait of %.1f s is longer than the run so far",
                 (double)rec->retry_wait_ns / 1e9);
        return false;
    }
    return true;
}

/* Tokens from the chunks, in 64 bits (a chunk carries one token at least). */
static uint64_t chunk_tokens(const request_record_t *rec) {
    if (!rec->chunk_tokens)
        return rec->n_chunks;
    uint64_t total = 0;
    for (uint32_t i = 0; i < rec->n_chunks; i++)
        total += rec->chunk_tokens[i] ? rec->chunk_tokens[i] : 1;
    return total;
}

static bool tokens_ok(const request_record_t *rec, char *why, size_t len) {
    const struct {
        const char *name;
        uint64_t n;
    } counts[] = {
        {"requested_input_tokens", rec->requested_input_tokens},
        {"requested_output_tokens", rec->requested_output_tokens},
        {"prompt_tokens", rec->prompt_tokens},
        {"completion_tokens", rec->completion_tokens},
        {"cached_tokens", rec->cached_tokens},
        {"tokens in its chunks", chunk_tokens(rec)},
        {"content and reasoning events", (uint64_t)rec->content_chunks + rec->reasoning_chunks}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].n > BOUNDS_MAX_TOKENS) {
            snprintf(why, len, "%s %" PRIu64 " above the ceiling of %u tokens a request",
                     counts[i].name, counts[i].n, BOUNDS_MAX_TOKENS);
            return false;
        }
    /* Output above the request's max_tokens is not bounded here: the worker reports what the
     * server said, and a server that is not ours may say more (a replay, special or reasoning
     * tokens counted apart); the output-length check reports it as the server's. */
    if (rec->has_usage && rec->cached_tokens > rec->prompt_tokens) {
        snprintf(why, len, "cached_tokens %u above its prompt_tokens %u", rec->cached_tokens,
                 rec->prompt_tokens);
        return false;
    }
    return true;
}

bool bounds_record(const bounds_t *b, const request_record_t *rec, char *why, size_t len) {
    if (b->session_limit && rec->session >= b->session_limit) {
        snprintf(why, len, "session %" PRIu64 " at or past the grant %" PRIu64, rec->session,
                 b->session_limit);
        return false;
    }
    if (b->share && !plan_share_owns(b->share, rec->session)) {
        snprintf(why, len, "session %" PRIu64 " is not of this worker's share", rec->session);
        return false;
    }
    if (rec->endpoint >= b->n_endpoints) {
        snprintf(why, len, "endpoint %u, the run has %zu", rec->endpoint, b->n_endpoints);
        return false;
    }
    if (rec->retries > b->retry_max) {
        snprintf(why, len, "%u retries after 429s, target.retry_429_max is %u", rec->retries,
                 b->retry_max);
        return false;
    }
    return times_ok(b, rec, why, len) && tokens_ok(rec, why, len);
}

bool bounds_loop_times(const bounds_t *b, int64_t cpu_ns, int64_t wall_ns, int64_t wait_ns,
                       char *why, size_t len) {
    int64_t span = b->now_ns - b->start_ns + 2 * slack(b);
    const struct {
        const char *name;
        int64_t ns;
        int64_t lowest;
    } times[] = {{"loop CPU time", cpu_ns, 0},
                 {"loop wall time", wall_ns, 0},
                 {"loop wait time", wait_ns, -1}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (times[i].ns < times[i].lowest || times[i].ns > span) {
            snprintf(why, len, "its %s of %.1f s is outside the run's %.1f s so far", times[i].name,
                     (double)times[i].ns / 1e9, (double)span / 1e9);
            return false;
        }
    return true;
}
