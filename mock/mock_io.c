/* A connection's output and life, and the server's timers: what a response handler
 * (mock_stream.c) asks of the server, below both. It calls back up only through the handlers the
 * server installed in mock_server_t (its loop callbacks, and the abort of a connection's request),
 * so mock_server.c and mock_stream.c no longer call each other. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mock_internal.h"

void mock_io_schedule(mock_server_t *self, mock_timer_t *timer, int64_t due_ns) {
    loop_timer_cancel(self->loop, timer->id);
    if (timer == &self->step_timer || timer == &self->accept_timer)
        timer->id = loop_timer_at(self->loop, due_ns, self->on_own_timer, self);
    else
        timer->id = loop_timer_at(self->loop, due_ns, self->on_conn_timer,
                                  (char *)timer - offsetof(mock_conn_t, timer));
    if (!timer->id) {
        fprintf(stderr, "stampede mock: out of memory scheduling a timer\n");
        abort();
    }
}

void mock_io_watch(mock_server_t *self, mock_conn_t *c, int mask) {
    if (c->dead || c->events == mask)
        return;
    if (loop_watch(self->loop, c->fd, mask, 0, self->on_conn_event, c) == 0)
        c->events = mask;
}

void mock_io_close(mock_server_t *self, mock_conn_t *c, bool reset) {
    if (c->dead)
        return;
    if (reset) {
        struct linger linger = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
    }
    loop_unwatch(self->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    c->dead = true;
    loop_timer_cancel(self->loop, c->timer.id);
    c->timer.id = 0;
    if (c->req)
        self->abort_request(self, c->req);
    if (c->prev)
        c->prev->next = c->next;
    else
        self->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next_dead = self->dead;
    self->dead = c;
    self->n_conns--;
}

void mock_io_flush(mock_server_t *self, mock_conn_t *c) {
    if (c->dead || c->paused_until_ns)
        return;
    while (buffer_pending(&c->out) > 0) {
        ssize_t n = send(c->fd, buffer_head(&c->out), buffer_pending(&c->out), MSG_NOSIGNAL);
        if (n > 0) {
            buffer_consume(&c->out, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            mock_io_watch(self, c, c->events | LOOP_WRITABLE);
            return;
        }
        mock_io_close(self, c, false);
        return;
    }
    if (c->closing) {
        mock_io_close(self, c, false);
        return;
    }
    if (c->events & LOOP_WRITABLE)
        mock_io_watch(self, c, c->events & ~LOOP_WRITABLE);
}

void mock_io_respond(mock_server_t *self, mock_conn_t *c, int status, const char *content_type,
                     const char *body, size_t len, bool keep_alive, const char *extra_header) {
    char head[1024];
    int n = mock_http_format_head(head, sizeof(head), status, content_type, (long long)len,
                                  !keep_alive, extra_header);
    mock_metrics_count_status(&self->metrics, status);
    if (n < 0 || buffer_append(&c->out, head, (size_t)n) < 0 ||
        (body && buffer_append(&c->out, body, len) < 0)) {
        mock_io_close(self, c, false);
        return;
    }
    mock_io_response_done(self, c, keep_alive);
    mock_io_flush(self, c);
}

void mock_io_respond_error(mock_server_t *self, mock_conn_t *c, int status, const char *message,
                           bool keep_alive) {
    buffer_t *page = &self->page;
    buffer_reset(page);
    if (mock_api_error_body(page, status, message, self->options.flat_errors) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    mock_io_respond(self, c, status, "application/json", page->data, page->len, keep_alive, NULL);
}

void mock_io_response_done(mock_server_t *self, mock_conn_t *c, bool keep_alive) {
    if (c->dead)
        return;
    if (!keep_alive) {
        c->closing = true; /* mock_io_flush closes once the response is out */
        return;
    }
    if (!(c->events & LOOP_READABLE))
        mock_io_watch(self, c, c->events | LOOP_READABLE);
    if (buffer_pending(&c->in) > 0 && !c->ready) {
        c->ready = true;
        c->next_ready = self->ready;
        self->ready = c;
    }
}
