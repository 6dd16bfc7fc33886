/* The run room against a fake link, with no fleet and no socket: what a run sends its workers on
 * an ack, a stop, a loss and a rejoin, and the fleet's worker table (lookup, removal, silence). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock_probe.h"
#include "collect.h"
#include "drain.h"
#include "loop.h"
#include "measurement.h"
#include "rebalance.h"
#include "registry.h"

/* What the fake link was asked to send, one row per message. */
typedef struct sent {
    const run_worker_t *to;
    bool data;
    Stampede__Envelope__BodyCase body;
    uint64_t ack_up_to;
    bool stop_cancel, stop_abandon;
    char stop_reason[128];
    size_t adopted; /* a Rebalance's classes */
} sent_t;

typedef struct fake_link {
    sent_t sent[64];
    size_t n_sent;
    size_t n_said;
    char last_said[512];
} fake_link_t;

static int fake_send(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data) {
    fake_link_t *f = arg;
    assert_true(f->n_sent < 64);
    sent_t *s = &f->sent[f->n_sent++];
    memset(s, 0, sizeof *s);
    s->to = w;
    s->data = data;
    s->body = env->body_case;
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_ACK)
        s->ack_up_to = env->ack->up_to_seq;
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_STOP) {
        s->stop_cancel = env->stop->cancel;
        s->stop_abandon = env->stop->abandon;
        snprintf(s->stop_reason, sizeof s->stop_reason, "%s", env->stop->reason);
    }
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_REBALANCE)
        s->adopted = env->rebalance->n_adopt;
    return 0;
}

static void fake_say(void *arg, const char *msg) {
    fake_link_t *f = arg;
    f->n_said++;
    snprintf(f->last_said, sizeof f->last_said, "%s", msg);
}

static uint32_t fake_inflight(void *arg) {
    (void)arg;
    return 0;
}

/* A started run of two workers over a fake link, in a directory of its own. */
typedef struct fixture {
    char dir[64];
    fake_link_t link;
    run_worker_t workers[2];
    run_worker_t *list[2];
    measurement_t *run;
} fixture_t;

static const char *const YAML = "seed: 1\n"
                                "target:\n"
                                "  endpoints: [http://127.0.0.1:9/v1]\n"
                                "  model: m\n"
                                "workload:\n"
                                "  kind: chat\n"
                                "  turns: 2\n"
                                "  input_tokens: 16\n"
                                "  output_tokens: 8\n"
                                "scheduler:\n"
                                "  kind: concurrent\n"
                                "  concurrency: 4\n"
                                "fleet:\n"
                                "  rebalance_on_join: %s\n"
                                "limits:\n"
                                "  duration: 10s\n";

static fixture_t *fixture_new(bool rebalance_on_join) {
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/stampede-run-link-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char yaml[1024];
    snprintf(yaml, sizeof yaml, YAML, rebalance_on_join ? "true" : "false");
    f->run = measurement_restore("test", "test.yaml", yaml, f->dir, 42);
    assert_non_null(f->run);
    f->run->link = (run_link_t){
        .send = fake_send, .say = fake_say, .inflight = fake_inflight, .arg = &f->link};
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        run_worker_init(&f->workers[i], name, 1 << 20);
        f->workers[i].index = i;
        f->workers[i].state = RUN_WORKER_RUNNING;
        f->list[i] = &f->workers[i];
    }
    f->run->workers = f->list;
    f->run->n_workers = 2;
    f->run->in_run = f->run->started_with = 2;
    f->run->start_ns = loop_now_ns();
    rebalance_start(f->run);
    return f;
}

static void fixture_destroy(fixture_t *f) {
    for (int i = 0; i < 2; i++)
        free(f->workers[i].held);
    measurement_destroy(&f->run);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
}

/* A batch of w's as the fleet hands it on: empty, numbered seq. */
static void deliver(fixture_t *f, run_worker_t *w, uint64_t seq) {
    Stampede__EventBatch batch = STAMPEDE__EVENT_BATCH__INIT;
    batch.seq = seq;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_BATCH;
    env.batch = &batch;
    env.run_id = f->run->id;
    collect_data(f->run, w, &env, (const uint8_t *)"", 0);
}

static void test_run_link_acks_each_batch_cumulatively_on_the_data_socket(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    run_worker_t *w = &f->workers[0];
    deliver(f, w, 1);
    assert_int_equal(f->link.n_sent, 1);
    assert_true(f->link.sent[0].data);
    assert_int_equal(f->link.sent[0].body, STAMPEDE__ENVELOPE__BODY_ACK);
    assert_int_equal(f->link.sent[0].ack_up_to, 1);
    deliver(f, w, 3); /* past a gap: only the cumulative ack again */
    assert_int_equal(f->link.sent[1].ack_up_to, 1);
    deliver(f, w, 2);
    deliver(f, w, 2); /* a resend after a reconnect */
    assert_int_equal(f->link.sent[2].ack_up_to, 2);
    assert_int_equal(f->link.sent[3].ack_up_to, 2);
    assert_int_equal(w->acked_seq, 2);
    fixture_destroy(f);
}

static void test_run_link_done_after_the_last_batch_releases_the_worker(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    run_worker_t *w = &f->workers[1];
    Stampede__Done done = STAMPEDE__DONE__INIT;
    done.last_seq = 1;
    collect_done(f->run, w, &done); /* announced, batch 1 not merged yet: not released */
    assert_int_equal(f->link.n_sent, 0);
    assert_int_equal(w->state, RUN_WORKER_RUNNING);
    deliver(f, w, 1);
    assert_int_equal(w->state, RUN_WORKER_COMPLETE);
    const sent_t *release = &f->link.sent[f->link.n_sent - 1];
    assert_ptr_equal(release->to, w);
    assert_int_equal(release->body, STAMPEDE__ENVELOPE__BODY_STOP);
    assert_false(release->stop_cancel);
    assert_string_equal(release->stop_reason, "run complete");
    fixture_destroy(f);
}

static void test_run_link_stop_cancels_only_the_unfinished_workers(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    f->workers[1].state = RUN_WORKER_COMPLETE;
    drain_stop(f->run, "a limit");
    assert_true(f->run->stopping);
    assert_int_equal(f->link.n_sent, 1);
    assert_ptr_equal(f->link.sent[0].to, &f->workers[0]);
    assert_int_equal(f->link.sent[0].body, STAMPEDE__ENVELOPE__BODY_STOP);
    assert_true(f->link.sent[0].stop_cancel);
    assert_false(f->link.sent[0].stop_abandon);
    assert_string_equal(f->link.sent[0].stop_reason, "a limit");
    fixture_destroy(f);
}

static void test_run_link_a_loss_gives_the_share_to_the_survivor(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    run_worker_t *lost = &f->workers[0], *survivor = &f->workers[1];
    size_t held = lost->n_held;
    assert_true(held > 0);
    int64_t last_word = f->run->start_ns + 5;
    rebalance_worker_lost(f->run, lost, "no heartbeat", false, last_word);
    assert_int_equal(lost->state, RUN_WORKER_LOST);
    assert_true(lost->taken_over);
    assert_int_equal(f->run->n_losses, 1);
    assert_int_equal(f->run->losses[0].from_ns, last_word);
    bool rebalanced = false, abandoned = false;
    for (size_t i = 0; i < f->link.n_sent; i++) {
        const sent_t *s = &f->link.sent[i];
        if (s->to == survivor && s->body == STAMPEDE__ENVELOPE__BODY_REBALANCE)
            rebalanced = s->adopted == held;
        if (s->to == lost && s->body == STAMPEDE__ENVELOPE__BODY_STOP)
            abandoned = s->stop_abandon;
    }
    assert_true(rebalanced);
    assert_true(abandoned);
    assert_false(merge_partial(f->run->merge, NULL)); /* taken over: nothing is missing */
    fixture_destroy(f);
}

static void test_run_link_a_loss_with_no_survivor_leaves_the_run_partial(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    f->workers[1].state = RUN_WORKER_COMPLETE;
    f->workers[1].done = true;
    rebalance_worker_lost(f->run, &f->workers[0], "no heartbeat", false, f->run->start_ns);
    assert_false(f->workers[0].taken_over);
    assert_true(merge_partial(f->run->merge, NULL));
    fixture_destroy(f);
}

static void test_run_link_a_taken_over_worker_back_rejoins_with_a_probe(void **state) {
    (void)state;
    fixture_t *f = fixture_new(true);
    run_worker_t *w = &f->workers[0];
    rebalance_worker_lost(f->run, w, "no heartbeat", false, f->run->start_ns);
    size_t before = f->link.n_sent;
    w->abandon_sent_ns = 0; /* a heartbeat since the loss's own abandon */
    rebalance_worker_back(f->run, w);
    assert_int_equal(w->state, RUN_WORKER_PROBING);
    assert_false(w->taken_over);
    assert_int_equal(w->acked_seq, 0);
    bool abandoned = false, probed = false;
    for (size_t i = before; i < f->link.n_sent; i++) {
        abandoned |=
            f->link.sent[i].body == STAMPEDE__ENVELOPE__BODY_STOP && f->link.sent[i].stop_abandon;
        probed |= f->link.sent[i].body == STAMPEDE__ENVELOPE__BODY_PROBE;
    }
    assert_true(abandoned);
    assert_true(probed);
    fixture_destroy(f);
}

static void test_run_link_back_without_join_waits_and_says_so_once(void **state) {
    (void)state;
    fixture_t *f = fixture_new(false);
    run_worker_t *w = &f->workers[0];
    rebalance_worker_lost(f->run, w, "no heartbeat", false, f->run->start_ns);
    w->abandon_sent_ns = 0;
    rebalance_worker_back(f->run, w);
    assert_int_equal(w->state, RUN_WORKER_LOST);
    assert_true(w->back_said);
    assert_non_null(strstr(f->link.last_said, "waits for the next run"));
    size_t said = f->link.n_said;
    w->abandon_sent_ns = 0;
    rebalance_worker_back(f->run, w);
    assert_int_equal(f->link.n_said, said);
    fixture_destroy(f);
}

static void test_registry_finds_every_worker_by_routing_id_after_removals(void **state) {
    (void)state;
    registry_t *r = registry_new();
    assert_non_null(r);
    enum { N = 1000 };
    registry_worker_t *added[N];
    for (uint32_t i = 0; i < N; i++) {
        char id[16], name[16];
        int len = snprintf(id, sizeof id, "id-%u", i);
        snprintf(name, sizeof name, "w%u", i);
        added[i] = registry_add(r, id, (size_t)len, name, 0);
        assert_non_null(added[i]);
    }
    for (uint32_t i = 0; i < N; i += 2)
        registry_remove(r, added[i]);
    assert_int_equal(registry_size(r), N / 2);
    for (uint32_t i = 0; i < N; i++) {
        char id[16];
        int len = snprintf(id, sizeof id, "id-%u", i);
        registry_worker_t *w = registry_find(r, id, (size_t)len);
        if (i % 2)
            assert_ptr_equal(w, added[i]);
        else
            assert_null(w);
    }
    /* The run parts are listed in Hello order, with the entries. */
    assert_ptr_equal(registry_at(r, 0), added[1]);
    assert_ptr_equal(registry_of(&registry_at(r, 1)->run), added[3]);
    assert_null(registry_find(r, "id-1x", 5));
    registry_destroy(&r);
    assert_null(r);
}

static void test_registry_silence_is_checked_only_once_a_worker_can_be_silent(void **state) {
    (void)state;
    registry_t *r = registry_new();
    registry_worker_t *a = registry_add(r, "a", 1, "a", 1000);
    registry_worker_t *b = registry_add(r, "b", 1, "b", 4000);
    assert_int_equal(registry_next_silence(r, 3000), 4000);
    a->run.state = RUN_WORKER_LOST; /* finished: it cannot go silent again */
    assert_int_equal(registry_next_silence(r, 3000), 7000);
    b->run.state = RUN_WORKER_COMPLETE;
    assert_true(registry_next_silence(r, 3000) == INT64_MAX);
    /* A worker of the run quiet for 1.5 heartbeats is silent; its in-flight count is left out. */
    b->run.state = RUN_WORKER_RUNNING;
    b->run.index = 0;
    b->run.inflight = 7;
    assert_int_equal(registry_inflight(r, 5000, 1000), 7);
    run_worker_t *runs[] = {&a->run, &b->run};
    assert_int_equal(registry_silent_of(runs, 2, 5000, 1000), 0);
    assert_int_equal(registry_inflight(r, 5600, 1000), 0);
    assert_int_equal(registry_silent_of(runs, 2, 5600, 1000), 1);
    assert_int_equal(registry_inflight_of(runs, 2, 5600, 1000), 0);
    registry_destroy(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_link_acks_each_batch_cumulatively_on_the_data_socket),
        cmocka_unit_test(test_run_link_done_after_the_last_batch_releases_the_worker),
        cmocka_unit_test(test_run_link_stop_cancels_only_the_unfinished_workers),
        cmocka_unit_test(test_run_link_a_loss_gives_the_share_to_the_survivor),
        cmocka_unit_test(test_run_link_a_loss_with_no_survivor_leaves_the_run_partial),
        cmocka_unit_test(test_run_link_a_taken_over_worker_back_rejoins_with_a_probe),
        cmocka_unit_test(test_run_link_back_without_join_waits_and_says_so_once),
        cmocka_unit_test(test_registry_finds_every_worker_by_routing_id_after_removals),
        cmocka_unit_test(test_registry_silence_is_checked_only_once_a_worker_can_be_silent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
