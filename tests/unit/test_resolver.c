#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "resolver.h"

/* A label over 63 octets cannot be put in a DNS query: the lookup fails on this host. */
#define UNRESOLVABLE_HOST                                                                          \
    "no-such-host-with-a-label-longer-than-sixty-three-octets-xxxxxxxx.invalid"

typedef struct outcome {
    int calls;
    bool loop_ran_meanwhile; /* a timer fired before the lookups ended */
    char line0[720];
    bool line1_null;
    char error[1024];
} outcome_t;

static void on_done(void *arg, resolver_t *resolver) {
    outcome_t *o = arg;
    o->calls++;
    const char *line = resolver_line(resolver, 0);
    snprintf(o->line0, sizeof o->line0, "%s", line ? line : "");
    o->line1_null = resolver_line(resolver, 1) == NULL;
    const char *error = resolver_error(resolver);
    snprintf(o->error, sizeof o->error, "%s", error ? error : "");
}

typedef struct harness {
    loop_t *loop;
    outcome_t *outcome;
    resolver_t *resolver;
} harness_t;

static void on_done_stop(void *arg, resolver_t *resolver) {
    harness_t *h = arg;
    on_done(h->outcome, resolver);
    resolver_destroy(&h->resolver); /* allowed from inside done */
    loop_stop(h->loop);
}

static void on_tick(loop_t *loop, uint64_t id, void *arg) {
    outcome_t *o = arg;
    o->loop_ran_meanwhile = o->calls == 0;
}

static void on_guard(loop_t *loop, uint64_t id, void *arg) {
    loop_stop(loop);
}

static void resolve(char *const *urls, size_t n, outcome_t *o) {
    harness_t h = {.loop = loop_new(), .outcome = o};
    assert_non_null(h.loop);
    h.resolver = resolver_new(h.loop, urls, n, NULL, NULL, on_done_stop, &h);
    assert_non_null(h.resolver);
    loop_timer_at(h.loop, loop_now_ns() + 50000000LL, on_tick, o); /* 50 ms */
    uint64_t guard = loop_timer_at(h.loop, loop_now_ns() + 20000000000LL, on_guard, NULL);
    loop_run(h.loop);
    loop_timer_cancel(h.loop, guard);
    resolver_destroy(&h.resolver);
    loop_destroy(&h.loop);
}

static void test_resolver_gives_a_pin_line_per_name_and_none_for_an_address(void **state) {
    char *urls[] = {"http://localhost:8123/v1", "http://127.0.0.1:8124"};
    outcome_t o = {0};
    resolve(urls, 2, &o);
    assert_int_equal(o.calls, 1);
    assert_true(strncmp(o.line0, "localhost:8123:", 15) == 0);
    assert_true(o.line1_null);
    assert_string_equal(o.error, "");
}

/* Each lookup slowed to 300 ms (the test hook): the loop's 50 ms timer fires before the end. */
static void test_resolver_names_the_host_it_cannot_resolve_and_the_loop_runs_meanwhile(void **s) {
    char *urls[] = {"http://localhost:8123", "http://" UNRESOLVABLE_HOST ":1/v1"};
    outcome_t o = {0};
    setenv("STAMPEDE_TEST_LOOKUP_DELAY_MS", "300", 1);
    resolve(urls, 2, &o);
    unsetenv("STAMPEDE_TEST_LOOKUP_DELAY_MS");
    assert_int_equal(o.calls, 1);
    assert_true(o.loop_ran_meanwhile);
    assert_true(o.line1_null);
    if (!strstr(o.error, "cannot resolve host " UNRESOLVABLE_HOST " (endpoint http://"))
        fail_msg("error: %s", o.error);
}

static void test_resolver_destroyed_before_its_end_waits_for_the_thread(void **state) {
    loop_t *loop = loop_new();
    char *urls[] = {"http://localhost:8123"};
    outcome_t o = {0};
    resolver_t *r = resolver_new(loop, urls, 1, NULL, NULL, on_done, &o);
    assert_non_null(r);
    resolver_destroy(&r);
    assert_null(r);
    assert_int_equal(o.calls, 0);
    loop_destroy(&loop);
}

UNIT_MAIN(
    cmocka_unit_test(test_resolver_gives_a_pin_line_per_name_and_none_for_an_address),
    cmocka_unit_test(test_resolver_names_the_host_it_cannot_resolve_and_the_loop_runs_meanwhile),
    cmocka_unit_test(test_resolver_destroyed_before_its_end_waits_for_the_thread))
