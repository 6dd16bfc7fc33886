#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "loop.h"
#include "mock_spawn.h"
#include "plan.h"
#include "prompt.h"
#include "rng.h"
#include "session.h"
#include "support.h"
#include "workload.h"

#define MS 1000000LL
#define MAX_WORKERS 4
#define GUARD_NS (20000 * MS) /* no test run may take longer than this */

/* A request the fake backend holds: completed by a timer with a deterministic reply. */
typedef struct fake_item {
    struct fake *fake;
    request_record_t *record; /* the executor's, reused after done */
    request_record_t sent;    /* what the record held at submit */
    engine_done_fn done;
    void *arg;
    uint64_t timer;
    int64_t submit_ns;
    char *body;
    char *url;
    char session_header[32];
    uint32_t endpoint;
    bool inflight;
} fake_item_t;

typedef struct fake {
    loop_t *loop;
    int64_t latency_ns;
    int64_t endpoint0_latency_ns; /* 0 = same as the others */
    uint32_t capacity;            /* submit refuses beyond this many in flight; 0 = no limit */
    uint64_t fail_request_id;     /* this request ends with HTTP 500; UINT64_MAX = none */
    uint64_t limit_request_id; /* this request's first limit_times sends get 429; UINT64_MAX none */
    uint32_t limit_times, limited;
    int32_t limit_retry_after_s; /* their Retry-After (-1: none) */
    fake_item_t **items;
    size_t n_items, cap_items;
    uint32_t inflight, max_inflight, refused;
    uint32_t inflight_to[8];
    uint32_t drops_below_full; /* completions after which fewer than `watch_full` stay in flight */
    uint32_t watch_full;
    uint32_t n_endpoints; /* set: check each submit went to a least-loaded endpoint */
    uint32_t not_least;   /* submits that did not */
} fake_t;

static int fake_reply(uint64_t request_id, char *buf, size_t cap) {
    return snprintf(buf, cap, "reply %llu: \"quoted\" back\\slash\nnew line\t\x01 caf\xc3\xa9 end",
                    (unsigned long long)request_id);
}

static void fake_complete(loop_t *loop, uint64_t id, void *arg) {
    fake_item_t *item = arg;
    fake_t *fake = item->fake;
    request_record_t *rec = item->record;
    item->timer = 0;
    item->inflight = false;
    fake->inflight--;
    fake->inflight_to[item->endpoint]--;
    rec->send_ns = item->submit_ns;
    rec->end_ns = loop_now_ns();
    rec->first_token_ns = rec->first_content_ns = rec->end_ns;
    char reply[256];
    int n = fake_reply(rec->request_id, reply, sizeof reply);
    rec->retry_after_s = -1;
    if (rec->request_id == fake->fail_request_id) {
        rec->http_status = 500;
        rec->error = ERROR_HTTP_5XX;
        n = 0;
    } else if (rec->request_id == fake->limit_request_id && fake->limited < fake->limit_times) {
        fake->limited++;
        rec->http_status = 429;
        rec->error = ERROR_HTTP_429;
        rec->retry_after_s = fake->limit_retry_after_s;
        n = 0;
    } else {
        rec->http_status = 200;
        rec->error = ERROR_NONE;
    }
    item->done(item->arg, rec, reply, (size_t)n);
    if (fake->watch_full && fake->inflight < fake->watch_full)
        fake->drops_below_full++;
}

static int fake_submit(void *ctx, const engine_request_t *req, engine_done_fn done, void *arg) {
    fake_t *fake = ctx;
    if (fake->capacity && fake->inflight >= fake->capacity) {
        fake->refused++;
        return -1;
    }
    if (fake->n_items == fake->cap_items) {
        fake->cap_items = fake->cap_items ? fake->cap_items * 2 : 64;
        fake->items = realloc(fake->items, fake->cap_items * sizeof *fake->items);
        assert_non_null(fake->items);
    }
    fake_item_t *item = calloc(1, sizeof *item);
    assert_non_null(item);
    fake->items[fake->n_items++] = item;
    item->fake = fake;
    item->record = req->record;
    item->sent = *req->record;
    item->done = done;
    item->arg = arg;
    item->submit_ns = loop_now_ns();
    item->body = strndup(req->body, req->body_len);
    item->url = strdup(req->url);
    item->endpoint = req->record->endpoint;
    if (req->session_header)
        snprintf(item->session_header, sizeof item->session_header, "%s", req->session_header);
    item->inflight = true;
    assert_true(item->endpoint < 8);
    if (fake->n_endpoints) { /* the first least-loaded endpoint counting from g mod E */
        uint64_t g = req->record->request_id;
        uint32_t best = (uint32_t)(g % fake->n_endpoints);
        for (uint32_t k = 1; k < fake->n_endpoints; k++) {
            uint32_t e = (uint32_t)((g + k) % fake->n_endpoints);
            if (fake->inflight_to[e] < fake->inflight_to[best])
                best = e;
        }
        fake->not_least += best != item->endpoint;
    }
    fake->inflight++;
    fake->inflight_to[item->endpoint]++;
    if (fake->inflight > fake->max_inflight)
        fake->max_inflight = fake->inflight;
    int64_t latency = item->endpoint == 0 && fake->endpoint0_latency_ns ? fake->endpoint0_latency_ns
                                                                        : fake->latency_ns;
    item->timer = loop_timer_at(fake->loop, item->submit_ns + latency, fake_complete, item);
    return 0;
}

static uint32_t fake_inflight_to(void *ctx, uint32_t endpoint) {
    fake_t *fake = ctx;
    return fake->inflight_to[endpoint];
}

static void fake_cancel_all(void *ctx) {
    fake_t *fake = ctx;
    for (size_t i = 0; i < fake->n_items; i++) {
        fake_item_t *item = fake->items[i];
        if (!item->inflight)
            continue;
        loop_timer_cancel(fake->loop, item->timer);
        item->inflight = false;
        fake->inflight--;
        fake->inflight_to[item->endpoint]--;
        item->record->send_ns = item->submit_ns;
        item->record->end_ns = loop_now_ns();
        item->record->error = ERROR_CANCELLED;
        item->done(item->arg, item->record, "", 0);
    }
}

static void fake_free(fake_t *fake) {
    for (size_t i = 0; i < fake->n_items; i++) {
        free(fake->items[i]->body);
        free(fake->items[i]->url);
        free(fake->items[i]);
    }
    free(fake->items);
}

/* W executors on one loop, as W workers would run the same config. */
typedef struct harness {
    loop_t *loop;
    config_t cfg;
    uint32_t workers;
    fake_t fakes[MAX_WORKERS];
    plan_share_t shares[MAX_WORKERS];
    session_executor_t *execs[MAX_WORKERS];
    request_record_t *records;
    size_t n_records, cap_records;
    uint32_t finished;
    uint32_t open[MAX_WORKERS]; /* a worker's sessions whose first request is recorded, not yet
                                 * their last */
    uint32_t max_active;        /* most sessions open on a worker seen by any on_record */
    int64_t start_ns;
    int64_t last_record_ns;
    int64_t finished_ns;
    bool timed_out;
    uint32_t stop_after;          /* stop(cancel) worker 0 after this many records; 0 = never */
    int64_t stop_at_ns;           /* stop(cancel) worker 0 this long after the start; 0 = never */
    engine_t *engine;             /* when set, worker 0 sends through it instead of its fake */
    session_generate_fn generate; /* when set, replaces the workload's session shapes */
    void *generate_arg;
    uint64_t grant;          /* when set, every executor starts with this session grant */
    size_t handover_after;   /* after this many records, worker 1 is lost: 0 and 2 take over */
    uint64_t handover_timer; /* the handover runs from the loop, not inside a record callback */
} harness_t;

typedef struct worker_ctx {
    harness_t *h;
    uint32_t worker;
} worker_ctx_t;

static worker_ctx_t worker_ctx[MAX_WORKERS];

/* Worker 1 (slots 2 and 3 of 6) is lost: it stops, and workers 0 and 2 take one slot each from
 * the grant on, with the grant raised for them, as the controller would (controller/rebalance.c).
 */
static void handover_fire(loop_t *loop, uint64_t id, void *arg) {
    harness_t *h = arg;
    h->handover_timer = 0;
    /* Every slot waits at the grant: worker 0 (slots 0, 1) started sessions 0, 1, 6 and 7. */
    session_progress_t p;
    session_executor_progress(h->execs[0], &p);
    assert_true(p.held);
    assert_int_equal(p.limit, 12);
    assert_int_equal(p.frontier, 8);
    assert_int_equal(p.started, 4);
    session_executor_stop(h->execs[1], true);
    assert_int_equal(session_executor_adopt(h->execs[0], 2, 6, h->grant, 0), 0);
    assert_int_equal(session_executor_adopt(h->execs[2], 3, 6, h->grant, 0), 0);
    session_executor_set_limit(h->execs[0], 1000);
    session_executor_set_limit(h->execs[2], 1000);
}

static void on_record(void *arg, const request_record_t *rec) {
    worker_ctx_t *ctx = arg;
    harness_t *h = ctx->h;
    if (h->n_records == h->cap_records) {
        h->cap_records = h->cap_records ? h->cap_records * 2 : 256;
        h->records = realloc(h->records, h->cap_records * sizeof *h->records);
        assert_non_null(h->records);
    }
    request_record_t *copy = &h->records[h->n_records++];
    *copy = *rec;
    copy->worker = ctx->worker;
    copy->chunk_ns = NULL;
    copy->chunk_tokens = NULL;
    uint32_t *open = &h->open[ctx->worker];
    *open += rec->node == 0; /* a session's root (its first turn) is recorded before the rest */
    if (*open > h->max_active)
        h->max_active = *open;
    *open -= rec->session_end;
    h->last_record_ns = loop_now_ns();
    if (h->stop_after && h->n_records == h->stop_after)
        session_executor_stop(h->execs[0], true);
    if (h->handover_after && h->n_records == h->handover_after)
        h->handover_timer = loop_timer_at(h->loop, loop_now_ns(), handover_fire, h);
}

static void on_finished(void *arg) {
    worker_ctx_t *ctx = arg;
    harness_t *h = ctx->h;
    h->finished_ns = loop_now_ns();
    if (++h->finished == h->workers)
        loop_stop(h->loop);
}

static void stop_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_stop(arg, true);
}

static void guard_fire(loop_t *loop, uint64_t id, void *arg) {
    harness_t *h = arg;
    h->timed_out = true;
    loop_stop(loop);
}

static void harness_init(harness_t *h, uint32_t endpoints) {
    memset(h, 0, sizeof *h);
    config_init(&h->cfg);
    char *urls[3] = {"http://127.0.0.1:1", "http://127.0.0.1:2/", "http://127.0.0.1:3/v1"};
    assert_true(endpoints <= 3);
    assert_int_equal(config_set_endpoints(&h->cfg, urls, endpoints), 0);
    h->cfg.seed = 7;
    h->cfg.workload.kind = WORKLOAD_CHAT;
    dist_fixed(&h->cfg.workload.turns, 3);
    dist_fixed(&h->cfg.workload.input_tokens, 5);
    dist_fixed(&h->cfg.workload.output_tokens, 4);
    dist_fixed(&h->cfg.workload.think_time, 0);
    h->cfg.scheduler.kind = SCHEDULER_CONCURRENT;
    h->cfg.scheduler.concurrency = 4;
    h->loop = loop_new();
    assert_non_null(h->loop);
    for (uint32_t w = 0; w < MAX_WORKERS; w++) {
        h->fakes[w].loop = h->loop;
        h->fakes[w].latency_ns = 2 * MS;
        h->fakes[w].fail_request_id = UINT64_MAX;
        h->fakes[w].limit_request_id = UINT64_MAX;
    }
}

/* The first `times` sends of request id get a 429 with Retry-After retry_after_s (-1: none). */
static void answer_429(fake_t *fake, uint64_t id, uint32_t times, int32_t retry_after_s) {
    fake->limit_request_id = id;
    fake->limit_times = times;
    fake->limit_retry_after_s = retry_after_s;
}

static void set_spec(dist_t *d, const char *spec) {
    char err[256];
    dist_clear(d);
    if (dist_parse_spec(spec, d, err, sizeof err) != 0)
        fail_msg("spec %s: %s", spec, err);
}

/* Runs the config over `workers` executors to the end; the fakes' settings are taken as set. */
static void harness_run(harness_t *h, uint32_t workers) {
    h->workers = workers;
    for (uint32_t w = 0; w < workers; w++) {
        assert_int_equal(plan_share_for(&h->cfg, workers, w, &h->shares[w]), 0);
        session_backend_t backend = {.submit = fake_submit,
                                     .inflight_to = fake_inflight_to,
                                     .cancel_all = fake_cancel_all,
                                     .ctx = &h->fakes[w]};
        if (h->engine && w == 0)
            backend = session_backend_engine(h->engine);
        worker_ctx[w] = (worker_ctx_t){.h = h, .worker = w};
        h->execs[w] = session_executor_new(h->loop, &h->cfg, &h->shares[w], backend, on_record,
                                           on_finished, &worker_ctx[w]);
        assert_non_null(h->execs[w]);
        if (h->generate)
            session_executor_set_generator(h->execs[w], h->generate, h->generate_arg);
        if (h->grant)
            session_executor_set_limit(h->execs[w], h->grant);
    }
    h->start_ns = loop_now_ns() + 5 * MS;
    for (uint32_t w = 0; w < workers; w++)
        assert_int_equal(session_executor_start(h->execs[w], h->start_ns), 0);
    uint64_t stop = 0;
    if (h->stop_at_ns)
        stop = loop_timer_at(h->loop, h->start_ns + h->stop_at_ns, stop_fire, h->execs[0]);
    uint64_t guard = loop_timer_at(h->loop, h->start_ns + GUARD_NS, guard_fire, h);
    loop_run(h->loop);
    loop_timer_cancel(h->loop, guard);
    if (h->stop_at_ns)
        loop_timer_cancel(h->loop, stop);
    assert_false(h->timed_out);
    assert_int_equal(h->finished, workers);
    for (uint32_t w = 0; w < workers; w++) {
        assert_int_equal(session_executor_inflight(h->execs[w]), 0);
        assert_int_equal(h->fakes[w].inflight, 0);
    }
}

static void harness_free(harness_t *h) {
    for (uint32_t w = 0; w < MAX_WORKERS; w++) {
        session_executor_destroy(&h->execs[w]);
        fake_free(&h->fakes[w]);
    }
    loop_destroy(&h->loop);
    config_free(&h->cfg);
    free(h->records);
}

/* cmocka's setup of a test's harness over 1, 2 or 3 endpoints, and its teardown. */
static int harness_setup(void **state, uint32_t endpoints) {
    harness_t *h = malloc(sizeof *h);
    assert_non_null(h);
    harness_init(h, endpoints);
    *state = h;
    return 0;
}

static int one_endpoint(void **state) {
    return harness_setup(state, 1);
}

static int two_endpoints(void **state) {
    return harness_setup(state, 2);
}

static int three_endpoints(void **state) {
    return harness_setup(state, 3);
}

static int harness_teardown(void **state) {
    harness_free(*state);
    free(*state);
    return 0;
}

#define HARNESS_TEST(f, endpoints) cmocka_unit_test_setup_teardown(f, endpoints, harness_teardown)

static uint64_t count_session_requests(const harness_t *h, uint64_t session) {
    uint64_t n = 0;
    for (size_t i = 0; i < h->n_records; i++)
        n += h->records[i].session == session;
    return n;
}

static void test_session_concurrent_4_keeps_exactly_4_in_flight(void **state) {
    harness_t *h = *state;
    h->cfg.limits.max_sessions = 20;
    h->fakes[0].watch_full = 4;
    harness_run(h, 1);
    assert_int_equal(h->n_records, 60); /* 20 sessions x 3 turns */
    assert_int_equal(h->fakes[0].max_inflight, 4);
    /* a slot lets its request count drop only when it has run all its sessions: once per slot */
    assert_int_equal(h->fakes[0].drops_below_full, 4);
    assert_int_equal(h->max_active, 4);
}

static void test_session_ramp_up_staggers_slot_starts(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.scheduler.ramp_up_ns = 200 * MS;
    h->cfg.limits.max_sessions = 4; /* one session per slot: its intended start is the ramp step */
    harness_run(h, 1);
    assert_int_equal(h->n_records, 4);
    for (size_t i = 0; i < h->n_records; i++) {
        const request_record_t *r = &h->records[i];
        int64_t expected = h->start_ns + (int64_t)r->session * 50 * MS;
        assert_int_equal(r->intended_ns, expected);
        if (r->send_ns < expected || r->send_ns > expected + 40 * MS)
            fail_msg("slot %llu sent %lld ns after its ramp instant, expected within [0, 40 ms]",
                     (unsigned long long)r->session, (long long)(r->send_ns - expected));
    }
}

static void test_session_max_requests_is_exact(void **state) {
    harness_t *h = *state;
    set_spec(&h->cfg.workload.turns, "uniform:min=1,max=6");
    h->cfg.scheduler.concurrency = 3;
    h->cfg.limits.max_requests = 37;
    harness_run(h, 1);
    assert_int_equal(h->n_records, 37);
    uint8_t seen[37] = {0};
    for (size_t i = 0; i < h->n_records; i++) {
        assert_true(h->records[i].request_id < 37);
        seen[h->records[i].request_id]++;
    }
    for (size_t g = 0; g < 37; g++)
        if (seen[g] != 1)
            fail_msg("request ordinal %zu sent %u times, expected once", g, seen[g]);
}

static void test_session_max_sessions_is_exact_and_sessions_complete(void **state) {
    harness_t *h = *state;
    h->cfg.limits.max_sessions = 11;
    set_spec(&h->cfg.workload.turns, "uniform:min=1,max=5");
    h->cfg.scheduler.concurrency = 3;
    harness_run(h, 1);
    uint64_t total = 0;
    for (uint64_t s = 0; s < 11; s++) {
        uint64_t expected = workload_session_size(&h->cfg, s);
        assert_int_equal(count_session_requests(h, s), expected);
        total += expected;
    }
    assert_int_equal(h->n_records, total);
    size_t ends = 0;
    for (size_t i = 0; i < h->n_records; i++)
        ends += h->records[i].session_end;
    assert_int_equal(ends, 11);
}

/* The grant holds every slot at its index; a handover gives the lost worker's classes to the
 * survivors from the grant on: no session index runs twice, the lost worker never reaches the
 * grant, and every session past the grant runs, on the adopter of its slot. */
static void test_session_handover_at_the_grant_runs_no_session_twice(void **state) {
    harness_t h;
    harness_init(&h, 1);
    h.cfg.workload.kind = WORKLOAD_REQUESTS;
    h.cfg.scheduler.concurrency = 6;
    h.cfg.limits.max_sessions = 90;
    h.grant = 12; /* every slot is held after its second session: 12 records, then the handover */
    h.handover_after = 12;
    harness_run(&h, 3);
    uint32_t runner[90];
    memset(runner, 0xff, sizeof runner);
    for (size_t i = 0; i < h.n_records; i++) {
        const request_record_t *r = &h.records[i];
        assert_true(r->session < 90);
        if (runner[r->session] != UINT32_MAX && runner[r->session] != r->worker)
            fail_msg("session %lu run by workers %u and %u", (unsigned long)r->session,
                     runner[r->session], r->worker);
        runner[r->session] = r->worker;
        if (r->worker == 1)
            assert_true(r->session < 12);
    }
    for (uint64_t s = 0; s < 90; s++) {
        if (s < 12) {
            assert_int_equal(runner[s], plan_session_owner(&h.cfg, 3, s));
            continue;
        }
        uint32_t slot = (uint32_t)(s % 6), expected = slot <= 2 ? 0 : 2;
        if (runner[s] != expected)
            fail_msg("session %lu (slot %u) run by %u, expected %u", (unsigned long)s, slot,
                     runner[s], expected);
    }
    harness_free(&h);
}

static void test_session_duration_stops_issuing_and_lets_inflight_finish(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.scheduler.concurrency = 2;
    h->cfg.limits.duration_ns = 100 * MS;
    h->fakes[0].latency_ns = 10 * MS;
    harness_run(h, 1);
    int64_t end = h->start_ns + 100 * MS;
    for (size_t i = 0; i < h->n_records; i++) {
        if (h->records[i].send_ns >= end)
            fail_msg("request %zu sent %lld ns after the end", i,
                     (long long)(h->records[i].send_ns - end));
        assert_int_equal(h->records[i].error, ERROR_NONE);
    }
    /* 2 slots x 100 ms / 10 ms = at most 20; a loaded machine sends fewer, never none */
    if (h->n_records < 4 || h->n_records > 22)
        fail_msg("%zu requests in 100 ms over 2 slots of 10 ms, expected 4..22", h->n_records);
    assert_true(h->finished_ns >= h->last_record_ns);
}

static void test_session_stop_with_cancel_records_cancelled_and_finishes(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->fakes[0].latency_ns = 5 * MS;
    h->stop_after = 10;
    harness_run(h, 1); /* no limit in the config: only the stop ends it */
    size_t cancelled = 0;
    for (size_t i = 0; i < h->n_records; i++)
        cancelled += h->records[i].error == ERROR_CANCELLED;
    assert_int_equal(cancelled, 3); /* the 3 other slots' requests in flight at the 10th record */
    assert_int_equal(h->n_records, 13);
}

static void check_body(const harness_t *h, const fake_item_t *item, const char *system,
                       uint32_t words_per_reply) {
    json_error_t err;
    json_t *root = json_loads(item->body, 0, &err);
    if (!root)
        fail_msg("body not JSON: %s: %s", err.text, item->body);
    const request_record_t *rec = &item->sent;
    json_t *messages = json_object_get(root, "messages");
    size_t n = json_array_size(messages);
    assert_int_equal(n, 2 + 2 * rec->node); /* system, (user, assistant) per turn, user */
    assert_string_equal(json_string_value(json_object_get(json_array_get(messages, 0), "content")),
                        system);
    char expected[4096];
    uint64_t first = rec->request_id - rec->node;
    for (uint32_t turn = 0; turn <= rec->node; turn++) {
        json_t *user = json_array_get(messages, 1 + 2 * turn);
        assert_string_equal(json_string_value(json_object_get(user, "role")), "user");
        assert_true(workload_fresh_text(&h->cfg, rec->session, turn, 5, expected, sizeof expected) >
                    0);
        assert_string_equal(json_string_value(json_object_get(user, "content")), expected);
        if (turn == rec->node)
            break;
        json_t *assistant = json_array_get(messages, 2 + 2 * turn);
        assert_string_equal(json_string_value(json_object_get(assistant, "role")), "assistant");
        int len = fake_reply(first + turn, expected, sizeof expected);
        json_t *content = json_object_get(assistant, "content");
        assert_int_equal(json_string_length(content), len);
        assert_memory_equal(json_string_value(content), expected, (size_t)len);
    }
    assert_int_equal(json_integer_value(json_object_get(root, "max_tokens")), 4);
    assert_int_equal(rec->requested_input_tokens, 20 + rec->node * (5 + words_per_reply) + 5);
    json_decref(root);
}

static void test_session_chat_history_has_replies_verbatim_and_shared_system(void **state) {
    harness_t *h = *state;
    h->cfg.workload.system_prompt_tokens = 20;
    h->cfg.scheduler.concurrency = 2;
    h->cfg.limits.max_sessions = 4;
    harness_run(h, 1);
    assert_int_equal(h->fakes[0].n_items, 12);
    char system[4096];
    assert_true(workload_system_text(&h->cfg, system, sizeof system) > 0);
    char reply[256];
    int len = fake_reply(0, reply, sizeof reply);
    uint32_t reply_words = 0;
    for (int i = 0, in = 0; i < len; i++) { /* count like the executor: whitespace-separated */
        int space = reply[i] == ' ' || reply[i] == '\n' || reply[i] == '\t';
        reply_words += !space && !in;
        in = !space;
    }
    for (size_t i = 0; i < h->fakes[0].n_items; i++)
        check_body(h, h->fakes[0].items[i], system, reply_words);
}

static void test_session_urls_get_the_api_path_once(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.limits.max_requests = 3;
    harness_run(h, 1);
    assert_int_equal(h->fakes[0].n_items, 3);
    const char *expected[3] = {"http://127.0.0.1:1/v1/chat/completions",
                               "http://127.0.0.1:2/v1/chat/completions",
                               "http://127.0.0.1:3/v1/chat/completions"};
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(h->fakes[0].items[i]->url,
                            expected[h->fakes[0].items[i]->sent.endpoint]);
}

/* Per-endpoint counts of a run of `workers`, with random turns so sessions differ in size. */
static void round_robin_counts(uint32_t workers, uint64_t counts[3]) {
    harness_t h;
    harness_init(&h, 3);
    set_spec(&h.cfg.workload.turns, "uniform:min=1,max=4");
    h.cfg.scheduler.concurrency = 5;
    h.cfg.limits.max_sessions = 31;
    harness_run(&h, workers);
    counts[0] = counts[1] = counts[2] = 0;
    for (size_t i = 0; i < h.n_records; i++) {
        assert_int_equal(h.records[i].endpoint, h.records[i].request_id % 3);
        counts[h.records[i].endpoint]++;
    }
    harness_free(&h);
}

static void test_session_round_robin_is_balanced_whatever_the_worker_count(void **state) {
    uint64_t reference[3];
    round_robin_counts(1, reference);
    for (uint32_t workers = 1; workers <= 3; workers++) {
        uint64_t counts[3];
        round_robin_counts(workers, counts);
        uint64_t lo = counts[0], hi = counts[0];
        for (int e = 0; e < 3; e++) {
            lo = counts[e] < lo ? counts[e] : lo;
            hi = counts[e] > hi ? counts[e] : hi;
            if (counts[e] != reference[e])
                fail_msg("W=%u endpoint %d: %lu requests, W=1 sent %lu", workers, e,
                         (unsigned long)counts[e], (unsigned long)reference[e]);
        }
        if (hi - lo > 1)
            fail_msg("W=%u: endpoint counts %lu %lu %lu differ by more than 1", workers,
                     (unsigned long)counts[0], (unsigned long)counts[1], (unsigned long)counts[2]);
    }
}

static void test_session_sticky_keeps_a_session_on_one_endpoint(void **state) {
    harness_t *h = *state;
    h->cfg.target.routing = ROUTING_STICKY;
    h->cfg.limits.max_sessions = 9;
    harness_run(h, 2);
    size_t items = 0;
    for (uint32_t w = 0; w < 2; w++)
        for (size_t i = 0; i < h->fakes[w].n_items; i++) {
            const fake_item_t *item = h->fakes[w].items[i];
            char id[32];
            snprintf(id, sizeof id, "%llu", (unsigned long long)item->sent.session);
            assert_int_equal(item->endpoint, item->sent.session % 3);
            assert_string_equal(item->session_header, id);
            items++;
        }
    assert_int_equal(items, 27);
}

static void test_session_random_routing_follows_the_routing_stream(void **state) {
    harness_t *h = *state;
    h->cfg.target.routing = ROUTING_RANDOM;
    h->cfg.limits.max_sessions = 10;
    harness_run(h, 1);
    uint64_t counts[3] = {0};
    for (size_t i = 0; i < h->n_records; i++) {
        rng_t rng;
        rng_init(&rng, h->cfg.seed, RNG_STREAM_ROUTING, h->records[i].request_id, 0, 0);
        assert_int_equal(h->records[i].endpoint, rng_next_below(&rng, 3));
        counts[h->records[i].endpoint]++;
    }
    assert_true(counts[0] > 0 && counts[1] > 0 && counts[2] > 0);
}

static void test_session_least_inflight_avoids_the_slow_endpoint(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.target.routing = ROUTING_LEAST_INFLIGHT;
    h->cfg.scheduler.concurrency = 6; /* more slots than endpoints, so each choice matters */
    h->cfg.limits.max_sessions = 60;
    h->fakes[0].endpoint0_latency_ns = 40 * MS; /* endpoint 0 is 20x slower */
    h->fakes[0].n_endpoints = 3;
    harness_run(h, 1);
    assert_int_equal(h->fakes[0].n_items, 60);
    assert_int_equal(h->fakes[0].not_least, 0);
    uint64_t counts[3] = {0};
    for (size_t i = 0; i < h->n_records; i++)
        counts[h->records[i].endpoint]++;
    if (counts[0] >= counts[1] || counts[0] >= counts[2])
        fail_msg("least_inflight sent %lu / %lu / %lu: expected the slow endpoint 0 to get the "
                 "fewest",
                 (unsigned long)counts[0], (unsigned long)counts[1], (unsigned long)counts[2]);
}

static void test_session_rate_mode_follows_arrivals_and_splits_sessions(void **state) {
    int64_t offsets[40];
    for (uint32_t workers = 1; workers <= 4; workers += 3) {
        harness_t h;
        harness_init(&h, 1);
        h.cfg.workload.kind = WORKLOAD_REQUESTS;
        h.cfg.scheduler.kind = SCHEDULER_RATE;
        h.cfg.scheduler.concurrency = 0;
        h.cfg.scheduler.rate = 400;
        h.cfg.limits.max_sessions = 40;
        harness_run(&h, workers);
        assert_int_equal(h.n_records, 40);
        workload_arrivals_t arrivals;
        workload_arrivals_init(&arrivals, &h.cfg);
        uint8_t seen[40] = {0};
        for (size_t i = 0; i < h.n_records; i++) {
            const request_record_t *r = &h.records[i];
            assert_true(r->session < 40);
            seen[r->session]++;
            assert_int_equal(r->worker, r->session % workers);
            int64_t offset = r->intended_ns - h.start_ns;
            if (workers == 1)
                offsets[r->session] = offset;
            else
                assert_int_equal(offset, offsets[r->session]);
        }
        for (uint64_t s = 0; s < 40; s++) {
            assert_int_equal(seen[s], 1);
            assert_int_equal(offsets[s], workload_arrivals_time_ns(&arrivals, s));
        }
        harness_free(&h);
    }
}

/* One endpoint, `sessions` single requests arriving at a constant `rate` per second under a cap of
 * `cap` in flight, each answered after `latency_ns`. */
static void harness_init_capped_rate(harness_t *h, uint32_t cap, double rate, uint64_t sessions,
                                     int64_t latency_ns) {
    harness_init(h, 1);
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.scheduler.kind = SCHEDULER_RATE;
    h->cfg.scheduler.concurrency = cap;
    h->cfg.scheduler.rate = rate;
    h->cfg.scheduler.arrival = ARRIVAL_CONSTANT;
    h->cfg.limits.max_sessions = sessions;
    h->fakes[0].latency_ns = latency_ns;
}

static void test_session_rate_cap_delays_but_keeps_intended_times(void **state) {
    harness_t h;
    harness_init_capped_rate(&h, 2, 1000, 20, 10 * MS); /* 2 x 10 ms cannot keep 1 per ms */
    harness_run(&h, 1);
    assert_int_equal(h.n_records, 20);
    assert_int_equal(h.fakes[0].max_inflight, 2);
    const request_record_t *last = NULL;
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &h.cfg);
    for (uint64_t s = 0; s < 20; s++) {
        int64_t offset = workload_arrivals_time_ns(&arrivals, s);
        if (offset < (int64_t)s * MS - 1000 || offset > (int64_t)s * MS + 1000)
            fail_msg("constant 1000/s: arrival %lu at %lld ns", (unsigned long)s,
                     (long long)offset);
        for (size_t i = 0; i < h.n_records; i++)
            if (h.records[i].session == s)
                assert_int_equal(h.records[i].intended_ns, h.start_ns + offset);
    }
    for (size_t i = 0; i < h.n_records; i++) {
        if (!last || h.records[i].session > last->session)
            last = &h.records[i];
    }
    /* session 19 was due at 19 ms but had to wait for 9 rounds of 10 ms */
    if (last->send_ns - last->intended_ns < 50 * MS)
        fail_msg("session 19 lag %lld ns, expected >= 50 ms under the cap",
                 (long long)(last->send_ns - last->intended_ns));
    harness_free(&h);
}

/* Runs harness_init_capped_rate's set-up on one worker; checks its arrivals and cap waits. */
static void check_cap_waits(uint32_t cap, double rate, uint64_t sessions, int64_t latency_ns,
                            uint64_t waits) {
    harness_t h;
    harness_init_capped_rate(&h, cap, rate, sessions, latency_ns);
    harness_run(&h, 1);
    assert_int_equal(session_executor_arrivals(h.execs[0]), sessions);
    assert_int_equal(session_executor_cap_waits(h.execs[0]), waits);
    harness_free(&h);
}

/* Arrivals 0 and 1 find a free slot; each of the 18 after them is due while both are busy. */
static void test_session_rate_cap_counts_each_held_arrival_once(void **state) {
    check_cap_waits(2, 1000, 20, 10 * MS, 18);
}

/* 100/s with replies of 1 ms never fills a cap of 4: no arrival waits. */
static void test_session_rate_cap_not_reached_counts_no_wait(void **state) {
    check_cap_waits(4, 100, 10, 1 * MS, 0);
}

static uint64_t hash_sum(config_scheduler_kind_t kind, uint32_t workers, size_t *n) {
    harness_t h;
    harness_init(&h, 3);
    set_spec(&h.cfg.workload.turns, "uniform:min=1,max=5");
    set_spec(&h.cfg.workload.input_tokens, "uniform:min=3,max=30");
    set_spec(&h.cfg.workload.think_time, "uniform:min=0,max=0.002");
    h.cfg.workload.system_prompt_tokens = 8;
    h.cfg.scheduler.kind = kind;
    h.cfg.scheduler.concurrency = kind == SCHEDULER_RATE ? 0 : 6;
    h.cfg.scheduler.rate = 500;
    h.cfg.limits.max_sessions = 25;
    for (uint32_t w = 0; w < MAX_WORKERS; w++)
        h.fakes[w].latency_ns = (1 + w) * MS; /* different timing per worker must not matter */
    harness_run(&h, workers);
    uint64_t sum = 0;
    for (size_t i = 0; i < h.n_records; i++)
        sum += h.records[i].workload_hash;
    *n = h.n_records;
    harness_free(&h);
    return sum;
}

static void test_session_workload_hash_sum_is_the_same_for_1_and_4_workers(void **state) {
    for (int mode = 0; mode < 2; mode++) {
        config_scheduler_kind_t kind = mode ? SCHEDULER_RATE : SCHEDULER_CONCURRENT;
        size_t n1 = 0, n4 = 0;
        uint64_t one = hash_sum(kind, 1, &n1);
        uint64_t four = hash_sum(kind, 4, &n4);
        assert_int_equal(n1, n4);
        assert_true(n1 > 25);
        if (one != four)
            fail_msg("%s: hash sum %016llx under 1 worker, %016llx under 4",
                     mode ? "rate" : "concurrent", (unsigned long long)one,
                     (unsigned long long)four);
    }
}

static void test_session_failed_turn_ends_its_session(void **state) {
    harness_t *h = *state;
    h->cfg.scheduler.concurrency = 2;
    h->cfg.limits.max_sessions = 4;
    h->fakes[0].fail_request_id = 4; /* session 1 (ordinals 3..5), turn 1 */
    harness_run(h, 1);
    assert_int_equal(count_session_requests(h, 1), 2);
    assert_int_equal(h->n_records, 11);
    for (size_t i = 0; i < h->n_records; i++)
        if (h->records[i].request_id == 4) {
            assert_int_equal(h->records[i].error, ERROR_HTTP_5XX);
            assert_true(h->records[i].session_end);
        }
}

/* Sends of request id among the fake's items. */
static uint32_t count_sends(const fake_t *fake, uint64_t id) {
    uint32_t n = 0;
    for (size_t i = 0; i < fake->n_items; i++)
        n += fake->items[i]->sent.request_id == id;
    return n;
}

static const request_record_t *record_of(const harness_t *h, uint64_t id) {
    for (size_t i = 0; i < h->n_records; i++)
        if (h->records[i].request_id == id)
            return &h->records[i];
    fail_msg("no record of request %llu", (unsigned long long)id);
    return NULL;
}

/* A 429 with retries left is waited out and sent again; only the final answer is a record. */
static void test_session_429_honoured_is_resent_until_it_passes(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.limits.max_requests = 6;
    h->cfg.target.retry_on_429 = true;
    h->cfg.target.retry_after_max_ns = 20 * MS; /* Retry-After 1 s, capped */
    answer_429(&h->fakes[0], 3, 2, 1);
    harness_run(h, 1);
    assert_int_equal(h->n_records, 6);
    const request_record_t *r = record_of(h, 3);
    assert_int_equal(r->error, ERROR_NONE);
    assert_int_equal(r->retries, 2);
    assert_true(r->retry_wait_ns >= 40 * MS && r->retry_wait_ns < 2000 * MS);
    assert_true(r->send_ns - r->intended_ns >= 40 * MS); /* sent last after both waits */
    assert_int_equal(count_sends(&h->fakes[0], 3), 3);
    assert_int_equal(record_of(h, 2)->retries, 0);
}

/* Past target.retry_429_max the 429 is the request's answer: an http_429 error. */
static void test_session_429_retries_spent_is_an_error(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.limits.max_requests = 4;
    h->cfg.target.retry_on_429 = true;
    h->cfg.target.retry_429_max = 3;
    answer_429(&h->fakes[0], 1, 100, 0);
    harness_run(h, 1);
    const request_record_t *r = record_of(h, 1);
    assert_int_equal(r->error, ERROR_HTTP_429);
    assert_int_equal(r->retries, 3);
    assert_int_equal(count_sends(&h->fakes[0], 1), 4);
}

/* ignore (the default): a 429 is an error at once. */
static void test_session_429_ignored_is_an_error_at_once(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.limits.max_requests = 4;
    answer_429(&h->fakes[0], 1, 1, 0);
    harness_run(h, 1);
    assert_int_equal(record_of(h, 1)->error, ERROR_HTTP_429);
    assert_int_equal(record_of(h, 1)->retries, 0);
    assert_int_equal(count_sends(&h->fakes[0], 1), 1);
}

/* A stop with cancel ends a wait for a resend at once: the request is cancelled, its wait
 * counted. */
static void test_session_429_wait_is_cancelled_by_the_stop(void **state) {
    harness_t *h = *state;
    h->cfg.workload.kind = WORKLOAD_REQUESTS;
    h->cfg.scheduler.concurrency = 1;
    h->cfg.target.retry_on_429 = true;
    answer_429(&h->fakes[0], 2, 1, 5); /* a 5 s wait the stop cuts short */
    h->stop_at_ns = 200 * MS;
    harness_run(h, 1); /* it ends, nothing left in flight */
    assert_true(h->finished_ns - h->start_ns < 2000 * MS);
    const request_record_t *r = record_of(h, 2);
    assert_int_equal(r->error, ERROR_CANCELLED);
    assert_int_equal(r->retries, 0); /* the wait was cut: it was never sent again */
    assert_non_null(strstr(r->error_message, "waiting to resend after HTTP 429"));
    assert_true(r->retry_wait_ns > 100 * MS && r->retry_wait_ns < 2000 * MS);
}

static void test_session_requests_wait_for_a_free_transfer(void **state) {
    harness_t *h = *state;
    h->cfg.limits.max_sessions = 12;
    h->fakes[0].capacity = 2; /* 4 slots, 2 transfers */
    harness_run(h, 1);
    assert_int_equal(h->n_records, 36);
    assert_int_equal(h->fakes[0].max_inflight, 2);
    assert_true(h->fakes[0].refused > 0);
    for (size_t i = 0; i < h->n_records; i++)
        assert_int_equal(h->records[i].error, ERROR_NONE);
}

static void test_session_idle_worker_finishes_at_once(void **state) {
    harness_t *h = *state;
    h->cfg.scheduler.concurrency = 1;
    h->cfg.limits.max_sessions = 3;
    harness_run(h, 2); /* worker 1 has no slot */
    assert_int_equal(h->n_records, 9);
    for (size_t i = 0; i < h->n_records; i++)
        assert_int_equal(h->records[i].worker, 0);
    assert_int_equal(h->fakes[1].n_items, 0);
}

/* Diamond sessions: 0 -> {1, 2} -> 3, node 3 waiting 1 ms and inheriting `inherit`. */
static int diamond_generate(void *arg, const config_t *cfg, uint64_t index,
                            workload_session_t *out) {
    const double *inherit = arg;
    workload_node_t *nodes = realloc(out->nodes, 4 * sizeof *nodes);
    if (!nodes)
        return -1;
    memset(nodes, 0, 4 * sizeof *nodes);
    for (uint32_t j = 0; j < 4; j++) {
        nodes[j].index = j;
        nodes[j].input_tokens = 5;
        nodes[j].output_tokens = 4;
        nodes[j].inherit = j == 3 ? *inherit : 1.0;
        nodes[j].role = j == 0 ? 1 : j == 3 ? 3 : 2;
    }
    static uint32_t root[1] = {0}, join[2] = {1, 2};
    nodes[1].n_parents = nodes[2].n_parents = 1;
    nodes[1].parents = nodes[2].parents = root;
    nodes[3].n_parents = 2;
    nodes[3].parents = join;
    nodes[3].wait_after_ready_ns = 1 * MS;
    out->index = index;
    out->n_nodes = 4;
    out->nodes = nodes;
    return 0;
}

static void run_diamonds(harness_t *h, double *inherit) {
    dist_fixed(&h->cfg.workload.turns, 4); /* workload_session_size: 4 */
    h->cfg.workload.system_prompt_tokens = 3;
    h->cfg.scheduler.concurrency = 1;
    h->cfg.limits.max_sessions = 2;
    h->generate = diamond_generate;
    h->generate_arg = inherit;
    harness_run(h, 1);
}

/* The user texts of a body's messages, as node indices of the session (system = -1). */
static size_t body_nodes(const harness_t *h, const fake_item_t *item, int *out, size_t cap) {
    json_t *root = json_loads(item->body, 0, NULL);
    assert_non_null(root);
    json_t *messages = json_object_get(root, "messages");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(messages) && n < cap; i++) {
        json_t *m = json_array_get(messages, i);
        const char *role = json_string_value(json_object_get(m, "role"));
        const char *content = json_string_value(json_object_get(m, "content"));
        if (!strcmp(role, "system")) {
            out[n++] = -1;
            continue;
        }
        if (strcmp(role, "user"))
            continue;
        int found = -2;
        for (uint32_t j = 0; j < 4; j++) {
            char text[256];
            assert_true(workload_fresh_text(&h->cfg, item->sent.session, j, 5, text, sizeof text) >
                        0);
            if (!strcmp(text, content))
                found = (int)j;
        }
        out[n++] = found;
    }
    json_decref(root);
    return n;
}

static void test_session_dag_fans_out_and_joins_after_both_parents(void **state) {
    harness_t *h = *state;
    double inherit = 1.0;
    run_diamonds(h, &inherit);
    assert_int_equal(h->n_records, 8);
    assert_int_equal(h->fakes[0].max_inflight, 2); /* nodes 1 and 2 together */
    for (uint64_t s = 0; s < 2; s++) {
        const request_record_t *node[4] = {NULL};
        for (size_t i = 0; i < h->n_records; i++)
            if (h->records[i].session == s)
                node[h->records[i].node] = &h->records[i];
        for (int j = 0; j < 4; j++) {
            assert_non_null(node[j]);
            assert_int_equal(node[j]->session_end, j == 3);
            assert_int_equal(node[j]->request_id, s * 4 + (uint64_t)j);
        }
        assert_int_equal(node[3]->role, 3);
        int64_t last_parent = node[1]->end_ns > node[2]->end_ns ? node[1]->end_ns : node[2]->end_ns;
        assert_true(node[1]->send_ns < node[2]->end_ns && node[2]->send_ns < node[1]->end_ns);
        assert_true(node[3]->intended_ns >= last_parent + 1 * MS);
        assert_true(node[3]->send_ns >= node[3]->intended_ns);
        /* words: system 3 + three ancestors (5 + reply words) + 5 */
        assert_true(node[3]->requested_input_tokens > 3 + 3 * 5 + 5);
    }
    for (size_t i = 0; i < h->fakes[0].n_items; i++) {
        const fake_item_t *item = h->fakes[0].items[i];
        int nodes[16];
        size_t n = body_nodes(h, item, nodes, 16);
        static const int expected[4][5] = {{-1, 0}, {-1, 0, 1}, {-1, 0, 2}, {-1, 0, 1, 2, 3}};
        static const size_t lengths[4] = {2, 3, 3, 5};
        assert_int_equal(n, lengths[item->sent.node]);
        assert_memory_equal(nodes, expected[item->sent.node], n * sizeof(int));
    }
}

static void test_session_dag_inherits_the_latest_fraction_of_ancestors(void **state) {
    harness_t *h = *state;
    double inherit = 0.5; /* node 3 has 3 ancestors: keeps round(1.5) = 2, the latest */
    run_diamonds(h, &inherit);
    size_t joins = 0;
    for (size_t i = 0; i < h->fakes[0].n_items; i++) {
        const fake_item_t *item = h->fakes[0].items[i];
        if (item->sent.node != 3)
            continue;
        int nodes[16];
        static const int expected[4] = {-1, 1, 2, 3};
        assert_int_equal(body_nodes(h, item, nodes, 16), 4);
        assert_memory_equal(nodes, expected, sizeof expected);
        joins++;
    }
    assert_int_equal(joins, 2);
}

/* A fan-out past the old cap of 8 parents: planner 0 -> 12 sub-agents (history none) -> report 13,
 * which continues the planner's conversation and appends the sub-agents' replies; then a chain
 * 14 (full history from 13) and 15 (half of 14's conversation). */
#define WIDE_CHILDREN 12u
#define WIDE_NODES (WIDE_CHILDREN + 4u)
static int wide_generate(void *arg, const config_t *cfg, uint64_t index, workload_session_t *out) {
    (void)arg;
    (void)cfg;
    if (workload_session_reserve(out, WIDE_NODES, 2 * WIDE_CHILDREN + 2) != 0)
        return -1;
    workload_node_t *nodes = out->nodes;
    for (uint32_t j = 0; j < WIDE_NODES; j++) {
        nodes[j].input_tokens = 5;
        nodes[j].output_tokens = 4;
        nodes[j].history = WORKLOAD_HISTORY_CHAIN;
        nodes[j].inherit = 1.0;
    }
    uint32_t *e = out->edges;
    for (uint32_t c = 1; c <= WIDE_CHILDREN; c++) {
        nodes[c].n_parents = 1;
        nodes[c].parents = e;
        *e++ = 0;
        nodes[c].history_parent = 0;
        nodes[c].inherit = 0.0; /* a sub-agent: scaffold and its own task only */
    }
    workload_node_t *report = &nodes[WIDE_CHILDREN + 1];
    report->n_parents = WIDE_CHILDREN;
    report->parents = e;
    for (uint32_t c = 1; c <= WIDE_CHILDREN; c++)
        *e++ = c;
    report->history_parent = 0;
    report->append_parent_replies = true;
    for (uint32_t j = WIDE_CHILDREN + 2; j < WIDE_NODES; j++) {
        nodes[j].n_parents = 1;
        nodes[j].parents = e;
        *e++ = j - 1;
        nodes[j].history_parent = j - 1;
    }
    nodes[WIDE_NODES - 1].inherit = 0.5;
    out->index = index;
    return 0;
}

/* The (role, content) messages of a body, system left out. */
static size_t body_messages(const fake_item_t *item, char roles[][16], char contents[][2048],
                            size_t cap) {
    json_t *root = json_loads(item->body, 0, NULL);
    assert_non_null(root);
    json_t *messages = json_object_get(root, "messages");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(messages); i++) {
        json_t *m = json_array_get(messages, i);
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!strcmp(role, "system"))
            continue;
        assert_true(n < cap);
        snprintf(roles[n], 16, "%s", role);
        snprintf(contents[n], 2048, "%s", json_string_value(json_object_get(m, "content")));
        n++;
    }
    json_decref(root);
    return n;
}

static void fresh(const harness_t *h, uint32_t node, char *buf, size_t cap) {
    assert_true(workload_fresh_text(&h->cfg, 0, node, 5, buf, cap) > 0);
}

static void test_session_graph_history_chain_none_and_appended_replies(void **state) {
    harness_t *h = *state;
    dist_fixed(&h->cfg.workload.turns, WIDE_NODES);
    h->cfg.scheduler.concurrency = 1;
    h->cfg.limits.max_sessions = 1;
    h->generate = wide_generate;
    harness_run(h, 1);
    assert_int_equal(h->n_records, WIDE_NODES);
    assert_int_equal(h->fakes[0].max_inflight, WIDE_CHILDREN); /* every sub-agent at once */
    char roles[8][16], contents[8][2048], text[2048], reply[256];
    for (size_t i = 0; i < h->fakes[0].n_items; i++) {
        const fake_item_t *item = h->fakes[0].items[i];
        uint32_t node = item->sent.node;
        size_t n = body_messages(item, roles, contents, 8);
        if (node <= WIDE_CHILDREN) { /* planner and sub-agents: their own task only */
            assert_int_equal(n, 1);
            fresh(h, node, text, sizeof text);
            assert_string_equal(contents[0], text);
        } else if (node == WIDE_CHILDREN + 1) { /* planner's turn, then the reports + its task */
            assert_int_equal(n, 3);
            fresh(h, 0, text, sizeof text);
            assert_string_equal(roles[0], "user");
            assert_string_equal(contents[0], text);
            fake_reply(0, reply, sizeof reply);
            assert_string_equal(roles[1], "assistant");
            assert_string_equal(contents[1], reply);
            size_t len = 0;
            for (uint32_t c = 1; c <= WIDE_CHILDREN; c++) {
                len += (size_t)fake_reply(c, text + len, sizeof text - len);
                len += (size_t)snprintf(text + len, sizeof text - len, "\n\n");
            }
            fresh(h, node, text + len, sizeof text - len);
            assert_string_equal(contents[2], text);
        } else if (node == WIDE_CHILDREN + 2) { /* full: 0, the report, its own task */
            assert_int_equal(n, 5);
            fresh(h, 0, text, sizeof text);
            assert_string_equal(contents[0], text);
            fake_reply(WIDE_CHILDREN + 1, reply, sizeof reply);
            assert_string_equal(contents[3], reply);
            fresh(h, node, text, sizeof text);
            assert_string_equal(contents[4], text);
        } else { /* half of 3 turns (0, report, 14): round(1.5) = 2, the latest */
            assert_int_equal(n, 5);
            assert_true(strstr(contents[0], "reply 1:") == contents[0]); /* the report's text */
            fresh(h, WIDE_CHILDREN + 2, text, sizeof text);
            assert_string_equal(contents[2], text);
        }
    }
}

/* With graph.context_limit a node's max_tokens is at most what the limit leaves (less the
 * margin) after the words the framework counts: the words sent less the message_overhead_tokens
 * envelope of each appended reply (the report node appends 12: 24 words not counted), its own or
 * in a turn it inherits (the two nodes after it: 141 words sent, 117 counted, 2 tokens left). */
static void test_session_context_limit_caps_max_tokens_without_the_envelopes(void **state) {
    harness_t *h = *state;
    dist_fixed(&h->cfg.workload.turns, WIDE_NODES);
    h->cfg.scheduler.concurrency = 1;
    h->cfg.limits.max_sessions = 1;
    h->cfg.workload.graph.message_overhead_tokens = 2;
    h->cfg.workload.graph.context_limit = 122;
    h->cfg.workload.graph.context_margin = 3;
    h->generate = wide_generate;
    harness_run(h, 1);
    assert_int_equal(h->fakes[0].n_items, WIDE_NODES);
    size_t capped = 0, asked = 0;
    for (size_t i = 0; i < h->fakes[0].n_items; i++) {
        const fake_item_t *item = h->fakes[0].items[i];
        const request_record_t *rec = &item->sent;
        uint64_t envelope = rec->node > WIDE_CHILDREN ? 2 * WIDE_CHILDREN : 0;
        int64_t left = 122 - ((int64_t)rec->requested_input_tokens - (int64_t)envelope) - 3;
        uint32_t expected = left >= 4 ? 4 : left >= 1 ? (uint32_t)left : 1;
        assert_int_equal(rec->requested_output_tokens, expected);
        json_error_t err;
        json_t *root = json_loads(item->body, 0, &err);
        assert_non_null(root);
        assert_int_equal(json_integer_value(json_object_get(root, "max_tokens")), expected);
        json_decref(root);
        capped += expected < 4;
        asked += expected == 4;
    }
    assert_int_equal(capped, 2); /* the report's two successors; the rest fit */
    assert_int_equal(asked, WIDE_NODES - 2);
}

static void test_session_dag_branch_failure_stops_the_join(void **state) {
    harness_t *h = *state;
    double inherit = 1.0;
    h->fakes[0].fail_request_id = 1; /* session 0, node 1 */
    run_diamonds(h, &inherit);
    assert_int_equal(count_session_requests(h, 0), 3); /* 0, 1 (failed), 2; never 3 */
    assert_int_equal(count_session_requests(h, 1), 4);
    size_t ends = 0;
    for (size_t i = 0; i < h->n_records; i++)
        if (h->records[i].session == 0) {
            assert_true(h->records[i].node != 3);
            ends += h->records[i].session_end;
        }
    assert_int_equal(ends, 1);
}

/* `stampede mock`, spawned for the real-engine test. */
MOCK_GROUP_FIXTURE("--ttft-ms", "5", "--itl-ms", "1")

static void test_session_real_engine_runs_chats_against_the_mock(void **state) {
    harness_t *h = *state;
    char a[64], b[64];
    /* two endpoints on the one mock: distinct URLs (the same URL twice is refused), one given
     * bare and one with /v1/, which both get the API path once */
    snprintf(a, sizeof a, "http://127.0.0.1:%d", mock.port);
    snprintf(b, sizeof b, "http://localhost:%d/v1/", mock.port);
    char *urls[2] = {a, b};
    assert_int_equal(config_set_endpoints(&h->cfg, urls, 2), 0);
    dist_fixed(&h->cfg.workload.input_tokens, 10);
    dist_fixed(&h->cfg.workload.output_tokens, 8);
    h->cfg.workload.system_prompt_tokens = 16;
    h->cfg.limits.max_sessions = 8;
    engine_options_t options = {
        .max_streams = 4, .timeout_ns = 10000 * MS, .connect_timeout_ns = 2000 * MS};
    engine_t *engine = engine_new(h->loop, &options);
    assert_non_null(engine);
    h->engine = engine;
    harness_run(h, 1);

    assert_int_equal(h->n_records, 24); /* 8 sessions x 3 turns */
    uint32_t per_endpoint[2] = {0}, prompt[8][3] = {{0}}, requested[8][3] = {{0}}, ends = 0;
    for (size_t i = 0; i < h->n_records; i++) {
        const request_record_t *r = &h->records[i];
        if (r->error != ERROR_NONE)
            fail_msg("request %llu failed: %s", (unsigned long long)r->request_id,
                     r->error_message);
        assert_int_equal(r->http_status, 200);
        assert_true(r->has_usage && r->completion_tokens > 0);
        assert_true(r->session < 8 && r->node < 3);
        per_endpoint[r->endpoint]++;
        prompt[r->session][r->node] = r->prompt_tokens;
        requested[r->session][r->node] = r->requested_input_tokens;
        ends += r->session_end;
    }
    assert_int_equal(per_endpoint[0], 12);
    assert_int_equal(per_endpoint[1], 12);
    assert_int_equal(ends, 8);
    for (int s = 0; s < 8; s++)
        for (int t = 1; t < 3; t++) /* the history (with the server's replies) grows every turn */
            if (prompt[s][t] <= prompt[s][t - 1] || requested[s][t] <= requested[s][t - 1] + 10)
                fail_msg("session %d turn %d: prompt %u requested %u after %u / %u", s, t,
                         prompt[s][t], requested[s][t], prompt[s][t - 1], requested[s][t - 1]);
    session_executor_destroy(&h->execs[0]);
    engine_destroy(&engine);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_handover_at_the_grant_runs_no_session_twice),
        HARNESS_TEST(test_session_concurrent_4_keeps_exactly_4_in_flight, one_endpoint),
        HARNESS_TEST(test_session_ramp_up_staggers_slot_starts, one_endpoint),
        HARNESS_TEST(test_session_max_requests_is_exact, two_endpoints),
        HARNESS_TEST(test_session_max_sessions_is_exact_and_sessions_complete, one_endpoint),
        HARNESS_TEST(test_session_duration_stops_issuing_and_lets_inflight_finish, one_endpoint),
        HARNESS_TEST(test_session_stop_with_cancel_records_cancelled_and_finishes, one_endpoint),
        HARNESS_TEST(test_session_chat_history_has_replies_verbatim_and_shared_system,
                     one_endpoint),
        HARNESS_TEST(test_session_urls_get_the_api_path_once, three_endpoints),
        cmocka_unit_test(test_session_round_robin_is_balanced_whatever_the_worker_count),
        HARNESS_TEST(test_session_sticky_keeps_a_session_on_one_endpoint, three_endpoints),
        HARNESS_TEST(test_session_random_routing_follows_the_routing_stream, three_endpoints),
        HARNESS_TEST(test_session_least_inflight_avoids_the_slow_endpoint, three_endpoints),
        cmocka_unit_test(test_session_rate_mode_follows_arrivals_and_splits_sessions),
        cmocka_unit_test(test_session_rate_cap_delays_but_keeps_intended_times),
        cmocka_unit_test(test_session_rate_cap_counts_each_held_arrival_once),
        cmocka_unit_test(test_session_rate_cap_not_reached_counts_no_wait),
        cmocka_unit_test(test_session_workload_hash_sum_is_the_same_for_1_and_4_workers),
        HARNESS_TEST(test_session_failed_turn_ends_its_session, one_endpoint),
        HARNESS_TEST(test_session_429_honoured_is_resent_until_it_passes, one_endpoint),
        HARNESS_TEST(test_session_429_retries_spent_is_an_error, one_endpoint),
        HARNESS_TEST(test_session_429_ignored_is_an_error_at_once, one_endpoint),
        HARNESS_TEST(test_session_429_wait_is_cancelled_by_the_stop, one_endpoint),
        HARNESS_TEST(test_session_requests_wait_for_a_free_transfer, one_endpoint),
        HARNESS_TEST(test_session_idle_worker_finishes_at_once, one_endpoint),
        HARNESS_TEST(test_session_dag_fans_out_and_joins_after_both_parents, one_endpoint),
        HARNESS_TEST(test_session_dag_inherits_the_latest_fraction_of_ancestors, one_endpoint),
        HARNESS_TEST(test_session_graph_history_chain_none_and_appended_replies, one_endpoint),
        HARNESS_TEST(test_session_context_limit_caps_max_tokens_without_the_envelopes,
                     one_endpoint),
        HARNESS_TEST(test_session_dag_branch_failure_stops_the_join, one_endpoint),
    };
    const struct CMUnitTest engine_tests[] = {
        HARNESS_TEST(test_session_real_engine_runs_chats_against_the_mock, one_endpoint),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed + cmocka_run_group_tests(engine_tests, mock_setup, mock_teardown);
}
