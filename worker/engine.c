/* The request engine: curl multi handles driven by curl_multi_socket_action from a loop_t
 * (net/curl_loop). Finished transfers are drained with curl_multi_info_read after every
 * action.
 *
 * The streams are split over several multi handles ("shards") of at most ENGINE_SHARD_STREAMS
 * each, all on the same loop: curl 7.88 walks its whole connection cache in every
 * curl_multi_remove_handle (the connect-only check) and the per-host connection list in every
 * new transfer, so one multi handle with 10,000 connections pays O(10,000) per request. */
#define _GNU_SOURCE
#include "engine.h"

#include <arpa/inet.h>
#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buffer.h"
#include "chunk.h"
#include "config.h"
#include "curl_loop.h"
#include "redact.h"
#include "rlimit.h"
#include "stream.h"
#include "tokenizer.h"

/* curl's receive buffer per transfer (CURLOPT_BUFFERSIZE). 2 KiB holds one read of ~6 chat
 * chunks; a larger buffer is heap every transfer writes through, and at 64 KiB it was a mapping of
 * its own per transfer (docs/bench.md, "Memory per stream"). */
#define ENGINE_DEFAULT_BUFFER (2 * 1024)
#define ENGINE_SHARD_STREAMS 256
#define ENGINE_MAX_ORIGINS 64
#define ENGINE_MAX_PINNED_ADDRESSES 8

/* One curl multi handle, its connection cache and its one timeout. */
typedef struct engine_shard {
    engine_t *engine;
    CURLM *multi;
    curl_loop_t driver; /* drives multi from the engine's loop */
} engine_shard_t;

typedef struct engine_slot {
    engine_t *engine;
    engine_shard_t *shard; /* fixed for the slot's life: its connections live there */
    stream_t *stream;
    engine_done_fn done;
    void *arg;
    uint32_t endpoint;
    uint32_t index;
    uint32_t next_free;
    uint64_t epoch;         /* engine epoch at submit: engine_cancel_all spares later ones */
    uint64_t failure_timer; /* a request that failed before curl got it reports from here */
    uint64_t timeout_timer; /* the request's deadline (engine_options.timeout_ns) */
    uint64_t connect_timer; /* its connect deadline (engine_options.connect_timeout_ns) */
    bool active;
    bool in_multi;
} engine_slot_t;

struct engine {
    loop_t *loop;
    engine_shard_t *shards;
    uint32_t n_shards;
    uint32_t max_streams;
    int64_t timeout_ns;
    int64_t connect_timeout_ns;
    stream_settings_t settings;
    stream_counters_t counters;
    char reasoning_open[THINK_TAG_MAX + 1]; /* the settings' reasoning_tags point here */
    char reasoning_close[THINK_TAG_MAX + 1];
    char *auth_line;
    char *session_header; /* the settings' header names point here */
    char *replica_header;
    char **secrets; /* the API key and secret header values, redacted from error messages */
    size_t n_secrets;

    engine_slot_t **slots; /* allocated on first use, then reused; never freed before destroy */
    uint32_t n_slots;
    size_t slots_cap;
    uint32_t free_head; /* UINT32_MAX when empty */

    char *origins[ENGINE_MAX_ORIGINS]; /* "host:port" pinned by engine_pin */
    uint32_t n_origins;

    uint32_t inflight;
    uint32_t *inflight_to; /* per endpoint index */
    size_t inflight_to_len;

    uint64_t epoch;
    bool closing;
    int callback_depth;

    uint64_t requests_started;
    uint64_t requests_finished;
    uint64_t requests_failed;
    uint64_t socket_events;
};

static pthread_once_t engine_curl_once = PTHREAD_ONCE_INIT;

static void engine_curl_global_init(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* One fd per stream: the hard limit is asked for up front rather than failing at stream 1,024,
 * and a limit below max_streams is said once here, not as connect errors deep in the run. */
static void engine_fit_fd_limit(uint32_t max_streams) {
    char why[256];
    if (rlimit_fit_nofile(max_streams, why, sizeof why) < 0)
        fprintf(stderr, "stampede: engine for %u streams: %s; streams past it fail to connect\n",
                max_streams, why);
}

/* With CURLOPT_NOSIGNAL curl never touches signals, so a peer closing mid-send would kill the
 * process with SIGPIPE unless it is ignored (unless someone installed a handler already). */
static void engine_ignore_sigpipe(void) {
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

static void engine_drain(engine_shard_t *shard);

/* What curl reads during an action arrived at this wake-up: the stamp the streams record. */
static void engine_before_action(void *arg, bool socket_event) {
    engine_shard_t *shard = arg;
    shard->engine->socket_events += socket_event;
    shard->engine->counters.read_ns = loop_now_ns();
}

static void engine_after_action(void *arg) {
    engine_shard_t *shard = arg;
    shard->engine->counters.read_ns = 0;
    engine_drain(shard);
}

static void engine_release_slot(engine_t *self, engine_slot_t *slot) {
    slot->next_free = self->free_head;
    self->free_head = slot->index;
}

/* Runs the done callback, then frees the slot: the reply and chunk arrays the callback reads
 * live in this slot's stream, so a submit from inside the callback must get another slot. */
static void engine_finish(engine_t *self, engine_slot_t *slot) {
    assert(slot->active);
    loop_timer_cancel(self->loop, slot->timeout_timer);
    slot->timeout_timer = 0;
    loop_timer_cancel(self->loop, slot->connect_timer);
    slot->connect_timer = 0;
    slot->active = false;
    slot->in_multi = false;
    self->inflight--;
    self->inflight_to[slot->endpoint]--;
    request_record_t *record = stream_record(slot->stream);
    self->requests_finished++;
    if (record->error != ERROR_NONE && record->error != ERROR_CANCELLED)
        self->requests_failed++;
    for (size_t i = 0; i < self->n_secrets && record->error_message[0]; i++)
        redact_text(record->error_message, sizeof record->error_message, self->secrets[i]);
    size_t reply_len;
    const char *reply = stream_reply(slot->stream, &reply_len);
    self->callback_depth++;
    slot->done(slot->arg, record, reply, reply_len);
    self->callback_depth--;
    engine_release_slot(self, slot);
}

static void engine_drain(engine_shard_t *shard) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(shard->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode result = msg->data.result;
        stream_t *stream = stream_of_easy(easy);
        engine_slot_t *slot = stream_user(stream);
        curl_multi_remove_handle(shard->multi, easy);
        slot->in_multi = false;
        stream_complete(stream, result, loop_now_ns());
        engine_finish(shard->engine, slot);
    }
}

static struct curl_slist *engine_append(struct curl_slist *list, const char *line, bool *ok) {
    struct curl_slist *grown = curl_slist_append(list, line);
    if (!grown)
        *ok = false;
    return grown ? grown : list;
}

/* Keeps a copy of a secret to redact from error messages (a server may echo what it was sent). */
static void engine_add_secret(engine_t *self, const char *secret, size_t len, bool *ok) {
    char **grown = realloc(self->secrets, (self->n_secrets + 1) * sizeof *grown);
    char *copy = grown ? strndup(secret, len) : NULL;
    if (grown)
        self->secrets = grown;
    if (!copy) {
        *ok = false;
        return;
    }
    self->secrets[self->n_secrets++] = copy;
}

static int engine_build_headers(engine_t *self, const engine_options_t *options) {
    bool ok = true;
    struct curl_slist *h = NULL;
    h = engine_append(h, "Content-Type: application/json", &ok);
    h = engine_append(h, "Accept: text/event-stream", &ok);
    h = engine_append(h, "Expect:", &ok); /* no 100-continue round trip for large bodies */
    if (options->api_key && options->api_key[0]) {
        size_t len = strlen(options->api_key) + sizeof("Authorization: Bearer ");
        self->auth_line = malloc(len);
        if (!self->auth_line)
            ok = false;
        else {
            snprintf(self->auth_line, len, "Authorization: Bearer %s", options->api_key);
            h = engine_append(h, self->auth_line, &ok);
            engine_add_secret(self, options->api_key, strlen(options->api_key), &ok);
        }
    }
    for (const char *const *line = options->headers; line && *line; line++) {
        h = engine_append(h, *line, &ok);
        const char *colon = strchr(*line, ':');
        if (!colon)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(colon - *line), *line);
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if (config_header_is_secret(name))
            engine_add_secret(self, value, strlen(value), &ok);
    }
    self->settings.headers = h;
    return ok ? 0 : -1;
}

/* Both tags given and short enough, or detection off. */
static void engine_set_reasoning_tags(engine_t *self, const engine_options_t *options) {
    const char *open = options->reasoning_open, *close = options->reasoning_close;
    if (!open || !close || !*open || !*close || strlen(open) > THINK_TAG_MAX ||
        strlen(close) > THINK_TAG_MAX)
        return; /* settings.reasoning_tags stays zero: off */
    strcpy(self->reasoning_open, open);
    strcpy(self->reasoning_close, close);
    self->settings.reasoning_tags =
        (think_tags_t){self->reasoning_open, strlen(open), self->reasoning_close, strlen(close)};
}

engine_t *engine_new(loop_t *loop, const engine_options_t *options) {
    assert(loop && options && options->max_streams > 0);
    pthread_once(&engine_curl_once, engine_curl_global_init);
    engine_fit_fd_limit(options->max_streams);
    engine_ignore_sigpipe();
    engine_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->loop = loop;
    self->max_streams = options->max_streams;
    self->free_head = UINT32_MAX;
    self->settings.counters = &self->counters;
    self->settings.net = options->net;
    self->settings.tokenizer = options->tokenizer;
    if (options->tokenizer && !(self->settings.tokenizer_scratch = tokenizer_scratch_new())) {
        engine_destroy(&self);
        return NULL;
    }
    self->timeout_ns = options->timeout_ns;
    self->connect_timeout_ns = options->connect_timeout_ns;
    self->settings.buffer_size =
        options->buffer_size ? (long)options->buffer_size : ENGINE_DEFAULT_BUFFER;
    engine_set_reasoning_tags(self, options);
    self->settings.api = options->api;
    if (!(self->settings.chunk_shape = chunk_shape_new())) {
        engine_destroy(&self);
        return NULL;
    }
    self->session_header = options->session_header ? strdup(options->session_header) : NULL;
    self->replica_header = options->replica_header ? strdup(options->replica_header) : NULL;
    self->settings.session_header = self->session_header;
    self->settings.replica_header = self->replica_header;
    if ((options->session_header && !self->session_header) ||
        (options->replica_header && !self->replica_header)) {
        engine_destroy(&self);
        return NULL;
    }
    self->n_shards = (options->max_streams + ENGINE_SHARD_STREAMS - 1) / ENGINE_SHARD_STREAMS;
    self->shards = calloc(self->n_shards, sizeof(*self->shards));
    if (!self->shards || engine_build_headers(self, options) < 0) {
        engine_destroy(&self);
        return NULL;
    }
    long streams = (long)options->max_streams;
    for (uint32_t i = 0; i < self->n_shards; i++) {
        engine_shard_t *shard = &self->shards[i];
        shard->engine = self;
        shard->multi = curl_multi_init();
        if (!shard->multi) {
            engine_destroy(&self);
            return NULL;
        }
        CURLM *m = shard->multi;
        curl_loop_bind(&shard->driver, loop, m, engine_before_action, engine_after_action, shard);
        /* One HTTP/1.1 connection per stream, all kept for reuse, none queued behind a limit
         * (a shard never holds more transfers than the engine's max_streams). */
        curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, streams);
        curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, streams);
        curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, streams);
        curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    }
    return self;
}

static void engine_cancel_slot(engine_t *self, engine_slot_t *slot) {
    if (slot->in_multi)
        curl_multi_remove_handle(slot->shard->multi, stream_easy(slot->stream));
    loop_timer_cancel(self->loop, slot->failure_timer);
    slot->failure_timer = 0;
    request_record_t *record = stream_record(slot->stream);
    if (record->error == ERROR_NONE)
        stream_abandon(slot->stream, ERROR_CANCELLED, "cancelled", loop_now_ns());
    else /* it had already failed before curl got it: that failure stands */
        record->end_ns = loop_now_ns();
    engine_finish(self, slot);
}

void engine_cancel_all(engine_t *self) {
    assert(self);
    uint64_t epoch = ++self->epoch;
    /* Requests submitted by the cancelled ones' callbacks carry the new epoch and live on. */
    for (uint32_t i = 0; i < self->n_slots; i++) {
        engine_slot_t *slot = self->slots[i];
        if (slot->active && slot->epoch < epoch)
            engine_cancel_slot(self, slot);
    }
}

void engine_destroy(engine_t **self_p) {
    assert(self_p);
    engine_t *self = *self_p;
    if (!self)
        return;
    assert(self->callback_depth == 0 && "engine_destroy from inside a done callback");
    self->closing = true; /* callbacks of cancelled requests cannot submit new ones */
    for (uint32_t i = 0; self->shards && i < self->n_shards; i++)
        if (self->shards[i].multi) /* and curl's timeout is never armed again */
            curl_loop_close(&self->shards[i].driver);
    engine_cancel_all(self);
    for (uint32_t i = 0; i < self->n_slots; i++) {
        stream_destroy(&self->slots[i]->stream);
        free(self->slots[i]);
    }
    for (uint32_t i = 0; self->shards && i < self->n_shards; i++) {
        engine_shard_t *shard = &self->shards[i];
        if (shard->multi) /* closes the cached connections (and unwatches them) */
            curl_multi_cleanup(shard->multi);
    }
    free(self->shards);
    curl_slist_free_all(self->settings.headers);
    curl_slist_free_all(self->settings.resolve);
    tokenizer_scratch_destroy(&self->settings.tokenizer_scratch);
    chunk_shape_destroy(&self->settings.chunk_shape);
    free(self->session_header);
    free(self->replica_header);
    for (uint32_t i = 0; i < self->n_origins; i++)
        free(self->origins[i]);
    for (size_t i = 0; i < self->n_secrets; i++) {
        explicit_bzero(self->secrets[i], strlen(self->secrets[i]));
        free(self->secrets[i]);
    }
    free(self->secrets);
    if (self->auth_line) {
        explicit_bzero(self->auth_line, strlen(self->auth_line));
        free(self->auth_line);
    }
    free(self->slots);
    free(self->inflight_to);
    free(self);
    *self_p = NULL;
}

static engine_slot_t *engine_take_slot(engine_t *self) {
    if (self->free_head != UINT32_MAX) {
        engine_slot_t *slot = self->slots[self->free_head];
        self->free_head = slot->next_free;
        return slot;
    }
    if (buffer_grow_array(&self->slots, &self->slots_cap, (size_t)self->n_slots + 1,
                          sizeof(*self->slots)) < 0)
        return NULL;
    engine_slot_t *slot = calloc(1, sizeof(*slot));
    if (!slot)
        return NULL;
    slot->engine = self;
    slot->index = self->n_slots;
    slot->shard = &self->shards[slot->index % self->n_shards];
    slot->stream = stream_new(&self->settings, slot);
    if (!slot->stream) {
        free(slot);
        return NULL;
    }
    self->slots[self->n_slots++] = slot;
    return slot;
}

static int engine_count_endpoint(engine_t *self, uint32_t endpoint) {
    if (buffer_grow_array(&self->inflight_to, &self->inflight_to_len, (size_t)endpoint + 1,
                          sizeof(*self->inflight_to)) < 0)
        return -1;
    self->inflight_to[endpoint]++;
    return 0;
}

/* The whole-request timeout is a loop timer rather than CURLOPT_TIMEOUT_MS: curl keeps a handle
 * with a deadline in its splay tree and splays that tree twice per socket event, so thousands of
 * deadlines there cost on every token; here they cost only when a request starts and ends. */
static void engine_on_request_timeout(loop_t *loop, uint64_t timer_id, void *arg) {
    engine_slot_t *slot = arg;
    slot->timeout_timer = 0;
    stream_complete(slot->stream, CURLE_OPERATION_TIMEDOUT, loop_now_ns());
    curl_multi_remove_handle(slot->shard->multi, stream_easy(slot->stream));
    slot->in_multi = false;
    engine_finish(slot->engine, slot);
}

/* The connect deadline is a loop timer too, not CURLOPT_CONNECTTIMEOUT_MS: curl 7.88 never takes
 * that deadline out of its splay tree once connected, so every live transfer sits there and each
 * socket event pays three splay operations over all of them (8 % of the client's CPU at 1,000
 * streams). A request that reached the pre-transfer stage (connected, TLS done) is left alone. */
static void engine_on_connect_timeout(loop_t *loop, uint64_t timer_id, void *arg) {
    engine_slot_t *slot = arg;
    slot->connect_timer = 0;
    curl_off_t pretransfer = 0;
    curl_easy_getinfo(stream_easy(slot->stream), CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    if (pretransfer > 0)
        return;
    curl_multi_remove_handle(slot->shard->multi, stream_easy(slot->stream));
    slot->in_multi = false;
    char message[64];
    snprintf(message, sizeof(message), "connect timed out after %lld ms",
             (long long)(slot->engine->connect_timeout_ns / 1000000));
    stream_abandon(slot->stream, ERROR_CONNECT, message, loop_now_ns());
    engine_finish(slot->engine, slot);
}

static void engine_on_failure_timer(loop_t *loop, uint64_t timer_id, void *arg) {
    engine_slot_t *slot = arg;
    slot->failure_timer = 0;
    engine_t *self = slot->engine;
    stream_abandon(slot->stream, ERROR_CONNECT, "request could not be started", loop_now_ns());
    engine_finish(self, slot);
}

/* The host and port of an http(s) URL; 0, or -1 when it names no host to look up (an IP
 * literal, or not a URL we understand: then curl alone deals with it). */
static int engine_url_host(const char *url, char *host, size_t host_cap, int *port) {
    const char *p = strstr(url, "://");
    if (!p)
        return -1;
    *port = (p - url == 5 && strncasecmp(url, "https", 5) == 0) ? 443 : 80;
    p += 3;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at)
        p = at + 1;
    if (*p == '[')
        return -1; /* an IPv6 literal */
    const char *colon = memchr(p, ':', (size_t)(end - p));
    size_t len = (size_t)((colon ? colon : end) - p);
    if (len == 0 || len >= host_cap)
        return -1;
    memcpy(host, p, len);
    host[len] = '\0';
    if (colon)
        *port = atoi(colon + 1);
    struct in_addr v4;
    return inet_pton(AF_INET, host, &v4) == 1 ? -1 : 0;
}

/* The "host:port:addr[,addr...]" line CURLOPT_RESOLVE takes for origin, from getaddrinfo's
 * answer; 0 when no IPv4 or IPv6 address was in it. */
static size_t engine_resolve_line(const char *origin, const struct addrinfo *found, char *line,
                                  size_t cap) {
    char addresses[ENGINE_MAX_PINNED_ADDRESSES][INET6_ADDRSTRLEN + 2];
    int n = 0;
    for (const struct addrinfo *a = found; a && n < ENGINE_MAX_PINNED_ADDRESSES; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN];
        bool v6 = a->ai_family == AF_INET6;
        if (a->ai_family != AF_INET && !v6)
            continue;
        const void *where = v6 ? (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr
                               : (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr;
        if (!inet_ntop(a->ai_family, where, text, sizeof(text)))
            continue;
        snprintf(addresses[n], sizeof(addresses[n]), v6 ? "[%s]" : "%s", text);
        bool seen = false;
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(addresses[k], addresses[n]) == 0;
        if (!seen)
            n++;
    }
    if (n == 0)
        return 0;
    size_t len = (size_t)snprintf(line, cap, "%s:", origin);
    for (int k = 0; k < n && len < cap; k++)
        len += (size_t)snprintf(line + len, cap - len, "%s%s", k ? "," : "", addresses[k]);
    return len;
}

/* Test hook (docs/protocol.md, test-only): STAMPEDE_TEST_LOOKUP_DELAY_MS makes every host name
 * lookup that much slower, like a resolver that lost a packet. */
static void engine_test_lookup_delay(void) {
    const char *delay = getenv("STAMPEDE_TEST_LOOKUP_DELAY_MS");
    long ms = delay ? strtol(delay, NULL, 10) : 0;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

int engine_lookup(const char *url, char *line, size_t cap, char *err, size_t errlen) {
    assert(url && line && err);
    char host[256];
    int port;
    if (engine_url_host(url, host, sizeof(host), &port) < 0)
        return 0; /* an address literal, or nothing curl could look up either */
    char origin[272];
    snprintf(origin, sizeof(origin), "%s:%d", host, port);
    engine_test_lookup_delay();
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &found);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve host %s (endpoint %s): %s", host, url,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    size_t len = engine_resolve_line(origin, found, line, cap);
    freeaddrinfo(found);
    if (len == 0 || len >= cap) {
        snprintf(err, errlen, "cannot resolve host %s (endpoint %s): no IPv4 or IPv6 address", host,
                 url);
        return -1;
    }
    return 1;
}

int engine_pin(engine_t *self, const char *line, char *err, size_t errlen) {
    assert(self && line && err);
    const char *colon = strchr(line, ':');
    colon = colon ? strchr(colon + 1, ':') : NULL; /* "host:port:addresses" */
    if (!colon) {
        snprintf(err, errlen, "cannot pin '%s': not host:port:addresses", line);
        return -1;
    }
    size_t origin_len = (size_t)(colon - line);
    for (uint32_t i = 0; i < self->n_origins; i++)
        if (strlen(self->origins[i]) == origin_len &&
            strncmp(self->origins[i], line, origin_len) == 0)
            return 0;
    if (self->n_origins == ENGINE_MAX_ORIGINS) {
        snprintf(err, errlen, "cannot pin %.*s: more than %d host:port pairs", (int)origin_len,
                 line, ENGINE_MAX_ORIGINS);
        return -1;
    }
    char *copy = strndup(line, origin_len);
    struct curl_slist *list = copy ? curl_slist_append(self->settings.resolve, line) : NULL;
    if (!list) {
        free(copy);
        snprintf(err, errlen, "cannot pin %.*s: out of memory", (int)origin_len, line);
        return -1;
    }
    self->origins[self->n_origins++] = copy;
    self->settings.resolve = list;
    self->settings.resolve_version++;
    return 0;
}

int engine_submit(engine_t *self, const engine_request_t *request, engine_done_fn done, void *arg) {
    assert(self && request && request->url && request->record && done);
    if (self->closing || self->inflight >= self->max_streams)
        return -1;
    engine_slot_t *slot = engine_take_slot(self);
    if (!slot)
        return -1;
    if (engine_count_endpoint(self, request->record->endpoint) < 0) {
        engine_release_slot(self, slot);
        return -1;
    }
    slot->done = done;
    slot->arg = arg;
    slot->endpoint = request->record->endpoint;
    slot->epoch = self->epoch;
    slot->active = true;
    slot->in_multi = false;
    self->inflight++;
    self->requests_started++;
    int64_t now = loop_now_ns();
    int rc = stream_begin(slot->stream, request->url, request->body, request->body_len,
                          request->session_header, request->record, now);
    if (request->reply_unused)
        stream_drop_reply(slot->stream);
    if (rc == 0 &&
        curl_multi_add_handle(slot->shard->multi, stream_easy(slot->stream)) == CURLM_OK) {
        slot->in_multi = true;
        if (self->timeout_ns > 0)
            slot->timeout_timer =
                loop_timer_at(self->loop, now + self->timeout_ns, engine_on_request_timeout, slot);
        if (self->connect_timeout_ns > 0)
            slot->connect_timer = loop_timer_at(self->loop, now + self->connect_timeout_ns,
                                                engine_on_connect_timeout, slot);
        return 0;
    }
    /* Reported like any failed transfer, from the loop, never from inside the caller. */
    slot->failure_timer = loop_timer_at(self->loop, now, engine_on_failure_timer, slot);
    return 0;
}

const struct curl_slist *engine_headers(const engine_t *self) {
    return self->settings.headers;
}

uint32_t engine_inflight_to(const engine_t *self, uint32_t endpoint) {
    return endpoint < self->inflight_to_len ? self->inflight_to[endpoint] : 0;
}

void engine_stats(const engine_t *self, engine_stats_t *out) {
    assert(self && out);
    out->requests_started = self->requests_started;
    out->requests_finished = self->requests_finished;
    out->requests_failed = self->requests_failed;
    out->write_callbacks = self->counters.write_callbacks;
    out->sse_events = self->counters.sse_events;
    out->shaped_events = self->counters.shaped_events;
    out->token_chunks = self->counters.token_chunks;
    out->body_bytes = self->counters.body_bytes;
    out->connections = self->counters.connections;
    out->streams = self->n_slots;
    out->socket_events = self->socket_events;
    out->pinned_hosts = self->n_origins;
    out->resolve_updates = self->counters.resolve_updates;
}

void engine_set_sent_delay(engine_t *self, histogram_t *delay) {
    assert(self);
    self->counters.sent_delay = delay;
}
