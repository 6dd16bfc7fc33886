/* Each GET is its own easy handle, freed when it ends; the multi handle keeps the connections,
 * so a page scraped every second reuses one. The body is capped at SCRAPE_MAX_PAGE. */
#include "scrape.h"

#include <assert.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "curl_loop.h"
#include "curl_net.h"

typedef struct scrape_get {
    scrape_t *owner;
    CURL *easy;
    buffer_t body;
    scrape_done_fn fn;
    void *arg;
    int64_t start_ns;
    bool too_big;
    char curl_error[CURL_ERROR_SIZE];
    struct scrape_get *prev, *next;
} scrape_get_t;

struct scrape {
    loop_t *loop;
    CURLM *multi;
    curl_loop_t driver;
    struct curl_slist *headers;
    int64_t timeout_ns;
    scrape_get_t *gets; /* in flight */
    size_t inflight;
    uint64_t failure_timer; /* reports GETs that could not start, from the loop */
    scrape_get_t *failed;   /* those, waiting for the timer */
};

static pthread_once_t scrape_curl_once = PTHREAD_ONCE_INIT;

static void scrape_curl_global_init(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void scrape_unlink(scrape_get_t **list, scrape_get_t *g) {
    if (g->prev)
        g->prev->next = g->next;
    else
        *list = g->next;
    if (g->next)
        g->next->prev = g->prev;
    g->prev = g->next = NULL;
}

static void scrape_link(scrape_get_t **list, scrape_get_t *g) {
    g->prev = NULL;
    g->next = *list;
    if (*list)
        (*list)->prev = g;
    *list = g;
}

static void scrape_free_get(scrape_get_t *g) {
    if (g->easy)
        curl_easy_cleanup(g->easy);
    buffer_clear(&g->body);
    free(g);
}

/* Reports g (already unlinked) to its callback and frees it. */
static void scrape_report(scrape_get_t *g, CURLcode result) {
    char error[CURL_ERROR_SIZE + 64] = "";
    long status = 0;
    if (g->easy)
        curl_easy_getinfo(g->easy, CURLINFO_RESPONSE_CODE, &status);
    if (g->too_big)
        snprintf(error, sizeof error, "page larger than %u MiB", SCRAPE_MAX_PAGE >> 20);
    else if (result == CURLE_OPERATION_TIMEDOUT)
        snprintf(error, sizeof error, "timed out after %.0f ms", g->owner->timeout_ns / 1e6);
    else if (result != CURLE_OK)
        snprintf(error, sizeof error, "%s",
                 g->curl_error[0] ? g->curl_error : curl_easy_strerror(result));
    else if (status >= 400 || status < 100)
        snprintf(error, sizeof error, "HTTP %ld", status);
    prom_page_t *page = NULL;
    if (!error[0] && !(page = prom_page_parse(buffer_head(&g->body), buffer_pending(&g->body))))
        snprintf(error, sizeof error, "out of memory parsing the page");
    g->fn(g->arg, page, page ? NULL : error, g->start_ns, loop_now_ns());
    scrape_free_get(g);
}

static void scrape_after_action(void *arg) {
    scrape_t *self = arg;
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        scrape_get_t *g = NULL;
        CURLcode result = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&g);
        curl_multi_remove_handle(self->multi, g->easy);
        scrape_unlink(&self->gets, g);
        self->inflight--;
        scrape_report(g, result);
    }
}

static void scrape_on_failure_timer(loop_t *loop, uint64_t timer_id, void *arg) {
    scrape_t *self = arg;
    self->failure_timer = 0;
    while (self->failed) {
        scrape_get_t *g = self->failed;
        scrape_unlink(&self->failed, g);
        self->inflight--;
        scrape_report(g, CURLE_FAILED_INIT);
    }
}

static size_t scrape_on_body(char *data, size_t size, size_t n, void *arg) {
    scrape_get_t *g = arg;
    size_t len = size * n;
    if (buffer_pending(&g->body) + len > SCRAPE_MAX_PAGE) {
        g->too_big = true;
        return 0;
    }
    return buffer_append(&g->body, data, len) == 0 ? len : 0;
}

scrape_t *scrape_new(loop_t *loop, int64_t timeout_ns) {
    assert(loop && timeout_ns > 0);
    pthread_once(&scrape_curl_once, scrape_curl_global_init);
    scrape_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->timeout_ns = timeout_ns;
    /* The classic text format, not OpenMetrics (research/distributed-mechanics.md §6.4). */
    self->headers = curl_slist_append(NULL, "Accept: text/plain;version=0.0.4");
    if (!self->headers || !(self->multi = curl_multi_init())) {
        scrape_destroy(&self);
        return NULL;
    }
    curl_loop_bind(&self->driver, loop, self->multi, NULL, scrape_after_action, self);
    return self;
}

void scrape_destroy(scrape_t **self_p) {
    scrape_t *self = *self_p;
    if (!self)
        return;
    if (self->multi)
        curl_loop_close(&self->driver);
    loop_timer_cancel(self->loop, self->failure_timer);
    while (self->gets) {
        scrape_get_t *g = self->gets;
        scrape_unlink(&self->gets, g);
        curl_multi_remove_handle(self->multi, g->easy);
        scrape_free_get(g);
    }
    while (self->failed) {
        scrape_get_t *g = self->failed;
        scrape_unlink(&self->failed, g);
        scrape_free_get(g);
    }
    if (self->multi) /* closes the cached connections (and unwatches them) */
        curl_multi_cleanup(self->multi);
    curl_slist_free_all(self->headers);
    free(self);
    *self_p = NULL;
}

static bool scrape_setup(scrape_t *self, scrape_get_t *g, const char *url) {
    CURL *e = g->easy = curl_easy_init();
    if (!e)
        return false;
    long timeout_ms = (long)(self->timeout_ns / 1000000);
    curl_easy_setopt(e, CURLOPT_PRIVATE, g);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, self->headers);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, scrape_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, g);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, g->curl_error);
    curl_net_apply(NULL, e); /* the proxy environment is ignored, as by the requests */
    return curl_easy_setopt(e, CURLOPT_URL, url) == CURLE_OK &&
           curl_multi_add_handle(self->multi, e) == CURLM_OK;
}

int scrape_get(scrape_t *self, const char *url, scrape_done_fn fn, void *arg) {
    assert(self && url && fn);
    scrape_get_t *g = calloc(1, sizeof *g);
    if (!g)
        return -1;
    *g = (scrape_get_t){.owner = self, .fn = fn, .arg = arg, .start_ns = loop_now_ns()};
    buffer_init(&g->body);
    self->inflight++;
    if (scrape_setup(self, g, url)) {
        scrape_link(&self->gets, g);
        return 0;
    }
    snprintf(g->curl_error, sizeof g->curl_error, "cannot start a GET of %s", url);
    scrape_link(&self->failed, g);
    if (!self->failure_timer)
        self->failure_timer =
            loop_timer_at(self->loop, loop_now_ns(), scrape_on_failure_timer, self);
    return 0;
}
