#include "curl_loop.h"

#include <assert.h>

static void curl_loop_on_timer(loop_t *loop, uint64_t timer_id, void *arg) {
    curl_loop_t *self = arg;
    self->timer_id = 0;
    int running;
    if (self->before)
        self->before(self->arg, false);
    curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    self->after(self->arg);
}

static void curl_loop_on_socket(loop_t *loop, int fd, int mask, void *arg) {
    curl_loop_t *self = arg;
    int flags = 0;
    if (mask & LOOP_READABLE)
        flags |= CURL_CSELECT_IN;
    if (mask & LOOP_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    int running;
    if (self->before)
        self->before(self->arg, true);
    curl_multi_socket_action(self->multi, fd, flags, &running);
    self->after(self->arg);
}

/* curl's timeout becomes one loop timer at an absolute instant; curl only calls this when the
 * timeout changes, and a 0 means "as soon as possible" (next loop pass). */
static int curl_loop_on_curl_timer(CURLM *multi, long timeout_ms, void *arg) {
    curl_loop_t *self = arg;
    loop_timer_cancel(self->loop, self->timer_id);
    self->timer_id = 0;
    if (timeout_ms >= 0 && !self->closing)
        self->timer_id = loop_timer_at(self->loop, loop_now_ns() + (int64_t)timeout_ms * 1000000,
                                       curl_loop_on_timer, self);
    return 0;
}

static int curl_loop_on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *arg,
                                    void *socket_arg) {
    curl_loop_t *self = arg;
    if (what == CURL_POLL_REMOVE) {
        loop_unwatch(self->loop, fd);
        return 0;
    }
    int mask = 0;
    if (what & CURL_POLL_IN)
        mask |= LOOP_READABLE;
    if (what & CURL_POLL_OUT)
        mask |= LOOP_WRITABLE;
    return loop_watch(self->loop, fd, mask, 0, curl_loop_on_socket, self) < 0 ? -1 : 0;
}

void curl_loop_bind(curl_loop_t *self, loop_t *loop, CURLM *multi, curl_loop_before_fn before,
                    curl_loop_after_fn after, void *arg) {
    assert(self && loop && multi && after);
    *self =
        (curl_loop_t){.loop = loop, .multi = multi, .before = before, .after = after, .arg = arg};
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, curl_loop_on_curl_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, curl_loop_on_curl_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, self);
}

void curl_loop_close(curl_loop_t *self) {
    self->closing = true;
    loop_timer_cancel(self->loop, self->timer_id);
    self->timer_id = 0;
}
