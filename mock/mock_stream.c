/* A completion request's life in the simulated server: admission (parse, limits, reply length,
 * faults), its token schedule (fixed mode timers or engine steps), emission of the streamed
 * chunks, the whole body when not streaming, and the per-request metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <xxhash.h>

#include "mock_events.h"
#include "mock_internal.h"
#include "mock_reply.h"
#include "rng.h"

/* Tokens written at once on one connection at most (fixed mode with ITL 0 has them all due). */
#define MOCK_STREAM_MAX_COALESCED 256

/* Fields of the mock's own random draws (RNG_STREAM_MOCK), after the reply's (mock_reply.c). */
enum {
    MOCK_DRAW_FAIL = 3,
    MOCK_DRAW_RESET = 4,
    MOCK_DRAW_STALL = 5,
    MOCK_DRAW_MALFORMED = 6,
};

static void mock_stream_begin(mock_server_t *self, mock_request_t *req, int64_t now);

static const char *mock_finish_name(mock_finish_t finish) {
    return finish == MOCK_FINISH_STOP ? "stop" : "length";
}

static double mock_draw(const mock_server_t *self, uint64_t key, uint32_t field) {
    return mock_reply_draw(&self->options, key, field);
}

void mock_request_free(mock_request_t *req) {
    if (!req)
        return;
    free(req->ids);
    free(req->block_hashes);
    free(req->seq.pins);
    free(req);
}

/* When token i (0-based) is due in fixed mode: arrival + ttft + i * itl, plus a stall. */
static int64_t mock_fixed_due(const mock_server_t *self, const mock_request_t *req, uint32_t i) {
    int64_t due = req->recv_ns + req->head_delay_ns +
                  (int64_t)llround(self->options.ttft_ms * 1e6) +
                  (int64_t)i * (int64_t)llround(self->options.itl_ms * 1e6);
    if (req->stall && i >= req->stall_after)
        due += (int64_t)llround(req->stall_ms * 1e6);
    return due;
}

static int64_t mock_token_due(const mock_server_t *self, const mock_request_t *req, uint32_t i) {
    return self->engine ? req->step_due_ns : mock_fixed_due(self, req, i);
}

/* Server-side metrics of n tokens due at once (a fixed-mode token, or what one engine step
 * sampled for the request), on the simulated times like vLLM's own: one inter-token interval
 * per step, as vLLM V1 observes it per iteration. */
static void mock_account_tokens(mock_server_t *self, mock_request_t *req, int64_t due, uint32_t n) {
    mock_metrics_t *m = &self->metrics;
    if (req->accounted == 0) {
        req->first_token_ns = due;
        prom_histogram_observe(&m->ttft, (double)(due - req->recv_ns) / 1e9);
        prom_histogram_observe(&m->queue, (double)(req->scheduled_ns - req->seq.enqueued_ns) / 1e9);
        prom_histogram_observe(&m->prefill, (double)(due - req->scheduled_ns) / 1e9);
        prom_histogram_observe(&m->prompt_tokens_hist, req->prompt_tokens);
        m->prompt_tokens += req->prompt_tokens;
    } else {
        prom_histogram_observe(&m->itl, (double)(due - req->prev_token_ns) / 1e9);
    }
    req->prev_token_ns = due;
    req->accounted += n;
    m->generation_tokens += n;
}

static void mock_account_finish(mock_server_t *self, mock_request_t *req) {
    mock_metrics_t *m = &self->metrics;
    int64_t last = req->prev_token_ns;
    prom_histogram_observe(&m->e2e, (double)(last - req->recv_ns) / 1e9);
    prom_histogram_observe(&m->decode, (double)(last - req->first_token_ns) / 1e9);
    prom_histogram_observe(&m->inference, (double)(last - req->scheduled_ns) / 1e9);
    if (req->output_tokens > 1)
        prom_histogram_observe(&m->tpot, (double)(last - req->first_token_ns) / 1e9 /
                                             (req->output_tokens - 1));
    prom_histogram_observe(&m->generation_tokens_hist, req->output_tokens);
    m->success[req->finish]++;
}

/* Fixed mode reports prefix hits too (usage and counters), without any effect on timing. */
static void mock_fixed_cache_lookup(mock_server_t *self, mock_request_t *req) {
    self->fixed_prefix_queries += req->prompt_tokens;
    if (!self->fixed_cache)
        return;
    uint32_t lookable = (req->prompt_tokens - 1) / MOCK_PREFIX_CACHE_BLOCK_TOKENS;
    uint32_t ids[64];
    uint32_t found = 0;
    while (found < lookable) { /* match in slices so no allocation is needed */
        uint32_t n = lookable - found < 64 ? lookable - found : 64;
        uint32_t got =
            mock_prefix_cache_match(self->fixed_cache, req->block_hashes + found, n, ids);
        for (uint32_t i = 0; i < got; i++)
            mock_prefix_cache_unpin(self->fixed_cache, ids[i]);
        found += got;
        if (got < n)
            break;
    }
    req->cached_tokens = found * MOCK_PREFIX_CACHE_BLOCK_TOKENS;
    self->fixed_prefix_hits += req->cached_tokens;
}

static void mock_fixed_cache_store(mock_server_t *self, mock_request_t *req) {
    if (!self->fixed_cache)
        return;
    for (uint32_t b = 0; b < req->n_blocks; b++) {
        int64_t id = mock_prefix_cache_insert_pinned(self->fixed_cache, req->block_hashes[b]);
        if (id < 0)
            break;
        mock_prefix_cache_unpin(self->fixed_cache, (uint32_t)id);
    }
}

/* The response is complete: metrics, the connection goes on, the request is freed. */
static void mock_stream_finish(mock_server_t *self, mock_request_t *req) {
    mock_conn_t *c = req->conn;
    mock_account_finish(self, req);
    if (!self->engine)
        mock_fixed_cache_store(self, req);
    self->active_requests--;
    bool keep_alive = req->keep_alive;
    c->req = NULL;
    mock_request_free(req);
    mock_io_response_done(self, c, keep_alive);
}

static void mock_put_usage(const mock_request_t *req, uint32_t completion, mock_chunk_usage_t *u) {
    u->prompt_tokens = req->prompt_tokens;
    u->completion_tokens = completion;
    u->cached_tokens = req->cached_tokens;
}

/* Frames payload[0..len) as one HTTP chunk (or raw for HTTP/1.0) on the connection. */
static int mock_stream_frame(mock_conn_t *c, bool chunked, const char *payload, size_t len,
                             bool last) {
    char size_line[24];
    int rc = 0;
    if (chunked && len > 0) {
        int n = snprintf(size_line, sizeof(size_line), "%zx\r\n", len);
        rc |= buffer_append(&c->out, size_line, (size_t)n);
    }
    rc |= buffer_append(&c->out, payload, len);
    if (chunked && len > 0)
        rc |= buffer_append(&c->out, "\r\n", 2);
    if (chunked && last)
        rc |= buffer_append(&c->out, "0\r\n\r\n", 5);
    return rc;
}

/* Writes reply words [from, to) at p as JSON string content; the reply's first word and the
 * first after the reasoning have no leading space. */
static char *mock_stream_put_reply(const mock_server_t *self, const mock_request_t *req, char *p,
                                   uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to; i++) {
        size_t len;
        uint32_t w = mock_vocab_reply_word(self->vocab, req->reply_key, i);
        const char *word =
            mock_vocab_json(self->vocab, w, i > 0 && i != req->reasoning_tokens, &len);
        memcpy(p, word, len);
        p += len;
    }
    return p;
}

/* Ends a stream early on a fault: what [start, p) holds goes out, the request is aborted, and
 * the response either ends properly (clean: the chunked terminator, the connection may go on)
 * or the connection closes once that is written (an event cut short). */
static void mock_stream_break(mock_server_t *self, mock_request_t *req, const char *start,
                              const char *p, bool clean) {
    mock_conn_t *c = req->conn;
    self->metrics.faults[req->fault]++;
    bool keep_alive = clean && req->keep_alive;
    int rc = mock_stream_frame(c, req->chunked, start, (size_t)(p - start), clean);
    mock_stream_abort(self, req);
    c->req = NULL;
    mock_request_free(req);
    if (rc < 0) {
        mock_io_close(self, c, false);
        return;
    }
    mock_io_response_done(self, c, keep_alive);
    mock_io_flush(self, c);
}

/* Writes the next count tokens of a streaming request (coalesced into one write), per_event
 * tokens to an SSE event (one per token in fixed mode; an engine step's accepted tokens share
 * one, as speculative decoding's do in vLLM; an event never straddles the end of the
 * reasoning), with the role chunk before the first and usage and [DONE] after the last. */
/* Messages or Responses: the API's events around the tokens (mock_events.h), not chat chunks. */
static bool mock_stream_events(const mock_request_t *req) {
    return req->kind == MOCK_API_MESSAGES || req->kind == MOCK_API_RESPONSES;
}

/* The end of a Messages or Responses stream: the usage, and for Responses the whole reply again
 * in response.completed's output items (reasoning, then the message). */
static char *mock_stream_events_end(const mock_server_t *self, mock_request_t *req, char *p) {
    mock_chunk_usage_t usage;
    mock_put_usage(req, req->output_tokens, &usage);
    bool length = req->finish == MOCK_FINISH_LENGTH;
    if (req->kind == MOCK_API_MESSAGES)
        return mock_events_messages_end(p, &req->head, length, &usage);
    uint32_t r = req->reasoning_tokens, n = req->output_tokens;
    p = mock_events_completed_open(p, &req->head, length);
    if (r > 0) {
        p = mock_events_item_open(p, &req->head, true, true);
        p = mock_stream_put_reply(self, req, p, 0, r);
        p = mock_events_item_close(p);
    }
    if (r < n) {
        p = mock_events_item_open(p, &req->head, false, r == 0);
        p = mock_stream_put_reply(self, req, p, r, n);
        p = mock_events_item_close(p);
    }
    return mock_events_completed_close(p, &usage, r);
}

static void mock_stream_emit(mock_server_t *self, mock_request_t *req, uint32_t count,
                             uint32_t per_event) {
    mock_conn_t *c = req->conn;
    bool last = req->emitted + count >= req->output_tokens;
    bool events = mock_stream_events(req);
    size_t per_chunk = mock_chunk_max_bytes(&req->head, self->max_word_len);
    size_t extra = events ? MOCK_EVENTS_FRAME_BYTES : 0;
    if (events && last) /* Responses repeats the reply in response.completed */
        extra += (size_t)req->output_tokens * (self->max_word_len + 1);
    buffer_t *scratch = &self->scratch;
    buffer_reset(scratch);
    if (buffer_reserve(scratch, (count + 3) * per_chunk + extra) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    char *start = scratch->data, *p = start;
    mock_chunk_usage_t usage;
    int64_t now = loop_now_ns(); /* sent_ns: formatting the chunks is all that follows */
    int64_t sent = self->options.sent_ns ? now : -1; /* -1: the chunks carry no sent_ns */
    for (uint32_t end = req->emitted + count; req->emitted < end;) {
        uint32_t i = req->emitted, n = end - i < per_event ? end - i : per_event;
        bool reasoning = i < req->reasoning_tokens;
        if (reasoning && i + n > req->reasoning_tokens)
            n = req->reasoning_tokens - i;
        req->emitted += n;
        int64_t due = mock_token_due(self, req, i);
        prom_histogram_observe(&self->metrics.emission_error, (double)(now - due) / 1e9);
        self->metrics.chunks_sent++;
        if (i == 0 && req->kind == MOCK_API_CHAT)
            p = mock_chunk_role(p, &req->head, sent);
        if (i == 0 && events) {
            mock_put_usage(req, 0, &usage);
            p = mock_events_start(p, &req->head, reasoning, &usage);
        } else if (events && req->head.reasoning && !reasoning) {
            p = mock_events_switch(p, &req->head);
        }
        if (req->malformed_at > i && req->malformed_at <= i + n) {
            p = events ? mock_events_malformed(p, &req->head) : mock_chunk_malformed(p, &req->head);
            if (req->fault == MOCK_FAULT_MALFORMED)
                self->metrics.faults[MOCK_FAULT_MALFORMED]++;
            else
                self->metrics.faults_malformed++;
            continue;
        }
        if (req->truncated_at > i && req->truncated_at <= i + n) {
            p = events ? mock_events_truncated(p, &req->head) : mock_chunk_truncated(p, &req->head);
            mock_stream_break(self, req, start, p, false);
            return;
        }
        if (req->no_done_at > i && req->no_done_at <= i + n) {
            mock_stream_break(self, req, start, p, true);
            return;
        }
        if (req->event_error_at > i && req->event_error_at <= i + n) {
            p = events ? mock_events_error(p, &req->head) : mock_chunk_error_event(p);
            mock_stream_break(self, req, start, p, true);
            return;
        }
        if (events) {
            p = mock_events_token_open(p, &req->head);
            p = mock_stream_put_reply(self, req, p, i, i + n);
            p = mock_events_token_close(p, &req->head, sent);
            continue;
        }
        const char *finish = i + n == req->output_tokens ? mock_finish_name(req->finish) : NULL;
        if (req->continuous_usage)
            mock_put_usage(req, i + n, &usage);
        p = mock_chunk_token_open(p, &req->head, reasoning);
        p = mock_stream_put_reply(self, req, p, i, i + n);
        p = mock_chunk_token_close(p, &req->head, finish, req->continuous_usage ? &usage : NULL,
                                   sent);
    }
    if (last && events) {
        p = mock_stream_events_end(self, req, p);
    } else if (last) {
        if (req->include_usage) {
            mock_put_usage(req, req->output_tokens, &usage);
            p = mock_chunk_usage(p, &req->head, &usage, sent);
        }
        p = mock_chunk_done(p);
    }
    if (mock_stream_frame(c, req->chunked, start, (size_t)(p - start), last) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    if (last)
        mock_stream_finish(self, req); /* before the write: the response is all queued */
    mock_io_flush(self, c);
}

/* The whole body of a non-streaming response. */
static int mock_stream_body(mock_server_t *self, mock_request_t *req, buffer_t *out) {
    size_t need =
        1024 + self->model_json.len + (size_t)req->output_tokens * (self->max_word_len + 1);
    if (buffer_reserve(out, need) < 0)
        return -1;
    char *start = out->data + out->len, *p = start;
    bool chat = req->kind == MOCK_API_CHAT;
    p += sprintf(p, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":\"", req->id,
                 chat ? "chat.completion" : "text_completion", req->created);
    memcpy(p, self->model_json.data, self->model_json.len);
    p += self->model_json.len;
    p += sprintf(p, "\",\"choices\":[{\"index\":0,");
    if (chat) {
        uint32_t reasoning = req->reasoning_tokens;
        p += sprintf(p, "\"message\":{\"role\":\"assistant\",\"reasoning_content\":");
        if (reasoning > 0) {
            *p++ = '"';
            p = mock_stream_put_reply(self, req, p, 0, reasoning);
            *p++ = '"';
        } else {
            p += sprintf(p, "null");
        }
        p += sprintf(p, ",\"content\":\"");
        p = mock_stream_put_reply(self, req, p, reasoning, req->output_tokens);
        p += sprintf(p, "\",\"tool_calls\":[]}");
    } else {
        p += sprintf(p, "\"text\":\"");
        p = mock_stream_put_reply(self, req, p, 0, req->output_tokens);
        *p++ = '"';
    }
    p += sprintf(p,
                 ",\"logprobs\":null,\"finish_reason\":\"%s\",\"stop_reason\":null}],"
                 "\"usage\":{\"prompt_tokens\":%u,\"completion_tokens\":%u,\"total_tokens\":%u,"
                 "\"prompt_tokens_details\":{\"cached_tokens\":%u}},\"prompt_logprobs\":null}",
                 mock_finish_name(req->finish), req->prompt_tokens, req->output_tokens,
                 req->prompt_tokens + req->output_tokens, req->cached_tokens);
    out->len += (size_t)(p - start);
    return 0;
}

static void mock_stream_complete_whole(mock_server_t *self, mock_request_t *req) {
    mock_conn_t *c = req->conn;
    buffer_t *body = &self->scratch;
    buffer_reset(body);
    if (mock_stream_body(self, req, body) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    bool keep_alive = req->keep_alive;
    char head[512];
    int n = mock_http_format_head(head, sizeof(head), 200, "application/json", (long long)body->len,
                                  !keep_alive, NULL);
    if (buffer_append(&c->out, head, (size_t)n) < 0 ||
        buffer_append(&c->out, body->data, body->len) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    mock_metrics_count_status(&self->metrics, 200);
    mock_stream_finish(self, req);
    mock_io_flush(self, c);
}

/* Engine mode's stall: the output is held back (tokens pile up in the connection's buffer, as
 * behind a stuck proxy) until a timer resumes it. */
static void mock_stream_pause(mock_server_t *self, mock_request_t *req, int64_t now) {
    mock_conn_t *c = req->conn;
    req->stall = false;
    c->paused_until_ns = now + (int64_t)llround(req->stall_ms * 1e6);
    c->timer.kind = MOCK_TIMER_RESUME;
    mock_io_schedule(self, &c->timer, c->paused_until_ns);
}

/* Faults that act after a token was written: a reset, or (engine mode) a stall. */
static void mock_stream_after_tokens(mock_server_t *self, mock_request_t *req, int64_t now) {
    mock_conn_t *c = req->conn;
    if (req->reset_at && req->emitted >= req->reset_at) {
        if (req->fault == MOCK_FAULT_RESET_MID)
            self->metrics.faults[MOCK_FAULT_RESET_MID]++;
        else
            self->metrics.faults_reset++;
        mock_io_close(self, c, true);
        return;
    }
    if (self->engine && req->stall && req->emitted >= req->stall_after)
        mock_stream_pause(self, req, now);
}

static void mock_stream_fixed_tick(mock_server_t *self, mock_request_t *req, int64_t now) {
    mock_conn_t *c = req->conn;
    if (!req->stream) {
        for (uint32_t i = 0; i < req->output_tokens; i++)
            mock_account_tokens(self, req, mock_fixed_due(self, req, i), 1);
        mock_stream_complete_whole(self, req);
        return;
    }
    /* Every token already due goes in one write, up to a reset point and to a bound that keeps
     * one connection from holding the loop (the rest goes on the next turn). */
    uint32_t limit = req->output_tokens - req->emitted;
    if (req->reset_at > req->emitted && req->reset_at - req->emitted < limit)
        limit = req->reset_at - req->emitted;
    if (limit > MOCK_STREAM_MAX_COALESCED)
        limit = MOCK_STREAM_MAX_COALESCED;
    uint32_t count = 1; /* the timer fired: its token is due */
    while (count < limit && mock_fixed_due(self, req, req->emitted + count) <= now)
        count++;
    for (uint32_t j = 0; j < count; j++)
        mock_account_tokens(self, req, mock_fixed_due(self, req, req->accounted), 1);
    bool last = req->emitted + count >= req->output_tokens;
    mock_stream_emit(self, req, count, 1);
    if (last || c->dead || c->req != req) /* finished, closed, or ended by a fault */
        return;
    mock_stream_after_tokens(self, req, now);
    if (c->dead)
        return;
    c->timer.kind = MOCK_TIMER_STREAM;
    mock_io_schedule(self, &c->timer, mock_fixed_due(self, req, req->emitted));
}

static void mock_stream_on_token(mock_seq_t *seq, int64_t now_ns, void *arg) {
    mock_server_t *self = arg;
    mock_request_t *req = seq->user;
    req->step_due_ns = now_ns;
    if (req->accounted == 0) {
        req->scheduled_ns = seq->first_scheduled_ns;
        req->cached_tokens = seq->cached_tokens;
    }
    mock_account_tokens(self, req, now_ns, seq->step_sampled);
    bool last = seq->generated >= seq->output_tokens;
    if (!req->stream) {
        if (last)
            mock_stream_complete_whole(self, req);
        return;
    }
    mock_conn_t *c = req->conn;
    mock_stream_emit(self, req, seq->step_sampled, seq->step_sampled);
    if (!last && !c->dead && c->req == req) /* not closed, nor ended by a fault */
        mock_stream_after_tokens(self, req, now_ns);
}

/* Starts an engine step if the engine is idle and has work. */
static void mock_stream_kick(mock_server_t *self, int64_t now_ns) {
    if (!self->engine || self->engine_delivering)
        return;
    int64_t end = mock_engine_step_next(self->engine, now_ns, &self->step_start_ns);
    if (end < 0)
        return;
    self->step_timer.kind = MOCK_TIMER_STEP;
    mock_io_schedule(self, &self->step_timer, end);
}

void mock_stream_on_step(mock_server_t *self) {
    int64_t end = self->step_start_ns;
    self->engine_delivering = true;
    mock_engine_step_end(self->engine, end, mock_stream_on_token, self);
    self->engine_delivering = false;
    mock_stream_kick(self, end);
}

static void mock_stream_admit(mock_server_t *self, mock_request_t *req, int64_t now) {
    if (mock_engine_add(self->engine, &req->seq, now) < 0) {
        mock_conn_t *c = req->conn;
        if (req->stream) { /* the 200 head is out already: all that is left is to hang up */
            mock_io_close(self, c, false);
            return;
        }
        self->active_requests--;
        c->req = NULL;
        bool keep_alive = req->keep_alive;
        mock_request_free(req);
        mock_io_respond_error(self, c, 400, "the request does not fit in the KV cache", keep_alive);
        return;
    }
    mock_stream_kick(self, now);
}

void mock_stream_on_timer(mock_server_t *self, mock_conn_t *c, int64_t now_ns) {
    mock_request_t *req = c->req;
    switch (c->timer.kind) {
    case MOCK_TIMER_RESUME:
        c->paused_until_ns = 0;
        mock_io_flush(self, c);
        return;
    case MOCK_TIMER_ADMIT:
        if (req)
            mock_stream_admit(self, req, now_ns);
        return;
    case MOCK_TIMER_STREAM:
        if (req)
            mock_stream_fixed_tick(self, req, now_ns);
        return;
    case MOCK_TIMER_HEADERS:
        if (req)
            mock_stream_begin(self, req, now_ns);
        return;
    }
}

void mock_stream_abort(mock_server_t *self, mock_request_t *req) {
    if (self->engine)
        mock_engine_abort(self->engine, &req->seq);
    self->metrics.success[MOCK_FINISH_ABORT]++;
    self->active_requests--;
}

/* An error answer in the API's shape: Anthropic's for Messages, vLLM's for the others. */
static void mock_stream_error(mock_server_t *self, mock_conn_t *c, mock_api_kind_t kind, int status,
                              const char *message, bool keep_alive, const char *extra_header) {
    buffer_t *page = &self->page;
    buffer_reset(page);
    int rc = kind == MOCK_API_MESSAGES
                 ? mock_api_anthropic_error_body(page, status, message)
                 : mock_api_error_body(page, status, message, self->options.flat_errors);
    if (rc < 0) {
        mock_io_close(self, c, false);
        return;
    }
    mock_io_respond(self, c, status, "application/json", page->data, page->len, keep_alive,
                    extra_header);
}

/* Refuses a request that cannot start; every message names the numbers involved. */
static void mock_stream_refuse(mock_server_t *self, mock_conn_t *c, mock_api_request_t *api,
                               int status, const char *message, bool keep_alive) {
    mock_api_kind_t kind = api->kind;
    mock_api_request_clear(api);
    mock_stream_error(self, c, kind, status, message, keep_alive, NULL);
}

/* stampede's preflight (worker/preflight.h) asks whether this is a server it can measure before
 * a run starts: answered at once with one token, outside the engine, the counters and the faults,
 * so that the mock's figures and fault schedules are the run's alone. */
static void mock_stream_preflight(mock_server_t *self, mock_conn_t *c, mock_api_request_t *api,
                                  mock_api_kind_t kind, bool keep_alive) {
    bool chat = kind == MOCK_API_CHAT, stream = api->stream;
    mock_api_request_clear(api);
    static const char chat_event[] =
        "data: {\"id\":\"chatcmpl-preflight\",\"object\":\"chat.completion.chunk\",\"choices\":"
        "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},"
        "\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
    static const char text_event[] =
        "data: {\"id\":\"cmpl-preflight\",\"object\":\"text_completion\",\"choices\":"
        "[{\"index\":0,\"text\":\"ok\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
    static const char chat_json[] =
        "{\"id\":\"chatcmpl-preflight\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
        "\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}";
    static const char text_json[] =
        "{\"id\":\"cmpl-preflight\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
        "\"text\":\"ok\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,"
        "\"completion_tokens\":1,\"total_tokens\":2}}";
    const char *body = stream ? (chat ? chat_event : text_event) : (chat ? chat_json : text_json);
    if (kind == MOCK_API_MESSAGES || kind == MOCK_API_RESPONSES)
        body = mock_events_preflight(kind); /* streamed only: mock_stream_start */
    mock_io_respond(self, c, 200, stream ? "text/event-stream" : "application/json", body,
                    strlen(body), keep_alive, NULL);
}

static void mock_stream_faults(mock_server_t *self, mock_request_t *req) {
    const mock_options_t *o = &self->options;
    uint32_t n = req->output_tokens;
    if (o->reset_after_tokens && o->reset_after_tokens < n &&
        mock_draw(self, req->number, MOCK_DRAW_RESET) < o->reset_rate)
        req->reset_at = o->reset_after_tokens;
    if (o->stall_ms > 0 && o->stall_after_tokens < n &&
        mock_draw(self, req->number, MOCK_DRAW_STALL) < o->stall_rate) {
        req->stall = true;
        req->stall_after = o->stall_after_tokens;
        req->stall_ms = o->stall_ms;
        self->metrics.faults_stall++;
    }
    if (o->malformed_rate > 0 &&
        mock_draw(self, req->number, MOCK_DRAW_MALFORMED) < o->malformed_rate)
        req->malformed_at = n / 2 + 1;
}

/* --faults kinds that act once the request is under way; stream-only kinds leave a
 * non-streaming request alone (and uncounted), as do mid-stream kinds on a one-token reply. */
static void mock_stream_fault_set(mock_server_t *self, mock_request_t *req,
                                  const mock_fault_rule_t *rule) {
    uint32_t n = req->output_tokens;
    switch (rule->kind) {
    case MOCK_FAULT_STALL:
        if (n < 2)
            return;
        req->stall = true;
        req->stall_after = 1;
        req->stall_ms = rule->delay_ms;
        self->metrics.faults[MOCK_FAULT_STALL]++;
        break;
    case MOCK_FAULT_SLOW_HEADERS:
        req->head_delay_ns = (int64_t)llround(rule->delay_ms * 1e6);
        self->metrics.faults[MOCK_FAULT_SLOW_HEADERS]++;
        break;
    case MOCK_FAULT_RESET_MID:
        if (!req->stream || n < 2)
            return;
        req->reset_at = n / 2;
        break;
    case MOCK_FAULT_MALFORMED:
        if (!req->stream)
            return;
        req->malformed_at = n / 2 + 1;
        break;
    case MOCK_FAULT_TRUNCATED:
        if (!req->stream)
            return;
        req->truncated_at = n / 2 + 1;
        break;
    case MOCK_FAULT_EVENT_ERROR:
        if (!req->stream)
            return;
        req->event_error_at = n / 2 + 1;
        break;
    case MOCK_FAULT_NO_DONE:
        if (!req->stream || n < 2)
            return;
        req->no_done_at = n / 2 + 1;
        break;
    default:
        return;
    }
    req->fault = rule->kind;
}

/* --faults kinds that answer instead of the model: an error status, a reset before the status
 * line, or a proxy's HTML page. Returns whether the request was answered so. */
static bool mock_stream_fault_answer(mock_server_t *self, mock_conn_t *c, mock_api_request_t *api,
                                     const mock_fault_rule_t *rule, bool keep_alive) {
    static const char html[] = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n"
                               "<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n"
                               "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    char err[512];
    switch (rule->kind) {
    case MOCK_FAULT_500:
    case MOCK_FAULT_503:
        snprintf(err, sizeof(err), "simulated failure (--faults %s)", mock_fault_name(rule->kind));
        mock_stream_refuse(self, c, api, rule->kind == MOCK_FAULT_500 ? 500 : 503, err, keep_alive);
        break;
    case MOCK_FAULT_429: {
        mock_api_kind_t kind = api->kind;
        mock_api_request_clear(api);
        mock_stream_error(self, c, kind, 429, "simulated rate limit (--faults 429)", keep_alive,
                          "retry-after: 1");
        break;
    }
    case MOCK_FAULT_CONTEXT_LENGTH: {
        uint32_t limit = self->options.max_model_len, prompt = api->prompt.len;
        uint64_t completion = api->has_max_tokens ? api->max_tokens : 0;
        if (prompt + completion <= limit)
            completion = (uint64_t)limit + 1 - prompt;
        mock_reply_context_error(err, sizeof(err), limit, prompt, completion);
        mock_stream_refuse(self, c, api, 400, err, keep_alive);
        break;
    }
    case MOCK_FAULT_RESET_HEADERS: /* the request read, a close without a byte (FIN) */
        mock_api_request_clear(api);
        mock_io_close(self, c, false);
        break;
    case MOCK_FAULT_NOT_SSE:
        mock_api_request_clear(api);
        mock_io_respond(self, c, 200, "text/html", html, sizeof(html) - 1, keep_alive, NULL);
        break;
    default:
        return false;
    }
    self->metrics.faults[rule->kind]++;
    return true;
}

static mock_request_t *mock_request_new(mock_server_t *self, mock_api_request_t *api,
                                        uint32_t output_tokens, uint64_t key) {
    uint32_t prompt = api->prompt.len;
    mock_request_t *req = calloc(1, sizeof(*req));
    if (!req)
        return NULL;
    uint32_t total = prompt + output_tokens;
    req->ids = malloc((size_t)total * sizeof(*req->ids));
    req->block_hashes =
        malloc(((size_t)total / MOCK_PREFIX_CACHE_BLOCK_TOKENS + 1) * sizeof(*req->block_hashes));
    if (!req->ids || !req->block_hashes) {
        mock_request_free(req);
        return NULL;
    }
    req->n_blocks = mock_reply_sequence(self->vocab, api->prompt.ids, prompt, key, output_tokens,
                                        req->ids, req->block_hashes);
    req->reply_key = key;
    req->prompt_tokens = prompt;
    req->output_tokens = output_tokens;
    return req;
}

static void mock_stream_name(mock_server_t *self, mock_request_t *req) {
    uint64_t a = XXH3_64bits_withSeed(&req->number, sizeof(req->number), self->options.seed);
    uint64_t b = XXH3_64bits_withSeed(&a, sizeof(a), req->number);
    static const char *const prefixes[] = {[MOCK_API_CHAT] = "chatcmpl-",
                                           [MOCK_API_COMPLETIONS] = "cmpl-",
                                           [MOCK_API_MESSAGES] = "msg_",
                                           [MOCK_API_RESPONSES] = "resp_"};
    snprintf(req->id, sizeof(req->id), "%s%016llx%016llx", prefixes[req->kind],
             (unsigned long long)a, (unsigned long long)b);
    req->created = (long long)time(NULL);
    mock_chunk_head_init(&req->head, req->kind, req->id, req->created, self->model_json.data);
}

/* Sends the streaming response head at once, as vLLM (uvicorn) does. */
static void mock_stream_send_head(mock_server_t *self, mock_request_t *req) {
    char head[512];
    int n = mock_http_format_head(head, sizeof(head), 200, "text/event-stream; charset=utf-8",
                                  req->chunked ? -1 : -2, !req->keep_alive, NULL);
    mock_metrics_count_status(&self->metrics, 200);
    if (buffer_append(&req->conn->out, head, (size_t)n) < 0)
        mock_io_close(self, req->conn, false);
}

static void mock_stream_schedule(mock_server_t *self, mock_request_t *req, int64_t now) {
    mock_conn_t *c = req->conn;
    if (!self->engine) {
        req->scheduled_ns = req->seq.enqueued_ns = req->recv_ns;
        mock_fixed_cache_lookup(self, req);
        uint32_t first = req->stream ? 0 : req->output_tokens - 1;
        c->timer.kind = MOCK_TIMER_STREAM;
        mock_io_schedule(self, &c->timer, mock_fixed_due(self, req, first));
        return;
    }
    req->seq.block_hashes = req->block_hashes;
    req->seq.n_block_hashes = req->n_blocks;
    req->seq.prompt_tokens = req->prompt_tokens;
    req->seq.output_tokens = req->output_tokens;
    req->seq.key = req->number;
    req->seq.user = req;
    if (req->stall && req->stall_after == 0)
        mock_stream_pause(self, req, now);
    if (self->options.ttft_overhead_ms > 0) {
        c->timer.kind = MOCK_TIMER_ADMIT;
        mock_io_schedule(self, &c->timer,
                         now + (int64_t)llround(self->options.ttft_overhead_ms * 1e6));
    } else {
        mock_stream_admit(self, req, now);
    }
}

/* The response starts: the head of a stream at once, then the tokens' schedule. */
static void mock_stream_begin(mock_server_t *self, mock_request_t *req, int64_t now) {
    mock_conn_t *c = req->conn;
    if (req->stream)
        mock_stream_send_head(self, req);
    if (!c->dead)
        mock_stream_schedule(self, req, now);
    if (!c->dead)
        mock_io_flush(self, c);
}

void mock_stream_start(mock_server_t *self, mock_conn_t *c, const mock_http_request_t *http,
                       mock_api_kind_t kind) {
    int64_t now = loop_now_ns();
    const mock_options_t *o = &self->options;
    bool keep_alive = http->keep_alive;
    char err[512];
    mock_api_request_t api;
    int status = mock_api_parse(kind, http->body, http->content_length, &api, err, sizeof(err));
    if (status) {
        mock_stream_error(self, c, kind, status, err, keep_alive, NULL);
        return;
    }
    if (!api.stream && (kind == MOCK_API_MESSAGES || kind == MOCK_API_RESPONSES)) {
        mock_stream_refuse(self, c, &api, 400,
                           "the mock answers /v1/messages and /v1/responses streamed only; send "
                           "\"stream\": true",
                           keep_alive);
        return;
    }
    if (o->strict_model && api.model[0] && strcmp(api.model, o->model) != 0) {
        snprintf(err, sizeof(err), "The model `%s` does not exist.", api.model);
        mock_stream_refuse(self, c, &api, 404, err, keep_alive);
        return;
    }
    if (http->preflight) {
        mock_stream_preflight(self, c, &api, kind, keep_alive);
        return;
    }
    uint64_t number = ++self->request_counter;
    if (o->fail_rate > 0 && mock_draw(self, number, MOCK_DRAW_FAIL) < o->fail_rate) {
        self->metrics.faults_fail++;
        mock_stream_refuse(self, c, &api, o->fail_status, "simulated failure (--fail-rate)",
                           keep_alive);
        return;
    }
    const mock_fault_rule_t *fault = NULL;
    if (o->faults.n_rules)
        fault = mock_faults_pick(&o->faults, number, mock_draw(self, number, MOCK_DRAW_FAULTS), 0);
    if (fault && mock_stream_fault_answer(self, c, &api, fault, keep_alive))
        return;
    if (api.prompt.len == 0 && mock_tokens_push(&api.prompt, mock_tokens_word_id("", 0)) < 0) {
        mock_stream_refuse(self, c, &api, 500, "out of memory", keep_alive);
        return;
    }
    mock_reply_t reply;
    status = mock_reply_plan(o, &api, &reply, err, sizeof(err));
    if (status) {
        mock_stream_refuse(self, c, &api, status, err, keep_alive);
        return;
    }
    mock_request_t *req = mock_request_new(self, &api, reply.output_tokens, reply.key);
    if (!req) {
        mock_stream_refuse(self, c, &api, 500, "out of memory", keep_alive);
        return;
    }
    req->conn = c;
    req->number = number;
    req->kind = kind;
    req->finish = reply.finish;
    req->stream = api.stream;
    req->include_usage = api.stream && api.include_usage;
    req->continuous_usage = api.stream && api.continuous_usage;
    req->chunked = http->minor_version >= 1;
    req->keep_alive = keep_alive && (req->chunked || !req->stream); /* else the close ends it */
    req->recv_ns = now;
    req->reasoning_tokens = reply.reasoning_tokens;
    mock_api_request_clear(&api);
    mock_stream_name(self, req);
    mock_stream_faults(self, req);
    if (fault)
        mock_stream_fault_set(self, req, fault);
    c->req = req;
    self->active_requests++;
    if (req->head_delay_ns) {
        c->timer.kind = MOCK_TIMER_HEADERS;
        mock_io_schedule(self, &c->timer, now + req->head_delay_ns);
        return;
    }
    mock_stream_begin(self, req, now);
}
