/* One reusable stream slot: curl easy handle, SSE parsing into the request record. */
#define _GNU_SOURCE
#include "stream.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <xxhash.h>

#include "buffer.h"
#include "chunk.h"
#include "loop.h"
#include "phases.h"
#include "reply_tokens.h"
#include "sse.h"

/* Room for a reply whose request gives no max_tokens; the arrays double as longer replies need
 * (8 B a chunk, 10 once chunks carry several tokens). */
#define STREAM_FIRST_CHUNKS 64
/* The bytes of a reply's text that a stream nobody reads keeps in itself between events: what
 * the reasoning tags' detection may read again, the closing tag's length - 1 ("</think>": 7).
 * Longer tags keep their bytes in the reply buffer. */
#define STREAM_TAIL_MAX 7
/* A token's text up to this is read into a buffer on the stack after the tail (longer ones
 * take the reply buffer) */
#define STREAM_TAIL_TEXT_MAX 256
/* A request's max_tokens up to this sizes a stream's first arrays at once (32 KiB of stamps):
 * growing them chunk by chunk leaves the smaller blocks behind as holes in the heap. Benchmarks
 * mostly ask ignore_eos, so a reply is its max_tokens long, and the arrays are kept at the
 * stream's longest reply anyway. */
#define STREAM_RESERVE_MAX 4096
#define STREAM_ERROR_BODY_MAX ((size_t)64 << 10) /* enough for any error message */
#define STREAM_JSON_BODY_MAX ((size_t)64 << 20)  /* a non-streaming reply larger is refused */
#define STREAM_MESSAGE_MAX 150
/* A body under this goes to curl with CURLOPT_POSTFIELDS: libcurl 7.88 appends it to the request
 * headers and sends both at once (MAX_INITIAL_POST_SIZE in lib/http.c), with no upload buffer (a
 * 64 KiB allocation per transfer for a body read through a callback). Larger ones are read. */
#define STREAM_BODY_WITH_HEADERS_MAX ((size_t)64 << 10)

/* A request's session header, "Name: id", put in front of the shared headers. */
typedef struct stream_session {
    struct curl_slist node;
    size_t cap; /* of line */
    char line[];
} stream_session_t;

/* What a reply's token events add to its record, counted in the stream while it streams: the
 * record is an allocation of its own, a line more to read per token. stream_settle writes them
 * into the record when the reply ends; the record's first_token_ns is the first chunk's stamp. */
typedef struct stream_tally {
    int64_t first_content_ns;
    uint64_t content_bytes;
    uint32_t content_chunks;
    uint32_t reasoning_chunks;
} stream_tally_t;

/* What every write callback and token reads or updates comes first, in the first two of the
 * struct's cache lines (it starts on a line boundary): with thousands of streams, a stream's
 * state is out of the cache by its next token, and each line it touches costs a memory read.
 * Nothing else of the stream's a token touches but its stamp (chunk_ns) and, when somebody reads
 * the reply, its text (reply). */
struct stream {
    /* line 0 */
    const stream_settings_t *settings;
    int64_t now_ns; /* receive stamp of the write callback being parsed */
    int64_t *chunk_ns;
    char *reply;
    size_t reply_len;
    size_t reply_cap;
    /* A reply nobody reads (reply_unused), past its opening: the last bytes of its text that the
     * reasoning tags' detection may read again (think_lookback's), kept here between events
     * instead of in reply, so that a token touches no line of the reply buffer (stream_tail_event).
     * reply_len is 0 while tail_len is not. */
    char tail[STREAM_TAIL_MAX];
    uint8_t tail_len;
    uint32_t n_chunks;
    /* sse_parser_room after the last feed: the parser is at an event's boundary, so the next
     * write's leading events may be read without it (stream_shaped_events); 0 when not */
    uint32_t sse_room;
    /* line 1 */
    stream_tally_t tally;
    /* Reasoning inside content (think.h): content events counted as reasoning until the reply's
     * first text says whether it opened with the tag, and the content events counted as answer
     * (moved to reasoning when a closing tag comes with no opening). */
    think_t think;
    uint32_t think_undecided;
    uint32_t think_answer_events;
    size_t chunk_cap;
    bool headers_done;
    bool streaming; /* a 2xx text/event-stream body: parsed as SSE as it arrives */
    bool sniffed;   /* the first body bytes were looked at */
    /* Some chunk of the reply carried more than one token: chunk_tokens holds each chunk's count.
     * Until then every chunk carried one and chunk_tokens is not kept (most servers send a token
     * an event), so a stream that never sees one never allocates it. */
    bool multi_token;
    bool reply_unused; /* stream_drop_reply: nobody reads the reply text of this request */
    /* The last chunk was made at now_ns (its stamp is chunk_ns[n_chunks - 1], a line not read
     * per token): stamps only grow, so one that changed never comes back */
    bool chunk_at_now;

    /* The rest, ordered by size so that the struct has no holes: in all, 9 lines. */
    sse_parser_t *parser;
    request_record_t *record;
    reply_tokens_t *tokens; /* the reply counted in target.tokenizer, or NULL */
    uint16_t *chunk_tokens; /* tokens_cap entries, allocated at the first multi_token */
    size_t tokens_cap;
    CURL *easy;
    void *user;
    stream_session_t *session; /* the session header line, once a request had one */
    int64_t done_ns;

    char *body; /* the body of an error or non-streaming response */
    size_t body_len;
    size_t body_cap;

    const char *upload; /* the request body (not owned) */
    size_t upload_len;
    size_t upload_off;        /* bytes handed to curl so far (through stream_on_read) */
    long request_bytes;       /* CURLINFO_REQUEST_SIZE at the last stream_on_prereq */
    int64_t upload_done_ns;   /* when the last body byte was handed to curl; 0 before */
    int64_t first_header_ns;  /* receive stamp of the first response header line; 0 before */
    uint64_t resolve_version; /* of the settings' resolve list this handle last gave curl */

    int pending_status;        /* status line of the header block being received */
    int status;                /* status of the final response, once its headers ended */
    uint32_t usage_completion; /* completion_tokens of the last usage seen */
    /* The first token chunk with usage when no usage came before it: counted as one token until a
     * later token chunk also carries usage (continuous usage stats), which proves its usage was a
     * running total; then it gets the tokens that total says it carried. */
    uint32_t usage_first_chunk; /* its index, UINT32_MAX when there is none */
    uint32_t usage_first_tokens;
    uint32_t think_undecided_chunk; /* the chunk of the first undecided content event */
    uint32_t resends;               /* curl sent the request again (a reused connection died) */
    /* the last response's Retry-After in seconds (at most INT32_MAX, as the record keeps it);
     * -1 when absent */
    int32_t retry_after_s;
    /* why the last socket could not be created (EMFILE...); 0 it could (Linux's errno values are
     * below 4096) */
    int16_t socket_errno;
    bool pending_sse;         /* the header block said Content-Type: text/event-stream */
    bool upload_with_headers; /* sent by curl with the headers, else read by stream_on_read */
    bool usage_seen;          /* some earlier event carried usage */
    bool got_done;            /* data: [DONE] */
    bool got_finish;

    char curl_error[CURL_ERROR_SIZE];
};
_Static_assert(offsetof(struct stream, tally) == 64 && offsetof(struct stream, parser) == 128,
               "a token's fields of the stream fill its first two cache lines");
_Static_assert(sizeof(struct stream) == 9 * 64, "a stream is 9 whole cache lines");

static void stream_fail(stream_t *self, error_class_t error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first failure of a request is its cause; later ones are consequences. */
static void stream_fail(stream_t *self, error_class_t error, const char *fmt, ...) {
    request_record_t *rec = self->record;
    if (rec->error != ERROR_NONE)
        return;
    rec->error = error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rec->error_message, sizeof(rec->error_message), fmt, ap);
    va_end(ap);
}

/* Keeps chunk_tokens from now on: as many entries as chunk_ns, the chunks so far at one token. */
static int stream_track_tokens(stream_t *self) {
    if (buffer_grow_array(&self->chunk_tokens, &self->tokens_cap, self->chunk_cap,
                          sizeof(*self->chunk_tokens)) < 0)
        return -1;
    if (!self->multi_token)
        for (uint32_t i = 0; i < self->n_chunks; i++)
            self->chunk_tokens[i] = 1;
    self->multi_token = true;
    return 0;
}

/* Room for `need` chunks in the per-chunk arrays (the fit test stays inline: once per chunk).
 * They double, but never past the request's max_tokens when it fits (a chunk carries a token or
 * more, so a reply within its limit needs no more): a 100-token reply takes 101 entries, where
 * doubling from 64 gave 128. A reply past its limit grows them again. */
static int stream_reserve_chunks(stream_t *self, size_t need) {
    if (need <= self->chunk_cap)
        return 0;
    size_t cap = self->chunk_cap ? 2 * self->chunk_cap : STREAM_FIRST_CHUNKS;
    /* the request's max_tokens (0: none): the arrays grow no further */
    uint32_t chunks_limit = self->record->requested_output_tokens;
    if (need == 1 && chunks_limit && chunks_limit <= STREAM_RESERVE_MAX)
        cap = chunks_limit; /* the first room, at the request's start: all of it at once */
    if (cap < need)
        cap = need;
    size_t limit = (size_t)chunks_limit;
    if (limit >= need && cap > limit)
        cap = limit;
    if (buffer_resize_array(&self->chunk_ns, &self->chunk_cap, cap, sizeof(*self->chunk_ns)) < 0)
        return -1;
    return self->multi_token ? stream_track_tokens(self) : 0;
}

/* Copies a message into out as printable text, cut at a UTF-8 character boundary. */
static void stream_printable(const char *text, size_t len, char *out, size_t out_size) {
    size_t n = len < out_size - 1 ? len : out_size - 1;
    if (n < len)
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
    for (size_t i = 0; i < n; i++)
        out[i] = ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) ? ' ' : text[i];
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

/* The human message of an error payload: OpenAI/vLLM "error", FastAPI "detail", a top-level
 * "message", else the payload itself. */
static void stream_error_text(const char *payload, size_t len, char *out, size_t out_size) {
    if (len >= 5 && memcmp(payload, "data:", 5) == 0) { /* an error body framed as SSE */
        payload += 5;
        len -= 5;
        while (len && *payload == ' ')
            payload++, len--;
        const char *eol = memchr(payload, '\n', len);
        if (eol)
            len = (size_t)(eol - payload);
    }
    chunk_info_t info;
    if ((chunk_parse(payload, len, &info) == 0 && info.has_error && info.error_message) ||
        (chunk_responses_parse(payload, len, &info) == 0 && info.has_error && info.error_message)) {
        char buf[STREAM_MESSAGE_MAX * 6 + 1];
        size_t raw = info.error_message_len < STREAM_MESSAGE_MAX * 6 ? info.error_message_len
                                                                     : STREAM_MESSAGE_MAX * 6;
        size_t n = chunk_unescape(info.error_message, raw, buf);
        stream_printable(buf, n, out, out_size);
        return;
    }
    json_t *root = json_loadb(payload, len, 0, NULL);
    const char *text = NULL;
    if (json_is_object(root)) {
        json_t *detail = json_object_get(root, "detail");
        json_t *message = json_object_get(root, "message");
        if (json_is_string(detail))
            text = json_string_value(detail);
        else if (json_is_string(message))
            text = json_string_value(message);
    }
    if (text)
        stream_printable(text, strlen(text), out, out_size);
    else
        stream_printable(payload, len, out, out_size);
    json_decref(root);
}

static uint16_t stream_clamp_tokens(uint32_t tokens) {
    return tokens > UINT16_MAX ? UINT16_MAX : (uint16_t)tokens;
}

/* The tokens chunk i carried so far. */
static uint32_t stream_chunk_tokens(const stream_t *self, uint32_t i) {
    return self->multi_token ? self->chunk_tokens[i] : 1;
}

/* Sets chunk i's tokens, saturating; the first count above one starts chunk_tokens. */
static void stream_set_tokens_kept(stream_t *self, uint32_t i, uint32_t tokens) {
    if (!self->multi_token) {
        if (stream_track_tokens(self) < 0) {
            stream_fail(self, ERROR_PROTOCOL, "out of memory after %u chunks", self->n_chunks);
            return;
        }
    }
    self->chunk_tokens[i] = stream_clamp_tokens(tokens);
}

/* The same, inline for the common case: one token a chunk so far and now, nothing to keep. */
static inline void stream_set_tokens(stream_t *self, uint32_t i, uint32_t tokens) {
    if (self->multi_token || tokens > 1)
        stream_set_tokens_kept(self, i, tokens);
}

/* How many tokens the event about to join chunk `into` carried. Usage on a token event is a
 * running total only when usage also came before it (vLLM's continuous_usage_stats): a server
 * that puts the one final usage on the last content event would otherwise credit that event with
 * the whole reply, shrinking every ITL sample. */
static uint32_t stream_event_tokens(stream_t *self, const chunk_info_t *info, uint32_t into) {
    if (self->settings->tokenizer) /* counted when the reply ends (stream_publish) */
        reply_tokens_event(self->tokens, info, into);
    if (!info->has_usage)
        return 1;
    uint32_t delta = info->completion_tokens > self->usage_completion
                         ? info->completion_tokens - self->usage_completion
                         : 1;
    if (!self->usage_seen) {
        self->usage_first_chunk = into;
        self->usage_first_tokens = delta;
        return 1;
    }
    if (self->usage_first_chunk != UINT32_MAX) {
        /* it was counted as one token; the running total proved it carried more */
        if (self->usage_first_tokens > 1)
            stream_set_tokens(self, self->usage_first_chunk,
                              stream_chunk_tokens(self, self->usage_first_chunk) +
                                  self->usage_first_tokens - 1);
        self->usage_first_chunk = UINT32_MAX;
    }
    return delta;
}

/* Applies what a content event said about the events before it (think.h). */
static void stream_think_earlier(stream_t *self, const think_event_t *ev) {
    stream_tally_t *rec = &self->tally;
    if (ev->earlier == THINK_EARLIER_UNDECIDED_WERE_ANSWER) {
        rec->reasoning_chunks -= self->think_undecided;
        rec->content_chunks += self->think_undecided;
        self->think_answer_events += self->think_undecided;
        /* the answer began at the first of them; with none, at this event or at an earlier tool
         * call or refusal, where it stays */
        if (self->think_undecided) {
            int64_t undecided_ns = self->chunk_ns[self->think_undecided_chunk];
            if (!rec->first_content_ns || undecided_ns < rec->first_content_ns)
                rec->first_content_ns = undecided_ns;
        }
    } else if (ev->earlier == THINK_EARLIER_ANSWER_WAS_REASONING) {
        rec->content_chunks -= self->think_answer_events;
        rec->reasoning_chunks += self->think_answer_events;
        self->think_answer_events = 0;
        rec->first_content_ns = 0;
    }
    if (ev->kind != THINK_IS_UNDECIDED)
        self->think_undecided = 0;
}

/* Whether a content event, its text being text[text_from..len) (the reply's text so far, or its
 * kept end), is answer (true) or reasoning between the reasoning tags; answer_anyway: it also
 * carried a tool call or a refusal, so it counts as answer whatever its text. */
static bool stream_think(stream_t *self, const char *text, size_t text_from, size_t len,
                         bool answer_anyway) {
    think_event_t ev =
        think_feed(&self->think, &self->settings->reasoning_tags, text, text_from, len);
    stream_think_earlier(self, &ev);
    bool answer = answer_anyway || ev.kind == THINK_IS_ANSWER;
    if (!answer && ev.kind == THINK_IS_UNDECIDED && self->think_undecided++ == 0)
        self->think_undecided_chunk = self->n_chunks - 1; /* the chunk this event joined */
    if (answer && !answer_anyway)
        self->think_answer_events++;
    return answer;
}

/* Writes the event's content, decoded, at out (content_len bytes of room: unescaping never
 * lengthens it); returns its length. */
static size_t stream_decode_content(const chunk_info_t *info, char *out) {
    const char *text = info->content;
    size_t len = info->content_len, n = 0;
    if (info->content_plain) { /* the shape's read saw no escape: the bytes are the text */
        memcpy(out, text, len);
        n = len;
    } else if (len <= 32) {
        /* a token's text is a few bytes, mostly with no escape: copied here byte by byte, as
         * chunk_unescape would, without its two calls into libc; an escape hands it the rest */
        for (; n < len && text[n] != '\\'; n++)
            out[n] = text[n];
    }
    if (n < len)
        n += chunk_unescape(text + n, len - n, out + n);
    return n;
}

/* The tail kept in the stream goes back to the start of the reply buffer, before an event that
 * takes the buffer's way. */
static int stream_untail(stream_t *self) {
    if (!self->tail_len)
        return 0;
    if (self->tail_len > self->reply_cap &&
        buffer_grow_array(&self->reply, &self->reply_cap, self->tail_len, 1) < 0)
        return -1;
    memcpy(self->reply, self->tail, self->tail_len);
    self->reply_len = self->tail_len;
    self->tail_len = 0;
    return 0;
}

/* Appends the event's content to the reply text (after the tail, put back first); returns the
 * bytes appended. */
static size_t stream_append_content(stream_t *self, const chunk_info_t *info) {
    /* The fit test stays inline: this runs once per token. */
    size_t need = self->reply_len + self->tail_len + info->content_len;
    if ((need > self->reply_cap &&
         buffer_grow_array(&self->reply, &self->reply_cap, need, 1) < 0) ||
        stream_untail(self) < 0) {
        stream_fail(self, ERROR_PROTOCOL, "out of memory growing the reply text");
        return 0;
    }
    size_t n = stream_decode_content(info, self->reply + self->reply_len);
    self->reply_len += n;
    self->tally.content_bytes += n;
    return n;
}

/* Without a reader of the reply text, only what the next event's tag detection may read of it is
 * kept (think_lookback: a few bytes, none once the reply is past its closing tag or detection is
 * off), so the text takes no memory per stream beyond one event's. */
static void stream_trim_reply(stream_t *self) {
    size_t keep = think_lookback(&self->think, &self->settings->reasoning_tags);
    if (self->reply_len > keep) {
        size_t drop = self->reply_len - keep;
        if (keep)
            memmove(self->reply, self->reply + drop, keep);
        self->reply_len = keep;
        think_forget(&self->think, drop);
    }
    if (keep <= STREAM_TAIL_MAX && self->reply_len) { /* the next event may take the tail's way */
        memcpy(self->tail, self->reply, self->reply_len);
        self->tail_len = (uint8_t)self->reply_len;
        self->reply_len = 0;
    }
}

/* A content event of a reply nobody reads, past its opening, its text short: read into a
 * buffer on the stack after the kept tail, the detection run over it, and what it may read
 * again kept as the new tail, all without the reply buffer (stream_trim_reply's work on another
 * buffer). *answer: as stream_think. False, with nothing done, when the event does not fit. */
static bool stream_tail_event(stream_t *self, const chunk_info_t *info, bool *answer) {
    const think_tags_t *tags = &self->settings->reasoning_tags;
    if (self->reply_len || info->content_len > STREAM_TAIL_TEXT_MAX ||
        think_lookback(&self->think, tags) > STREAM_TAIL_MAX)
        return false;
    /* room to copy the tail whole both ways (its bytes past tail_len mean nothing) */
    char text[STREAM_TAIL_MAX + STREAM_TAIL_TEXT_MAX + STREAM_TAIL_MAX];
    size_t from = self->tail_len;
    memcpy(text, self->tail, STREAM_TAIL_MAX);
    size_t len = from + stream_decode_content(info, text + from);
    self->tally.content_bytes += len - from;
    *answer = stream_think(self, text, from, len, *answer);
    size_t keep = think_lookback(&self->think, tags); /* never more than the tail: no way back */
    if (keep > len)
        keep = len;
    size_t drop = len - keep;
    memcpy(self->tail, text + drop, STREAM_TAIL_MAX);
    self->tail_len = (uint8_t)keep;
    think_forget(&self->think, drop);
    return true;
}

/* Token events with the same receive stamp (delivered by one read) form one chunk: they reached
 * us at the same instant, so the gap before them is shared by all their tokens (docs/metrics.md
 * section 2). An event is answer when it carries a tool call, refusal text, or content outside
 * the reasoning tags; else reasoning. */
static void stream_token_chunk(stream_t *self, const chunk_info_t *info) {
    stream_tally_t *rec = &self->tally;
    bool join = self->n_chunks > 0 && self->chunk_at_now;
    if (!join) {
        if (stream_reserve_chunks(self, self->n_chunks + 1) < 0) {
            stream_fail(self, ERROR_PROTOCOL, "out of memory after %u chunks", self->n_chunks);
            return;
        }
        self->chunk_ns[self->n_chunks] = self->now_ns;
        self->chunk_at_now = true;
        self->n_chunks++;
    }
    uint32_t into = self->n_chunks - 1;
    uint32_t tokens = stream_event_tokens(self, info, into);
    stream_set_tokens(self, into, join ? stream_chunk_tokens(self, into) + tokens : tokens);
    self->settings->counters->token_chunks++;
    bool answer = info->has_tool_calls || info->has_refusal;
    if (info->has_content && !(self->reply_unused && stream_tail_event(self, info, &answer))) {
        size_t n = stream_append_content(self, info);
        answer = stream_think(self, self->reply, self->reply_len - n, self->reply_len, answer);
        if (self->reply_unused)
            stream_trim_reply(self);
    }
    if (info->has_refusal)
        self->record->refusal = true;
    if (answer) {
        rec->content_chunks++;
        if (!rec->first_content_ns)
            rec->first_content_ns = self->now_ns;
    } else {
        rec->reasoning_chunks++;
    }
}

/* Usage as the event gave it: each count it carried replaces the one before (a Messages stream
 * has the prompt's in message_start and the output's in message_delta). */
static void stream_usage(stream_t *self, const chunk_info_t *info) {
    request_record_t *rec = self->record;
    rec->has_usage = true;
    if (info->usage_fields & CHUNK_USAGE_PROMPT)
        rec->prompt_tokens = info->prompt_tokens;
    if (info->usage_fields & CHUNK_USAGE_CACHED)
        rec->cached_tokens = info->cached_tokens;
    if (info->usage_fields & CHUNK_USAGE_COMPLETION) {
        rec->completion_tokens = info->completion_tokens;
        self->usage_completion = info->completion_tokens;
        self->usage_seen = true;
    }
}

/* The Responses API's id of the reply, kept for the next turn's previous_response_id; an id that
 * does not fit, or needs escapes, is not kept. */
static void stream_keep_response_id(stream_t *self, const chunk_info_t *info) {
    char *out = self->record->response_id;
    size_t n = info->response_id_len;
    if (n >= sizeof self->record->response_id || memchr(info->response_id, '\\', n))
        return;
    memcpy(out, info->response_id, n);
    out[n] = '\0';
}

/* One event's data in the shape of the configured API. */
static int stream_parse_event(const stream_t *self, const char *data, size_t len,
                              chunk_info_t *info) {
    switch (self->settings->api) {
    case API_MESSAGES:
        return chunk_messages_parse(data, len, info);
    case API_RESPONSES:
        return chunk_responses_parse(data, len, info);
    default:
        return chunk_parse_shaped(self->settings->chunk_shape, data, len, info);
    }
}

/* What an event's chunk said, parsed from its data (data, len: the event's, for messages). */
static void stream_on_chunk(stream_t *self, const chunk_info_t *info, const char *data,
                            size_t len) {
    stream_counters_t *counters = self->settings->counters;
    if (info->has_sent_ns && counters->sent_delay && self->now_ns >= info->sent_ns)
        histogram_record(counters->sent_delay, (uint64_t)(self->now_ns - info->sent_ns));
    if (info->has_error) {
        char text[STREAM_MESSAGE_MAX + 1];
        stream_error_text(data, len, text, sizeof(text));
        stream_fail(self, ERROR_SERVER_ERROR_EVENT, "error in stream: %s", text);
    }
    if (info->has_content || info->has_tool_calls || info->has_reasoning || info->has_refusal)
        stream_token_chunk(self, info);
    if (info->finish_reason) {
        self->got_finish = true;
        self->record->finish_reason =
            finish_reason_parse(info->finish_reason, info->finish_reason_len);
    }
    if (info->has_usage)
        stream_usage(self, info);
    if (info->response_id && !self->record->response_id[0])
        stream_keep_response_id(self, info);
    if (info->done) { /* [DONE], or the API's own last event */
        self->got_done = true;
        self->done_ns = self->now_ns;
    }
}

static int stream_on_event(void *arg, const sse_event_t *event) {
    stream_t *self = arg;
    self->settings->counters->sse_events++;
    if (event->event_len == 5 && memcmp(event->event, "error", 5) == 0) {
        char text[STREAM_MESSAGE_MAX + 1];
        stream_error_text(event->data, event->data_len, text, sizeof(text));
        stream_fail(self, ERROR_SERVER_ERROR_EVENT, "error event in stream: %s", text);
        return 0;
    }
    if (event->data_len == 0)
        return 0;
    chunk_info_t info;
    if (stream_parse_event(self, event->data, event->data_len, &info) < 0) {
        char text[61];
        stream_printable(event->data, event->data_len, text, sizeof(text));
        stream_fail(self, ERROR_MALFORMED_SSE, "malformed chunk after %u tokens: %s",
                    self->n_chunks, text);
        return 0;
    }
    stream_on_chunk(self, &info, event->data, event->data_len);
    return 0;
}

/* The events at the head of a write that are each one line "data: P" and a blank line, P a chat
 * or completions payload the engine's chunk shape reads, while the parser is at an event's
 * boundary (sse_room): dispatched as the parser would dispatch them, with nothing left for it to
 * change, but without scanning for their line ends (the shape's read finds P's end) or touching
 * the parser. The rest of the write goes to the parser. Returns the bytes consumed. */
static size_t stream_shaped_events(stream_t *self, const char *data, size_t len) {
    chunk_shape_t *shape = self->settings->chunk_shape;
    size_t done = 0;
    /* a line longer than the parser's limit is left to it, to fail */
    size_t line_max = self->sse_room;
    while (len - done > 8 && memcmp(data + done, "data: ", 6) == 0) {
        const char *payload = data + done + 6;
        size_t room = len - done - 6;
        if (room > line_max - 6 + 2)
            room = line_max - 6 + 2;
        chunk_info_t info;
        size_t n = chunk_frame_shaped(shape, payload, room, &info);
        if (!n)
            break;
        self->settings->counters->sse_events++;
        self->settings->counters->shaped_events++;
        stream_on_chunk(self, &info, payload, n);
        done += 6 + n + 2;
    }
    return done;
}

/* The body of an error or non-streaming response, kept whole up to a bound. */
static size_t stream_keep_body(stream_t *self, const char *data, size_t len) {
    size_t max = self->status >= 400 ? STREAM_ERROR_BODY_MAX : STREAM_JSON_BODY_MAX;
    if (self->body_len + len > max) {
        if (self->status >= 400) {
            len = max - self->body_len; /* the message is at the start; drop the rest */
        } else {
            stream_fail(self, ERROR_PROTOCOL, "response body larger than %zu bytes", max);
            return 0;
        }
    }
    if (buffer_grow_array(&self->body, &self->body_cap, self->body_len + len, 1) < 0) {
        stream_fail(self, ERROR_PROTOCOL, "out of memory holding the response body");
        return 0;
    }
    memcpy(self->body + self->body_len, data, len);
    self->body_len += len;
    return len;
}

static void stream_headers_end(stream_t *self, int64_t now_ns) {
    self->headers_done = true;
    self->status = self->pending_status;
    self->record->headers_ns = now_ns;
    self->record->http_status = self->status;
    self->streaming = self->pending_sse && self->status >= 200 && self->status < 300;
}

static size_t stream_on_write(char *data, size_t size, size_t nmemb, void *arg) {
    stream_t *self = arg;
    /* first: every event in these bytes arrived now */
    int64_t now_ns =
        self->settings->counters->read_ns ? self->settings->counters->read_ns : loop_now_ns();
    size_t len = size * nmemb;
    stream_counters_t *counters = self->settings->counters;
    counters->write_callbacks++;
    counters->body_bytes += len;
    if (!self->headers_done) {
        long code = 0;
        curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &code);
        self->pending_status = (int)code;
        stream_headers_end(self, now_ns);
    }
    if (!self->sniffed) {
        /* Some servers stream SSE under another Content-Type; the bytes tell. */
        self->sniffed = true;
        if (!self->streaming && self->status >= 200 && self->status < 300 &&
            ((len >= 5 && memcmp(data, "data:", 5) == 0) ||
             (len >= 6 && memcmp(data, "event:", 6) == 0)))
            self->streaming = true;
    }
    if (!self->streaming)
        return stream_keep_body(self, data, len) == len || self->status >= 400 ? len : 0;
    if (now_ns != self->now_ns) { /* a new stamp: no chunk was made at it yet */
        self->now_ns = now_ns;
        self->chunk_at_now = false;
    }
    size_t done = self->sse_room >= 8 ? stream_shaped_events(self, data, len) : 0;
    if (done == len)
        return len;
    int rc = sse_parser_feed(self->parser, data + done, len - done);
    if (rc < 0) {
        stream_fail(self, ERROR_MALFORMED_SSE, "malformed event stream: %s",
                    sse_parser_error(self->parser));
        return CURL_WRITEFUNC_ERROR;
    }
    self->sse_room = self->settings->api == API_CHAT || self->settings->api == API_COMPLETIONS
                         ? sse_parser_room(self->parser)
                         : 0;
    return len;
}

/* Whether a header line is the named header ("Name:" whatever its case). */
static bool stream_header_is(const char *name, const char *line, size_t len) {
    size_t n = strlen(name);
    return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/* The replica that answered (target.replica_header): its value, trimmed, hashed (never 0). */
static void stream_read_replica(stream_t *self, const char *line, size_t len) {
    const char *value = (const char *)memchr(line, ':', len) + 1, *end = line + len;
    while (value < end && (*value == ' ' || *value == '\t'))
        value++;
    while (end > value && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    uint64_t hash = XXH3_64bits(value, (size_t)(end - value));
    self->record->replica = hash ? hash : 1;
}

static size_t stream_on_header(char *line, size_t size, size_t nmemb, void *arg) {
    int64_t now_ns = loop_now_ns();
    stream_t *self = arg;
    size_t len = size * nmemb;
    if (self->headers_done) /* trailers */
        return len;
    if (!self->first_header_ns) { /* the connection is curl's still: its TLS session too */
        self->first_header_ns = now_ns;
        phases_read_tls(self->easy, self->record);
    }
    if (len > 5 && memcmp(line, "HTTP/", 5) == 0) {
        const char *space = memchr(line, ' ', len);
        int status = 0;
        for (const char *p = space ? space + 1 : line + len;
             p < line + len && *p >= '0' && *p <= '9'; p++)
            status = status * 10 + (*p - '0');
        self->pending_status = status;
        self->pending_sse = false;
    } else if (len <= 2 && (line[0] == '\r' || line[0] == '\n')) {
        if (self->pending_status >= 200) /* a 1xx block is followed by the real one */
            stream_headers_end(self, now_ns);
    } else if (len > 13 && strncasecmp(line, "content-type:", 13) == 0) {
        char value[128]; /* curl's header lines are not NUL-terminated */
        size_t n = len - 13 < sizeof(value) - 1 ? len - 13 : sizeof(value) - 1;
        memcpy(value, line + 13, n);
        value[n] = '\0';
        self->pending_sse = strcasestr(value, "text/event-stream") != NULL;
    } else if (self->settings->replica_header &&
               stream_header_is(self->settings->replica_header, line, len)) {
        stream_read_replica(self, line, len);
    } else if (len > 12 && strncasecmp(line, "retry-after:", 12) == 0) {
        char value[64];
        size_t n = len - 12 < sizeof(value) - 1 ? len - 12 : sizeof(value) - 1;
        memcpy(value, line + 12, n);
        while (n > 0 && (value[n - 1] == '\r' || value[n - 1] == '\n' || value[n - 1] == ' '))
            n--;
        value[n] = '\0';
        long seconds = stream_parse_retry_after(value, time(NULL));
        self->retry_after_s = seconds > INT32_MAX ? INT32_MAX : (int32_t)seconds;
    }
    return len;
}

long stream_parse_retry_after(const char *value, time_t now) {
    while (*value == ' ' || *value == '\t')
        value++;
    if (*value >= '0' && *value <= '9') {
        char *end;
        errno = 0;
        long long s = strtoll(value, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (*end || errno || s < 0)
            return -1;
        return s > LONG_MAX ? LONG_MAX : (long)s;
    }
    time_t when = curl_getdate(value, NULL); /* an HTTP-date: RFC 9110 section 10.2.3 */
    if (when == (time_t)-1)
        return -1;
    return when > now ? (long)(when - now) : 0;
}

/* Feeds a body too large to go with the headers to curl; stamps the call that hands over its last
 * byte. */
static size_t stream_on_read(char *buffer, size_t size, size_t nitems, void *arg) {
    stream_t *self = arg;
    size_t room = size * nitems, left = self->upload_len - self->upload_off;
    size_t n = left < room ? left : room;
    if (n)
        memcpy(buffer, self->upload + self->upload_off, n);
    self->upload_off += n;
    if (self->upload_off == self->upload_len && !self->upload_done_ns)
        self->upload_done_ns = loop_now_ns();
    return n;
}

/* curl rewinds the body when it resends the request (a reused connection the server had closed):
 * counted, since a response the server never sent would otherwise leave no trace. */
static int stream_on_seek(void *arg, curl_off_t offset, int origin) {
    stream_t *self = arg;
    if (origin != SEEK_SET || offset < 0 || (size_t)offset > self->upload_len)
        return CURL_SEEKFUNC_CANTSEEK;
    if (offset == 0 && self->upload_off > 0)
        self->resends++;
    self->upload_off = (size_t)offset;
    self->upload_done_ns = 0;
    return CURL_SEEKFUNC_OK;
}

/* curl is about to send the request on a connection, new or reused; it does so again on a fresh
 * one when a reused connection closes before any response byte (libcurl 7.88: MSTATE_DO of
 * lib/multi.c, reached anew through Curl_retry_request). A body sent with the headers is handed
 * over now; and a call after an earlier attempt wrote its request (CURLINFO_REQUEST_SIZE, summed
 * over the attempts of one transfer, grew) is a resend, counted as stream_on_seek counts a read
 * body's. */
static int stream_on_prereq(void *arg, char *primary_ip, char *local_ip, int primary_port,
                            int local_port) {
    stream_t *self = arg;
    (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
    if (!self->upload_with_headers)
        return CURL_PREREQFUNC_OK;
    long sent = 0;
    curl_easy_getinfo(self->easy, CURLINFO_REQUEST_SIZE, &sent);
    if (sent > self->request_bytes)
        self->resends++;
    self->request_bytes = sent;
    self->upload_done_ns = loop_now_ns();
    return CURL_PREREQFUNC_OK;
}

/* Called once per new socket: counts connections opened (the rest of the requests reused one). */
static int stream_on_socket_opened(void *arg, curl_socket_t fd, curlsocktype purpose) {
    stream_t *self = arg;
    if (purpose == CURLSOCKTYPE_IPCXN)
        self->settings->counters->connections++;
    return CURL_SOCKOPT_OK;
}

/* Opens each socket as curl would, keeping why it could not: curl reports a failed socket() as
 * a connect failure with no errno, and running out of descriptors is the client's fault, not the
 * server's (class client_fd_limit). */
static curl_socket_t stream_on_open_socket(void *arg, curlsocktype purpose,
                                           struct curl_sockaddr *address) {
    stream_t *self = arg;
    (void)purpose;
    curl_socket_t fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    self->socket_errno = (int16_t)(fd == CURL_SOCKET_BAD ? errno : 0);
    return fd;
}

stream_t *stream_new(const stream_settings_t *settings, void *user) {
    assert(settings && settings->counters);
    /* on a cache line's boundary, so a token's fields take two lines, not three */
    stream_t *self = aligned_alloc(64, sizeof(*self));
    if (!self)
        return NULL;
    memset(self, 0, sizeof(*self));
    self->settings = settings;
    self->user = user;
    self->easy = curl_easy_init();
    self->parser = sse_parser_new(stream_on_event, self);
    if (settings->tokenizer)
        self->tokens = reply_tokens_new(settings->tokenizer, settings->tokenizer_scratch);
    if (!self->easy || !self->parser || (settings->tokenizer && !self->tokens)) {
        stream_destroy(&self);
        return NULL;
    }
    CURL *e = self->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, self);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, stream_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, self);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, stream_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, self);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, stream_on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, self);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, stream_on_seek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, self);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, stream_on_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, self);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, self->curl_error);
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, stream_on_socket_opened);
    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, self);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, stream_on_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, self);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "stampede");
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, settings->buffer_size);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, settings->headers);
    curl_net_apply(settings->net, e);
    return self;
}

void stream_destroy(stream_t **self_p) {
    assert(self_p);
    stream_t *self = *self_p;
    if (!self)
        return;
    if (self->easy)
        curl_easy_cleanup(self->easy);
    sse_parser_destroy(&self->parser);
    reply_tokens_destroy(&self->tokens);
    free(self->chunk_ns);
    free(self->chunk_tokens);
    free(self->reply);
    free(self->body);
    free(self->session);
    free(self);
    *self_p = NULL;
}

CURL *stream_easy(const stream_t *self) {
    return self->easy;
}

void *stream_user(const stream_t *self) {
    return self->user;
}

stream_t *stream_of_easy(CURL *easy) {
    stream_t *self = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&self);
    return self;
}

request_record_t *stream_record(const stream_t *self) {
    return self->record;
}

void stream_drop_reply(stream_t *self) {
    assert(self);
    self->reply_unused = true;
}

const char *stream_reply(const stream_t *self, size_t *len) {
    if (self->reply_unused) {
        *len = 0;
        return "";
    }
    *len = self->reply_len;
    return self->reply ? self->reply : "";
}

static void stream_reset(stream_t *self, request_record_t *record, int64_t send_ns) {
    self->record = record;
    self->pending_status = 0;
    self->pending_sse = false;
    self->status = 0;
    self->headers_done = false;
    self->streaming = false;
    self->sniffed = false;
    self->got_done = false;
    self->socket_errno = 0;
    self->got_finish = false;
    self->done_ns = 0;
    self->usage_seen = false;
    self->usage_completion = 0;
    self->usage_first_chunk = UINT32_MAX;
    self->usage_first_tokens = 0;
    self->n_chunks = 0;
    self->tally = (stream_tally_t){0};
    self->multi_token = false;
    self->reply_unused = false;
    think_reset(&self->think, &self->settings->reasoning_tags);
    self->think_undecided = 0;
    self->think_undecided_chunk = 0;
    self->think_answer_events = 0;
    self->upload_off = 0;
    self->request_bytes = 0;
    self->upload_done_ns = 0;
    self->first_header_ns = 0;
    self->resends = 0;
    self->retry_after_s = -1;
    self->reply_len = 0;
    self->tail_len = 0;
    self->chunk_at_now = false;
    self->body_len = 0;
    self->curl_error[0] = '\0';
    sse_parser_reset(self->parser);
    self->sse_room = 0;
    if (self->tokens)
        reply_tokens_reset(self->tokens);

    record->send_ns = send_ns;
    record->headers_ns = 0;
    record->first_token_ns = 0;
    record->first_content_ns = 0;
    record->end_ns = 0;
    record->http_status = 0;
    record->error = ERROR_NONE;
    record->error_message[0] = '\0';
    record->has_usage = false;
    record->has_tokenizer_count = false;
    record->tokenizer_tokens = 0;
    record->prompt_tokens = 0;
    record->completion_tokens = 0;
    record->cached_tokens = 0;
    record->n_chunks = 0;
    record->chunk_ns = NULL;
    record->chunk_tokens = NULL;
    record->reasoning_chunks = 0;
    record->content_chunks = 0;
    record->content_bytes = 0;
    record->finish_reason = FINISH_NONE;
    record->refusal = false;
    record->has_phases = false;
    memset(record->phase_ns, 0, sizeof record->phase_ns);
    record->connection_reused = false;
    record->tls_version = 0;
    record->tls_resumed = false;
    record->body_hash = 0;
    record->replica = 0;
    record->response_id[0] = '\0';
    /* record->resends is not reset: a request resent after a 429 keeps the resends libcurl made
     * during its earlier attempts (the caller zeroes the record for a new request) */
    record->retry_after_s = -1;
}

int stream_begin(stream_t *self, const char *url, const char *body, size_t body_len,
                 const char *session_id, request_record_t *record, int64_t send_ns) {
    assert(self && url && record);
    stream_reset(self, record, send_ns);
    if (stream_reserve_chunks(self, 1) < 0) {
        stream_fail(self, ERROR_PROTOCOL, "out of memory for the reply's chunk stamps");
        return -1;
    }
    if (curl_easy_setopt(self->easy, CURLOPT_URL, url) != CURLE_OK) {
        stream_fail(self, ERROR_CONNECT, "cannot use URL %s", url);
        return -1;
    }
    /* curl loads a RESOLVE list into the multi handle's DNS cache, as permanent entries, at the
     * next transfer of the handle that was given it; so a handle passes the list on only when a
     * pin was added since it last did, and each new pin reaches the cache before a resolver
     * thread would be spawned for it. */
    if (self->resolve_version != self->settings->resolve_version) {
        curl_easy_setopt(self->easy, CURLOPT_RESOLVE, self->settings->resolve);
        self->resolve_version = self->settings->resolve_version;
        self->settings->counters->resolve_updates++;
    }
    /* The moment the body's last byte is handed over is stamped either way: by stream_on_prereq
     * for a body sent with the headers, by stream_on_read for one read. */
    self->upload = body ? body : "";
    self->upload_len = body ? body_len : 0;
    self->upload_with_headers = self->upload_len < STREAM_BODY_WITH_HEADERS_MAX;
    record->body_hash = self->upload_len ? XXH3_64bits(self->upload, self->upload_len) : 0;
    curl_easy_setopt(self->easy, CURLOPT_POSTFIELDS,
                     self->upload_with_headers ? self->upload : NULL);
    curl_easy_setopt(self->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)self->upload_len);
    if (!session_id) {
        curl_easy_setopt(self->easy, CURLOPT_HTTPHEADER, self->settings->headers);
        return 0;
    }
    if (strpbrk(session_id, "\r\n")) {
        stream_fail(self, ERROR_CONNECT, "session id contains a line break");
        return -1;
    }
    const char *name =
        self->settings->session_header ? self->settings->session_header : "X-Session-ID";
    size_t need = strlen(name) + strlen(session_id) + sizeof(": ");
    stream_session_t *session = self->session;
    if (!session || session->cap < need) {
        session = realloc(session, sizeof(*session) + need);
        if (!session) {
            stream_fail(self, ERROR_CONNECT, "out of memory for the session header");
            return -1;
        }
        session->cap = need;
        self->session = session;
    }
    snprintf(session->line, session->cap, "%s: %s", name, session_id);
    session->node.data = session->line;
    session->node.next = self->settings->headers;
    curl_easy_setopt(self->easy, CURLOPT_HTTPHEADER, &session->node);
    return 0;
}

static const char *stream_curl_reason(const stream_t *self, CURLcode result) {
    return self->curl_error[0] ? self->curl_error : curl_easy_strerror(result);
}

/* Whether an error body says the request exceeds the model's context: vLLM's "maximum context
 * length" (both its wordings start so), its V1 "longer than the maximum model length", its
 * max_model_len wording, OpenAI's "context_length_exceeded" code, or Anthropic's "prompt is too
 * long". */
static bool stream_says_context_length(const char *body, size_t len) {
    static const char *const needles[] = {
        "maximum context length", "max_model_len", "context_length_exceeded",
        "longer than the maximum model length", "prompt is too long"};
    for (size_t i = 0; body && i < sizeof(needles) / sizeof(needles[0]); i++)
        if (memmem(body, len, needles[i], strlen(needles[i])))
            return true;
    return false;
}

static void stream_fail_http(stream_t *self) {
    char text[STREAM_MESSAGE_MAX + 1] = "";
    if (self->body_len)
        stream_error_text(self->body, self->body_len, text, sizeof(text));
    error_class_t error = self->status >= 500 ? ERROR_HTTP_5XX : ERROR_HTTP_4XX;
    if (self->status == 500)
        error = ERROR_HTTP_500;
    else if (self->status == 503)
        error = ERROR_HTTP_503;
    else if (self->status == 429)
        error = ERROR_HTTP_429;
    else if (self->status == 529)
        error = ERROR_HTTP_529;
    else if (self->status == 400 && stream_says_context_length(self->body, self->body_len))
        error = ERROR_CONTEXT_LENGTH;
    stream_fail(self, error, "HTTP %d: %s", self->status, text[0] ? text : "(empty body)");
}

/* A non-streaming reply: one JSON document, counted as one chunk at its end. */
static void stream_parse_json_body(stream_t *self) {
    request_record_t *rec = self->record;
    json_error_t error;
    json_t *root = json_loadb(self->body ? self->body : "", self->body_len, 0, &error);
    if (!json_is_object(root)) {
        char text[61];
        stream_printable(self->body ? self->body : "", self->body_len, text, sizeof(text));
        stream_fail(self, ERROR_NOT_SSE, "HTTP %d body is neither SSE nor JSON (%s): %s",
                    self->status, error.text, text);
        json_decref(root);
        return;
    }
    json_t *err = json_object_get(root, "error");
    if (err && !json_is_null(err)) {
        char text[STREAM_MESSAGE_MAX + 1];
        stream_error_text(self->body, self->body_len, text, sizeof(text));
        stream_fail(self, ERROR_PROTOCOL, "error in response: %s", text);
    }
    json_t *usage = json_object_get(root, "usage");
    if (json_is_object(usage)) {
        rec->has_usage = true;
        rec->prompt_tokens = (uint32_t)json_integer_value(json_object_get(usage, "prompt_tokens"));
        rec->completion_tokens =
            (uint32_t)json_integer_value(json_object_get(usage, "completion_tokens"));
        json_t *details = json_object_get(usage, "prompt_tokens_details");
        rec->cached_tokens =
            (uint32_t)json_integer_value(json_object_get(details, "cached_tokens"));
    }
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    if (!json_is_object(choice)) {
        stream_fail(self, ERROR_PROTOCOL, "response has no choices");
        json_decref(root);
        return;
    }
    json_t *message = json_object_get(choice, "message");
    json_t *content =
        message ? json_object_get(message, "content") : json_object_get(choice, "text");
    json_t *reasoning = json_object_get(message, "reasoning_content");
    if (!reasoning)
        reasoning = json_object_get(message, "reasoning");
    json_t *tools = json_object_get(message, "tool_calls");
    size_t n = json_string_length(content);
    if (n && buffer_grow_array(&self->reply, &self->reply_cap, n, 1) == 0) {
        memcpy(self->reply, json_string_value(content), n);
        self->reply_len = n;
        rec->content_bytes = n;
    }
    rec->refusal = json_string_length(json_object_get(message, "refusal")) > 0;
    bool has_answer = json_array_size(tools) > 0 || rec->refusal;
    if (self->reply_len) /* text that is all reasoning between the tags is no answer */
        has_answer |= think_feed(&self->think, &self->settings->reasoning_tags, self->reply, 0,
                                 self->reply_len)
                          .kind != THINK_IS_REASONING;
    bool has_reasoning = json_string_length(reasoning) > 0 || (n && !has_answer);
    if (has_answer || has_reasoning) {   /* stream_begin made room for one chunk at least */
        self->chunk_ns[0] = rec->end_ns; /* one token, as chunks are until told otherwise */
        if (self->tokens) {              /* the whole reply is one chunk */
            reply_tokens_text(self->tokens, json_string_value(reasoning),
                              json_string_length(reasoning), 0);
            reply_tokens_text(self->tokens, json_string_value(content), json_string_length(content),
                              0);
        }
        self->n_chunks = 1;
        self->settings->counters->token_chunks++;
        rec->first_token_ns = rec->end_ns;
        if (has_answer) {
            rec->first_content_ns = rec->end_ns;
            rec->content_chunks = 1;
        } else {
            rec->reasoning_chunks = 1;
        }
    }
    json_t *finish = json_object_get(choice, "finish_reason");
    self->got_finish = json_is_string(finish);
    if (self->got_finish)
        rec->finish_reason =
            finish_reason_parse(json_string_value(finish), json_string_length(finish));
    json_decref(root);
}

/* The connection ended before the response did (docs/metrics.md section 3): with no response byte,
 * a reset of a connection curl had just opened (the request's own, or the one libcurl resent it
 * on) is a refusal, any other hang-up (a clean close, or a part of a head) a reset before the
 * headers;
 * after the head, a stream cut inside an event is truncated JSON, one cut between events a reset
 * mid-stream; a non-SSE body cut short is incomplete. */
static void stream_fail_lost(stream_t *self, CURLcode result) {
    const char *reason = stream_curl_reason(self, result);
    if (!self->headers_done) {
        long new_connections = 0;
        curl_easy_getinfo(self->easy, CURLINFO_NUM_CONNECTS, &new_connections);
        bool reset = result == CURLE_RECV_ERROR || result == CURLE_SEND_ERROR;
        if (!self->first_header_ns && reset && new_connections > 0)
            stream_fail(self, ERROR_REFUSED, "connection reset before any response byte: %s",
                        reason);
        else
            stream_fail(self, ERROR_RESET_BEFORE_HEADERS,
                        "connection closed before the response headers: %s", reason);
    } else if (!self->streaming) {
        stream_fail(self, ERROR_INCOMPLETE, "connection lost after %zu body bytes: %s",
                    self->body_len, reason);
    } else if (sse_parser_finish(self->parser)) {
        stream_fail(self, ERROR_TRUNCATED_JSON,
                    "connection lost inside an event after %u chunks: %s", self->n_chunks, reason);
    } else {
        stream_fail(self, ERROR_RESET_MID_STREAM, "connection lost after %u chunks: %s",
                    self->n_chunks, reason);
    }
}

static void stream_classify(stream_t *self, CURLcode result) {
    request_record_t *rec = self->record;
    if (self->headers_done && self->status >= 400) {
        stream_fail_http(self);
        return;
    }
    curl_off_t pretransfer = 0;
    curl_easy_getinfo(self->easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    switch (result) {
    case CURLE_OK:
        break;
    case CURLE_COULDNT_CONNECT: {
        long os_errno = 0;
        curl_easy_getinfo(self->easy, CURLINFO_OS_ERRNO, &os_errno);
        /* refused, or reset by the server before curl saw the connection up */
        bool refused = os_errno == ECONNREFUSED || os_errno == ECONNRESET;
        if (self->socket_errno == EMFILE || self->socket_errno == ENFILE) {
            stream_fail(self, ERROR_CLIENT_FD_LIMIT,
                        "cannot open a socket: %s (this worker's open-file limit, ulimit -n, is "
                        "too low for its streams)",
                        strerror(self->socket_errno));
            return;
        }
        stream_fail(self, refused ? ERROR_REFUSED : ERROR_CONNECT, "%s (%s)",
                    stream_curl_reason(self, result), strerror((int)os_errno));
        return;
    }
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
        stream_fail(self, ERROR_CONNECT, "%s", stream_curl_reason(self, result));
        return;
    case CURLE_OPERATION_TIMEDOUT:
        if (self->got_done)
            break;
        if (pretransfer <= 0) /* never connected: the connect timed out */
            stream_fail(self, ERROR_CONNECT, "%s", stream_curl_reason(self, result));
        else
            stream_fail(self, ERROR_TIMEOUT, "timed out after %u chunks: %s", self->n_chunks,
                        stream_curl_reason(self, result));
        return;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        if (self->got_done) /* the server hung up after [DONE]: the reply is whole */
            break;
        stream_fail_lost(self, result);
        return;
    case CURLE_WRITE_ERROR: /* we aborted and already said why */
        stream_fail(self, ERROR_PROTOCOL, "transfer aborted");
        return;
    default:
        if (self->got_done)
            break;
        stream_fail(self, self->headers_done ? ERROR_PROTOCOL : ERROR_CONNECT, "%s",
                    stream_curl_reason(self, result));
        return;
    }
    if (rec->error != ERROR_NONE)
        return;
    if (!self->headers_done)
        stream_fail(self, ERROR_PROTOCOL, "no HTTP response");
    else if (self->status >= 300 && self->status < 400)
        stream_fail(self, ERROR_PROTOCOL, "HTTP %d: redirects are not followed", self->status);
    else if (!self->streaming)
        stream_parse_json_body(self);
    else if (!self->got_done && !self->got_finish)
        stream_fail(self, ERROR_NO_DONE,
                    "stream ended cleanly without [DONE] or finish_reason after %u chunks",
                    self->n_chunks);
}

/* target.tokenizer: the reply tokenised once, whole; without usage on every token event, each
 * chunk carries the tokens whose last byte came in it. */
static void stream_count_reply(stream_t *self) {
    request_record_t *rec = self->record;
    if (stream_track_tokens(self) < 0) {
        stream_fail(self, ERROR_PROTOCOL, "out of memory counting the reply's tokens");
        return;
    }
    uint32_t tokens = reply_tokens_finish(self->tokens, self->chunk_tokens, self->n_chunks);
    if (reply_tokens_failed(self->tokens))
        return;
    rec->tokenizer_tokens = tokens;
    rec->has_tokenizer_count = true;
    bool multi_token = false; /* else the record says one token a chunk with no array */
    for (uint32_t i = 0; i < self->n_chunks && !multi_token; i++)
        multi_token = self->chunk_tokens[i] > 1;
    self->multi_token = multi_token;
}

/* The reply has ended: what its token events counted goes into the record (stream_tally_t),
 * the events still undecided between reasoning and answer counted as answer first. Before the
 * ending is classified, which reads a non-streaming reply's body into the record. */
static void stream_settle(stream_t *self) {
    if (self->think_undecided) { /* the reply never got past whitespace or a part of the tag */
        think_event_t ev = {THINK_IS_ANSWER, THINK_EARLIER_UNDECIDED_WERE_ANSWER};
        stream_think_earlier(self, &ev);
    }
    request_record_t *rec = self->record;
    rec->first_token_ns = self->n_chunks ? self->chunk_ns[0] : 0;
    rec->first_content_ns = self->tally.first_content_ns;
    rec->content_chunks = self->tally.content_chunks;
    rec->reasoning_chunks = self->tally.reasoning_chunks;
    rec->content_bytes = self->tally.content_bytes;
}

static void stream_publish(stream_t *self) {
    request_record_t *rec = self->record;
    if (self->tokens && rec->error == ERROR_NONE)
        stream_count_reply(self);
    rec->n_chunks = self->n_chunks;
    rec->chunk_ns = self->n_chunks ? self->chunk_ns : NULL;
    rec->chunk_tokens = self->n_chunks && self->multi_token ? self->chunk_tokens : NULL;
}

void stream_complete(stream_t *self, CURLcode result, int64_t end_ns) {
    assert(self && self->record);
    request_record_t *rec = self->record;
    stream_settle(self);
    rec->end_ns = end_ns;
    if (!self->headers_done) {
        long code = 0;
        curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &code);
        rec->http_status = (int)code;
    }
    stream_classify(self, result);
    rec->resends += self->resends;
    rec->retry_after_s = self->retry_after_s;
    phases_read(self->easy, self->upload_done_ns, self->first_header_ns, rec);
    if (self->got_done && result != CURLE_OK && rec->error == ERROR_NONE)
        rec->end_ns = self->done_ns; /* the transport failed after the reply was whole */
    stream_publish(self);
}

void stream_abandon(stream_t *self, error_class_t error, const char *message, int64_t end_ns) {
    assert(self && self->record);
    stream_settle(self);
    self->record->end_ns = end_ns;
    stream_fail(self, error, "%s", message);
    stream_publish(self);
}
