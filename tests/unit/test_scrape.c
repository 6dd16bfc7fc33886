/* controller/scrape: /metrics GETs on a loop, never blocking it: the mock's page arrives parsed,
 * a server that accepts and never answers costs the timeout and no more, a closed port fails at
 * once, and the loop keeps its other timers on time meanwhile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "mock_spawn.h"
#include "scrape.h"

#define MS 1000000LL

MOCK_GROUP_FIXTURE("--ttft-ms", "1")

typedef struct got {
    int calls;
    prom_page_t *page;
    char error[256];
    int64_t start_ns, end_ns;
} got_t;

static void on_done(void *arg, prom_page_t *page, const char *error, int64_t start_ns,
                    int64_t end_ns) {
    got_t *g = arg;
    g->calls++;
    g->page = page;
    snprintf(g->error, sizeof g->error, "%s", error ? error : "");
    g->start_ns = start_ns;
    g->end_ns = end_ns;
}

typedef struct ticker {
    int ticks;
    int64_t worst_late_ns, due_ns;
} ticker_t;

/* A 10 ms timer that notes how late it fires: the scrape must not hold the loop. */
static void on_tick(loop_t *loop, uint64_t id, void *arg) {
    ticker_t *t = arg;
    int64_t late = loop_now_ns() - t->due_ns;
    if (late > t->worst_late_ns)
        t->worst_late_ns = late;
    t->ticks++;
    t->due_ns = loop_now_ns() + 10 * MS;
    loop_timer_at(loop, t->due_ns, on_tick, t);
}

typedef struct metrics_url {
    char text[64];
} metrics_url_t;

/* The /metrics page of a server on a loopback port. */
static metrics_url_t metrics_url(int port) {
    metrics_url_t url;
    snprintf(url.text, sizeof url.text, "http://127.0.0.1:%d/metrics", port);
    return url;
}

/* Runs the loop until g has its answer or limit_ns passes, sleeping in poll on loop_fd between
 * turns. */
static void run_until_done(loop_t *loop, got_t *g, int64_t limit_ns) {
    int64_t end = loop_now_ns() + limit_ns;
    struct pollfd p = {.fd = loop_fd(loop), .events = POLLIN};
    loop_run_once(loop); /* the timers scrape_get set count for loop_fd from here */
    while (g->calls == 0 && loop_now_ns() < end) {
        poll(&p, 1, 1000); /* as the controller waits: woken by curl's sockets and timers */
        loop_run_once(loop);
    }
}

/* A scrape on a loop of its own. */
typedef struct scraper {
    loop_t *loop;
    scrape_t *s;
} scraper_t;

static scraper_t scraper_new(int64_t timeout_ns) {
    scraper_t sc = {.loop = loop_new()};
    assert_non_null(sc.loop);
    sc.s = scrape_new(sc.loop, timeout_ns);
    assert_non_null(sc.s);
    return sc;
}

static void scraper_destroy(scraper_t *sc) {
    scrape_destroy(&sc->s);
    loop_destroy(&sc->loop);
}

static void test_scrape_reads_the_mocks_page(void **state) {
    scraper_t sc = scraper_new(2000 * MS);
    metrics_url_t url = metrics_url(mock.port);
    got_t g = {0};
    assert_int_equal(scrape_get(sc.s, url.text, on_done, &g), 0);
    assert_int_equal(g.calls, 0); /* asynchronous: nothing answered before the loop runs */
    run_until_done(sc.loop, &g, 5000 * MS);
    assert_int_equal(g.calls, 1);
    assert_string_equal(g.error, "");
    assert_non_null(g.page);
    bool found = false;
    for (size_t i = 0; i < g.page->n_samples; i++)
        found |= strcmp(g.page->samples[i].name, "vllm:num_requests_running") == 0;
    assert_true(found);
    assert_int_equal(g.page->lines_skipped, 0);
    prom_page_destroy(&g.page);
    scraper_destroy(&sc);
}

static void test_scrape_of_a_server_that_never_answers_ends_at_the_timeout(void **state) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0); /* the kernel accepts; nobody ever answers */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    metrics_url_t url = metrics_url(ntohs(a.sin_port));
    scraper_t sc = scraper_new(300 * MS);
    ticker_t t = {.due_ns = loop_now_ns() + 10 * MS};
    uint64_t tick = loop_timer_at(sc.loop, t.due_ns, on_tick, &t);
    got_t g = {0};
    assert_int_equal(scrape_get(sc.s, url.text, on_done, &g), 0);
    run_until_done(sc.loop, &g, 5000 * MS);
    assert_int_equal(g.calls, 1);
    assert_null(g.page);
    assert_string_equal(g.error, "timed out after 300 ms");
    /* the timeout, give or take a loaded machine's scheduling: never the 5 s of the guard */
    assert_true(g.end_ns - g.start_ns >= 290 * MS);
    assert_true(g.end_ns - g.start_ns < 2000 * MS);
    assert_true(t.ticks >= 5); /* the loop's own timers went on meanwhile */
    (void)tick;
    scraper_destroy(&sc);
    close(fd);
}

static void test_scrape_of_a_closed_port_fails_without_waiting_for_the_timeout(void **state) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd); /* a port nobody listens on */
    metrics_url_t url = metrics_url(ntohs(a.sin_port));
    scraper_t sc = scraper_new(5000 * MS);
    got_t g = {0};
    assert_int_equal(scrape_get(sc.s, url.text, on_done, &g), 0);
    run_until_done(sc.loop, &g, 4000 * MS);
    assert_int_equal(g.calls, 1);
    assert_null(g.page);
    assert_true(strstr(g.error, "onnect") != NULL);
    scraper_destroy(&sc);
}

static void test_scrape_destroy_abandons_gets_in_flight_without_calling_back(void **state) {
    loop_t *loop = loop_new();
    scrape_t *s = scrape_new(loop, 2000 * MS);
    metrics_url_t url = metrics_url(mock.port);
    got_t g = {0};
    assert_int_equal(scrape_get(s, url.text, on_done, &g), 0);
    assert_int_equal(scrape_get(s, "http://bad url", on_done, &g), 0);
    scrape_destroy(&s);
    loop_run_once(loop);
    assert_int_equal(g.calls, 0);
    loop_destroy(&loop);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrape_reads_the_mocks_page),
        cmocka_unit_test(test_scrape_of_a_server_that_never_answers_ends_at_the_timeout),
        cmocka_unit_test(test_scrape_of_a_closed_port_fails_without_waiting_for_the_timeout),
        cmocka_unit_test(test_scrape_destroy_abandons_gets_in_flight_without_calling_back),
    };
    return cmocka_run_group_tests(tests, mock_setup, mock_teardown);
}
