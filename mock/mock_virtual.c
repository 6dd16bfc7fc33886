#include "mock_virtual.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "mock_prefix_cache.h"
#include "mock_reply.h"
#include "mock_vocab.h"
#include "prompt.h"

typedef struct mock_virtual_replica {
    mock_virtual_t *server;
    uint32_t index;
    mock_engine_t *engine;
    uint64_t step_timer;
    int64_t step_start_ns; /* the end of the step in progress (the next one starts there) */
    uint32_t assigned;     /* requests routed here and not finished */
} mock_virtual_replica_t;

struct mock_virtual_request {
    mock_virtual_t *server;
    mock_virtual_request_t *prev, *next; /* the requests in flight */
    mock_seq_t seq;
    mock_virtual_replica_t *replica;
    uint64_t *ids, *hashes;
    mock_reply_t reply;
    uint32_t prompt_tokens;
    int64_t accepted_ns;
    uint64_t timer; /* the admission (after --ttft-overhead-ms), or the refusal's answer */
    int status;
    char error[512];
    int64_t *event_ns;
    uint16_t *event_tokens;
    uint32_t n_events;
    mock_virtual_done_fn done;
    void *arg;
};

struct mock_virtual {
    loop_t *loop;
    mock_options_t options;
    mock_router_t router;
    mock_vocab_t *vocab;
    mock_virtual_replica_t *replicas;
    uint32_t n_replicas;
    uint64_t requests; /* numbered from 1, as the server numbers them */
    mock_virtual_request_t *inflight;
    buffer_t text;       /* a reply's text, reused */
    int64_t *partial_ns; /* a cancelled request's events, for mock_virtual_cancel */
    uint16_t *partial_tokens;
    size_t partial_cap;
};

static const char *const mock_router_names[] = {"round_robin", "least_loaded", "prefix"};

const char *mock_router_name(mock_router_t router) {
    return router <= MOCK_ROUTER_PREFIX ? mock_router_names[router] : "?";
}

int mock_router_parse(const char *name, mock_router_t *out) {
    for (int i = 0; i <= MOCK_ROUTER_PREFIX; i++)
        if (strcmp(name, mock_router_names[i]) == 0) {
            *out = (mock_router_t)i;
            return 0;
        }
    return -1;
}

mock_virtual_t *mock_virtual_new(loop_t *loop, const mock_options_t *options, uint32_t replicas,
                                 mock_router_t router, char *err, size_t errlen) {
    if (options->fixed) {
        snprintf(err, errlen,
                 "fixed timings (ttft, itl) are not simulated: simulate runs the engine model; "
                 "name a profile");
        return NULL;
    }
    if (replicas == 0) {
        snprintf(err, errlen, "at least one replica is needed");
        return NULL;
    }
    mock_virtual_t *self = calloc(1, sizeof(*self));
    if (!self) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    self->loop = loop;
    self->options = *options;
    self->router = router;
    self->n_replicas = replicas;
    self->vocab = mock_vocab_new();
    self->replicas = calloc(replicas, sizeof(*self->replicas));
    buffer_init(&self->text);
    mock_engine_config_t config;
    mock_options_engine_config(options, &config);
    for (uint32_t i = 0; self->replicas && i < replicas; i++) {
        self->replicas[i] = (mock_virtual_replica_t){.server = self, .index = i};
        config.seed = options->seed + i; /* replicas draw apart, replica 0 as the one server */
        if (!(self->replicas[i].engine = mock_engine_new(&config))) {
            snprintf(err, errlen,
                     "cannot build the engine: kv_cache_tokens %llu is under one block or memory "
                     "is short",
                     (unsigned long long)options->kv_cache_tokens);
            mock_virtual_destroy(&self);
            return NULL;
        }
    }
    if (!self->vocab || !self->replicas) {
        snprintf(err, errlen, "out of memory");
        mock_virtual_destroy(&self);
        return NULL;
    }
    /* the copy shares the caller's distributions: the reply draws only read them */
    return self;
}

/* Out of the requests in flight and its replica's count (the router's load). */
static void mock_virtual_request_unlink(mock_virtual_request_t *req) {
    mock_virtual_t *self = req->server;
    if (req->prev)
        req->prev->next = req->next;
    else if (self->inflight == req)
        self->inflight = req->next;
    if (req->next)
        req->next->prev = req->prev;
    req->prev = req->next = NULL;
    if (req->replica)
        req->replica->assigned--;
    req->replica = NULL;
}

static void mock_virtual_request_free(mock_virtual_request_t *req) {
    mock_virtual_request_unlink(req);
    loop_timer_cancel(req->server->loop, req->timer);
    free(req->ids);
    free(req->hashes);
    free(req->seq.pins);
    free(req->event_ns);
    free(req->event_tokens);
    free(req);
}

void mock_virtual_destroy(mock_virtual_t **self_p) {
    mock_virtual_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t i = 0; self->replicas && i < self->n_replicas; i++) {
        loop_timer_cancel(self->loop, self->replicas[i].step_timer);
        mock_engine_destroy(&self->replicas[i].engine); /* aborts the sequences first */
    }
    while (self->inflight)
        mock_virtual_request_free(self->inflight);
    free(self->replicas);
    mock_vocab_destroy(&self->vocab);
    buffer_clear(&self->text);
    free(self->partial_ns);
    free(self->partial_tokens);
    free(self);
    *self_p = NULL;
}

uint32_t mock_virtual_replicas(const mock_virtual_t *self) {
    return self->n_replicas;
}

void mock_virtual_stats(const mock_virtual_t *self, uint32_t replica, mock_engine_stats_t *out) {
    mock_engine_get_stats(self->replicas[replica].engine, out);
}

/* The reply's content as a client appends it: the words after the reasoning, the first without a
 * leading space. */
static void mock_virtual_reply_text(mock_virtual_t *self, const mock_virtual_request_t *req) {
    buffer_reset(&self->text);
    for (uint32_t i = req->reply.reasoning_tokens; i < req->reply.output_tokens; i++) {
        const char *word = prompt_word(mock_vocab_reply_word(self->vocab, req->reply.key, i));
        if ((i > req->reply.reasoning_tokens && buffer_append(&self->text, " ", 1) < 0) ||
            buffer_append(&self->text, word, strlen(word)) < 0)
            break; /* out of memory: a shorter history, said nowhere better than here */
    }
}

static void mock_virtual_answer(mock_virtual_t *self, mock_virtual_request_t *req) {
    mock_virtual_reply_t reply = {
        .status = req->status,
        .error = req->error,
        .replica = req->replica ? req->replica->index : 0,
        .prompt_tokens = req->prompt_tokens,
        .accepted_ns = req->accepted_ns,
    };
    if (req->status == 200) {
        mock_virtual_reply_text(self, req);
        reply.completion_tokens = req->reply.output_tokens;
        reply.cached_tokens = req->seq.cached_tokens;
        reply.reasoning_tokens = req->reply.reasoning_tokens;
        reply.finish = req->reply.finish;
        reply.enqueued_ns = req->seq.enqueued_ns;
        reply.scheduled_ns = req->seq.first_scheduled_ns;
        reply.n_events = req->n_events;
        reply.event_ns = req->event_ns;
        reply.event_tokens = req->event_tokens;
        reply.text = self->text.data ? self->text.data : "";
        reply.text_len = self->text.len;
    }
    /* out of the lists before the client hears (it may submit or cancel from done); the
     * events stay until it has read them */
    mock_virtual_request_unlink(req);
    req->done(req->arg, &reply);
    mock_virtual_request_free(req);
}

static void mock_virtual_on_token(mock_seq_t *seq, int64_t now_ns, void *arg) {
    mock_virtual_request_t *req = seq->user;
    (void)arg;
    req->event_ns[req->n_events] = now_ns;
    req->event_tokens[req->n_events++] =
        seq->step_sampled > UINT16_MAX ? UINT16_MAX : (uint16_t)seq->step_sampled;
    if (seq->generated >= seq->output_tokens)
        mock_virtual_answer(req->server, req); /* the engine let it go already (FINISHED) */
}

static void mock_virtual_kick(mock_virtual_replica_t *r, int64_t now_ns);

static void mock_virtual_on_step(loop_t *loop, uint64_t id, void *arg) {
    mock_virtual_replica_t *r = arg;
    (void)loop;
    (void)id;
    r->step_timer = 0;
    mock_engine_step_end(r->engine, r->step_start_ns, mock_virtual_on_token, r);
    mock_virtual_kick(r, r->step_start_ns);
}

/* Starts a step if the replica's engine is idle and has work: at the end of the last one when
 * it is busy (back to back), else now. */
static void mock_virtual_kick(mock_virtual_replica_t *r, int64_t now_ns) {
    if (r->step_timer)
        return;
    int64_t end = mock_engine_step_next(r->engine, now_ns, &r->step_start_ns);
    if (end < 0)
        return;
    r->step_timer = loop_timer_at(r->server->loop, end, mock_virtual_on_step, r);
    if (!r->step_timer) {
        fprintf(stderr, "simulate: out of memory scheduling an engine step\n");
        abort();
    }
}

static void mock_virtual_on_admit(loop_t *loop, uint64_t id, void *arg) {
    mock_virtual_request_t *req = arg;
    (void)id;
    req->timer = 0;
    if (req->status != 200) { /* refused at submit: answered now, as the server does */
        mock_virtual_answer(req->server, req);
        return;
    }
    int64_t now = loop_time_ns(loop);
    if (mock_engine_add(req->replica->engine, &req->seq, now) < 0) {
        req->status = 400;
        snprintf(req->error, sizeof(req->error), "the request does not fit in the KV cache");
        mock_virtual_answer(req->server, req);
        return;
    }
    mock_virtual_kick(req->replica, now);
}

/* The replica the router picks for req (its block hashes known). */
static mock_virtual_replica_t *mock_virtual_route(mock_virtual_t *self,
                                                  const mock_virtual_request_t *req) {
    uint32_t n = self->n_replicas, first = (uint32_t)((self->requests - 1) % n);
    if (self->router == MOCK_ROUTER_ROUND_ROBIN || n == 1)
        return &self->replicas[first];
    uint32_t lookable = req->prompt_tokens > 0 ? (req->prompt_tokens - 1) / 16 : 0;
    if (lookable > req->seq.n_block_hashes)
        lookable = req->seq.n_block_hashes;
    mock_virtual_replica_t *best = NULL;
    uint32_t best_hit = 0;
    for (uint32_t k = 0; k < n; k++) {
        mock_virtual_replica_t *r = &self->replicas[(first + k) % n];
        uint32_t hit = self->router == MOCK_ROUTER_PREFIX
                           ? mock_engine_cached_blocks(r->engine, req->hashes, lookable)
                           : 0;
        if (!best || hit > best_hit || (hit == best_hit && r->assigned < best->assigned)) {
            best = r;
            best_hit = hit;
        }
    }
    return best;
}

/* Parses and plans req from body: 0, or the refusal's status with req->error filled. */
static int mock_virtual_prepare(mock_virtual_t *self, mock_virtual_request_t *req,
                                mock_api_kind_t kind, const char *body, size_t len) {
    mock_api_request_t api;
    int status = mock_api_parse(kind, body, len, &api, req->error, sizeof(req->error));
    if (status)
        return status;
    if (api.prompt.len == 0 && mock_tokens_push(&api.prompt, mock_tokens_word_id("", 0)) < 0) {
        mock_api_request_clear(&api);
        snprintf(req->error, sizeof(req->error), "out of memory");
        return 500;
    }
    req->prompt_tokens = api.prompt.len;
    status = mock_reply_plan(&self->options, &api, &req->reply, req->error, sizeof(req->error));
    if (status) {
        mock_api_request_clear(&api);
        return status;
    }
    uint32_t total = api.prompt.len + req->reply.output_tokens;
    req->ids = malloc((size_t)total * sizeof(*req->ids));
    req->hashes = malloc(((size_t)total / MOCK_PREFIX_CACHE_BLOCK_TOKENS + 1) * sizeof(uint64_t));
    req->event_ns = malloc((size_t)req->reply.output_tokens * sizeof(*req->event_ns));
    req->event_tokens = malloc((size_t)req->reply.output_tokens * sizeof(*req->event_tokens));
    if (!req->ids || !req->hashes || !req->event_ns || !req->event_tokens) {
        mock_api_request_clear(&api);
        snprintf(req->error, sizeof(req->error), "out of memory");
        return 500;
    }
    req->seq.n_block_hashes =
        mock_reply_sequence(self->vocab, api.prompt.ids, api.prompt.len, req->reply.key,
                            req->reply.output_tokens, req->ids, req->hashes);
    mock_api_request_clear(&api);
    req->seq.block_hashes = req->hashes;
    req->seq.prompt_tokens = req->prompt_tokens;
    req->seq.output_tokens = req->reply.output_tokens;
    req->seq.key = self->requests;
    req->seq.user = req;
    return 0;
}

mock_virtual_request_t *mock_virtual_submit(mock_virtual_t *self, mock_api_kind_t kind,
                                            const char *body, size_t len, mock_virtual_done_fn done,
                                            void *arg) {
    mock_virtual_request_t *req = calloc(1, sizeof(*req));
    if (!req)
        return NULL;
    int64_t now = loop_now_ns();
    req->server = self;
    req->done = done;
    req->arg = arg;
    req->accepted_ns = now;
    req->next = self->inflight;
    if (self->inflight)
        self->inflight->prev = req;
    self->inflight = req;
    self->requests++;
    req->status = mock_virtual_prepare(self, req, kind, body, len);
    if (req->status == 0) {
        req->status = 200;
        req->replica = mock_virtual_route(self, req);
        req->replica->assigned++;
    }
    /* A refusal is not instant either (a request and its error over loopback take ~0.2 ms): were it
     * answered at the instant it was sent, a workload the server refuses whole would send its next
     * request at the same virtual instant forever, and the run's duration would never pass. */
    int64_t admit =
        now + (req->status == 200 ? (int64_t)llround(self->options.ttft_overhead_ms * 1e6)
                                  : MOCK_VIRTUAL_REFUSAL_NS);
    req->timer = loop_timer_at(self->loop, admit, mock_virtual_on_admit, req);
    if (!req->timer) {
        mock_virtual_request_free(req);
        return NULL;
    }
    return req;
}

void mock_virtual_cancel(mock_virtual_t *self, mock_virtual_request_t *req,
                         mock_virtual_reply_t *partial) {
    loop_timer_cancel(self->loop, req->timer);
    if (req->replica)
        mock_engine_abort(req->replica->engine, &req->seq);
    if (partial) {
        *partial = (mock_virtual_reply_t){.status = req->status,
                                          .error = "",
                                          .replica = req->replica ? req->replica->index : 0,
                                          .prompt_tokens = req->prompt_tokens,
                                          .accepted_ns = req->accepted_ns};
        if (req->n_events && buffer_grow_pair(&self->partial_ns, sizeof(*self->partial_ns),
                                              &self->partial_tokens, sizeof(*self->partial_tokens),
                                              &self->partial_cap, req->n_events) == 0) {
            memcpy(self->partial_ns, req->event_ns, req->n_events * sizeof(int64_t));
            memcpy(self->partial_tokens, req->event_tokens, req->n_events * sizeof(uint16_t));
            partial->n_events = req->n_events;
            partial->event_ns = self->partial_ns;
            partial->event_tokens = self->partial_tokens;
        }
    }
    mock_virtual_request_free(req);
}
