#include "sim_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "sim_figures.h"

/* One request in flight, with the chunk arrays its record points to (kept for reuse). */
/* Where a request in flight is: on its way to the server, in it, or its reply on its way back. */
typedef enum { SIM_TO_SERVER, SIM_AT_SERVER, SIM_TO_CLIENT } sim_stage_t;

typedef struct sim_request {
    struct sim_request *prev, *next; /* in flight, or (next) the free list */
    sim_backend_t *backend;
    sim_stage_t stage;
    mock_virtual_request_t *server_req;
    const engine_request_t *request; /* its body (valid until done) */
    request_record_t *record;
    engine_done_fn done;
    void *arg;
    uint64_t timeout_timer;
    uint64_t path_timer; /* the network delay of the stage in progress */
    int64_t *chunk_ns;
    uint16_t *chunk_tokens;
    size_t chunk_cap;
    buffer_t text; /* the reply's text on its way back */
} sim_request_t;

struct sim_backend {
    loop_t *loop;
    mock_virtual_t *server;
    const config_t *cfg;
    int64_t delay_ns; /* one way, client to server and back */
    sim_figures_t *figures;
    sim_request_t *inflight, *free_list;
    uint32_t n_inflight;
    uint32_t *per_endpoint; /* in flight by endpoint index */
};

sim_backend_t *sim_backend_new(loop_t *loop, mock_virtual_t *server, const config_t *cfg,
                               int64_t delay_ns) {
    sim_backend_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->delay_ns = delay_ns;
    self->loop = loop;
    self->server = server;
    self->cfg = cfg;
    self->per_endpoint = calloc(cfg->target.n_endpoints + 1, sizeof(*self->per_endpoint));
    if (!self->per_endpoint) {
        free(self);
        return NULL;
    }
    return self;
}

static void sim_request_unlink(sim_backend_t *self, sim_request_t *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        self->inflight = r->next;
    if (r->next)
        r->next->prev = r->prev;
    self->n_inflight--;
    uint32_t e = r->record->endpoint;
    if (e < self->cfg->target.n_endpoints)
        self->per_endpoint[e]--;
    loop_timer_cancel(self->loop, r->timeout_timer);
    loop_timer_cancel(self->loop, r->path_timer);
    r->timeout_timer = r->path_timer = 0;
    r->server_req = NULL;
}

static void sim_request_put(sim_backend_t *self, sim_request_t *r) {
    r->prev = NULL;
    r->next = self->free_list;
    self->free_list = r;
}

/* The record's timings, usage and chunks from the reply's events, each received the network
 * delay after the server sent it. */
static void sim_request_fill(sim_request_t *r, const mock_virtual_reply_t *reply) {
    request_record_t *rec = r->record;
    int64_t delay = r->backend->delay_ns;
    if (reply->status) {
        rec->http_status = reply->status;
        /* the head goes out as the request arrives, as uvicorn sends it */
        rec->headers_ns = rec->send_ns + 2 * delay;
    }
    if (reply->n_events &&
        buffer_grow_pair(&r->chunk_ns, sizeof(*r->chunk_ns), &r->chunk_tokens,
                         sizeof(*r->chunk_tokens), &r->chunk_cap, reply->n_events) != 0) {
        snprintf(rec->error_message, sizeof(rec->error_message), "out of memory for its chunks");
        rec->error = ERROR_PROTOCOL;
        return;
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < reply->n_events; i++) {
        r->chunk_ns[i] = reply->event_ns[i] + delay;
        r->chunk_tokens[i] = reply->event_tokens[i];
        uint32_t before = seen;
        seen += reply->event_tokens[i];
        bool reasoning = before < reply->reasoning_tokens;
        bool content = seen > reply->reasoning_tokens;
        rec->reasoning_chunks += reasoning;
        rec->content_chunks += content;
        if (content && !rec->first_content_ns)
            rec->first_content_ns = r->chunk_ns[i];
    }
    rec->n_chunks = reply->n_events;
    rec->chunk_ns = r->chunk_ns;
    rec->chunk_tokens = r->chunk_tokens;
    if (reply->n_events)
        rec->first_token_ns = r->chunk_ns[0];
}

/* Hands the record and the reply's text to the session, and the request back to the pool. */
static void sim_request_deliver(sim_request_t *r) {
    sim_backend_t *self = r->backend;
    sim_request_unlink(self, r);
    r->record->end_ns = loop_now_ns();
    r->done(r->arg, r->record, r->text.data ? r->text.data : "", r->text.len);
    sim_request_put(self, r);
}

static void sim_backend_on_delivered(loop_t *loop, uint64_t id, void *arg) {
    sim_request_t *r = arg;
    (void)loop;
    (void)id;
    r->path_timer = 0;
    sim_request_deliver(r);
}

static void sim_backend_on_reply(void *arg, const mock_virtual_reply_t *reply) {
    sim_request_t *r = arg;
    sim_backend_t *self = r->backend;
    r->server_req = NULL;
    r->stage = SIM_TO_CLIENT;
    request_record_t *rec = r->record;
    buffer_reset(&r->text);
    sim_request_fill(r, reply);
    if (self->figures)
        sim_figures_reply(self->figures, reply);
    if (reply->status != 200) {
        rec->error = reply->status == 400 && strstr(reply->error, "maximum context length")
                         ? ERROR_CONTEXT_LENGTH
                     : reply->status >= 500 ? ERROR_HTTP_5XX
                                            : ERROR_HTTP_4XX;
        snprintf(rec->error_message, sizeof(rec->error_message), "HTTP %d: %s", reply->status,
                 reply->error);
    } else {
        rec->has_usage = true;
        rec->prompt_tokens = reply->prompt_tokens;
        rec->completion_tokens = reply->completion_tokens;
        rec->cached_tokens = reply->cached_tokens;
        rec->finish_reason = reply->finish == MOCK_FINISH_STOP ? FINISH_STOP : FINISH_LENGTH;
        rec->content_bytes = reply->text_len;
        if (buffer_append(&r->text, reply->text, reply->text_len) < 0) {
            rec->error = ERROR_PROTOCOL;
            snprintf(rec->error_message, sizeof(rec->error_message), "out of memory for its text");
        }
    }
    if (self->delay_ns <= 0) {
        sim_request_deliver(r);
        return;
    }
    r->path_timer =
        loop_timer_at(self->loop, loop_now_ns() + self->delay_ns, sim_backend_on_delivered, r);
    if (!r->path_timer)
        sim_request_deliver(r); /* out of memory: delivered without the delay */
}

/* The request is given up by the client (its timeout, a cancel): the events it received so far
 * are its. */
static void sim_request_give_up(sim_request_t *r, error_class_t error, const char *why) {
    sim_backend_t *self = r->backend;
    request_record_t *rec = r->record;
    int64_t now = loop_now_ns();
    if (r->stage == SIM_AT_SERVER) {
        mock_virtual_reply_t partial;
        mock_virtual_cancel(self->server, r->server_req, &partial);
        sim_request_fill(r, &partial);
    }
    while (rec->n_chunks > 0 && rec->chunk_ns[rec->n_chunks - 1] > now)
        rec->n_chunks--; /* still on the way */
    if (rec->n_chunks == 0)
        rec->first_token_ns = rec->first_content_ns = 0;
    if (rec->headers_ns > now)
        rec->headers_ns = 0;
    buffer_reset(&r->text);
    rec->error = error;
    snprintf(rec->error_message, sizeof(rec->error_message), "%s after %u chunks", why,
             rec->n_chunks);
    sim_request_deliver(r);
}

static void sim_backend_on_timeout(loop_t *loop, uint64_t id, void *arg) {
    sim_request_t *r = arg;
    (void)loop;
    (void)id;
    r->timeout_timer = 0;
    sim_request_give_up(r, ERROR_TIMEOUT, "timed out");
}

/* The request reaches the server. */
static int sim_request_arrive(sim_request_t *r) {
    sim_backend_t *self = r->backend;
    static const mock_api_kind_t kinds[CONFIG_API_COUNT] = {[API_CHAT] = MOCK_API_CHAT,
                                                            [API_COMPLETIONS] =
                                                                MOCK_API_COMPLETIONS,
                                                            [API_MESSAGES] = MOCK_API_MESSAGES,
                                                            [API_RESPONSES] = MOCK_API_RESPONSES};
    mock_api_kind_t kind = kinds[self->cfg->target.api];
    r->stage = SIM_AT_SERVER;
    r->server_req = mock_virtual_submit(self->server, kind, r->request->body, r->request->body_len,
                                        sim_backend_on_reply, r);
    return r->server_req ? 0 : -1;
}

static void sim_backend_on_arrival(loop_t *loop, uint64_t id, void *arg) {
    sim_request_t *r = arg;
    (void)loop;
    (void)id;
    r->path_timer = 0;
    if (sim_request_arrive(r) != 0)
        sim_request_give_up(r, ERROR_CONNECT, "out of memory in the simulated server");
}

static int sim_backend_submit(void *ctx, const engine_request_t *req, engine_done_fn done,
                              void *arg) {
    sim_backend_t *self = ctx;
    sim_request_t *r = self->free_list;
    if (r)
        self->free_list = r->next;
    else if (!(r = calloc(1, sizeof(*r))))
        return -1;
    r->backend = self;
    r->request = req;
    r->record = req->record;
    r->done = done;
    r->arg = arg;
    r->stage = SIM_TO_SERVER;
    buffer_reset(&r->text);
    request_record_t *rec = req->record;
    rec->send_ns = loop_now_ns();
    int rc = 0;
    if (self->delay_ns > 0)
        rc = (r->path_timer = loop_timer_at(self->loop, rec->send_ns + self->delay_ns,
                                            sim_backend_on_arrival, r))
                 ? 0
                 : -1;
    else
        rc = sim_request_arrive(r);
    if (rc != 0) {
        sim_request_put(self, r);
        return -1;
    }
    r->prev = NULL;
    r->next = self->inflight;
    if (self->inflight)
        self->inflight->prev = r;
    self->inflight = r;
    self->n_inflight++;
    if (rec->endpoint < self->cfg->target.n_endpoints)
        self->per_endpoint[rec->endpoint]++;
    int64_t timeout = self->cfg->target.timeout_ns;
    if (timeout > 0)
        r->timeout_timer =
            loop_timer_at(self->loop, rec->send_ns + timeout, sim_backend_on_timeout, r);
    return 0;
}

static uint32_t sim_backend_inflight_to(void *ctx, uint32_t endpoint) {
    sim_backend_t *self = ctx;
    return endpoint < self->cfg->target.n_endpoints ? self->per_endpoint[endpoint] : 0;
}

static void sim_backend_cancel_all(void *ctx) {
    sim_backend_t *self = ctx;
    while (self->inflight)
        sim_request_give_up(self->inflight, ERROR_CANCELLED, "cancelled");
}

session_backend_t sim_backend_session(sim_backend_t *self) {
    return (session_backend_t){.submit = sim_backend_submit,
                               .inflight_to = sim_backend_inflight_to,
                               .cancel_all = sim_backend_cancel_all,
                               .ctx = self};
}

void sim_backend_set_figures(sim_backend_t *self, sim_figures_t *figures) {
    self->figures = figures;
}

uint32_t sim_backend_inflight(const sim_backend_t *self) {
    return self->n_inflight;
}

static void sim_request_free(sim_request_t *r) {
    buffer_clear(&r->text);
    free(r->chunk_ns);
    free(r->chunk_tokens);
    free(r);
}

void sim_backend_destroy(sim_backend_t **self_p) {
    sim_backend_t *self = *self_p;
    if (!self)
        return;
    while (self->inflight) {
        sim_request_t *r = self->inflight;
        if (r->stage == SIM_AT_SERVER)
            mock_virtual_cancel(self->server, r->server_req, NULL);
        sim_request_unlink(self, r);
        sim_request_free(r);
    }
    while (self->free_list) {
        sim_request_t *r = self->free_list;
        self->free_list = r->next;
        sim_request_free(r);
    }
    free(self->per_endpoint);
    free(self);
    *self_p = NULL;
}
