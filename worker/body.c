#include "body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

void body_init(body_t *self) {
    memset(self, 0, sizeof *self);
}

void body_free(body_t *self) {
    free(self->data);
    body_init(self);
}

/* Makes room for `extra` more bytes plus a NUL; geometric growth so the buffer settles. */
static bool body_reserve(body_t *self, size_t extra) {
    if (self->failed)
        return false;
    size_t need = self->len + extra + 1;
    if (need <= self->cap)
        return true;
    if (buffer_grow_array(&self->data, &self->cap, need < 256 ? 256 : need, 1) < 0) {
        self->failed = true;
        return false;
    }
    return true;
}

static void body_put(body_t *self, const char *bytes, size_t n) {
    if (!body_reserve(self, n))
        return;
    memcpy(self->data + self->len, bytes, n);
    self->len += n;
    self->data[self->len] = '\0';
}

static void body_puts(body_t *self, const char *text) {
    body_put(self, text, strlen(text));
}

/* Length of the well-formed UTF-8 sequence (RFC 3629, no surrogates or overlongs) starting at
 * s[0] >= 0x80, or 0 when it is not one. */
static size_t body_utf8_length(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* Writes text as a JSON string body (without the quotes), copying runs of safe bytes at once.
 * Not common/escape: jansson takes 7.5x as long (330 against 44 us for a 10k-word prompt,
 * build/bench_body) on the worker's loop, where it delays other streams' receive stamps, and it
 * rejects invalid UTF-8 that a server's reply may hold, where this writes U+FFFD. */
static void body_put_escaped(body_t *self, const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t run = 0, i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t n = body_utf8_length(s + i, len - i);
            if (n) {
                i += n;
                continue;
            }
        }
        body_put(self, text + run, i - run);
        /* the characters JSON names with a letter, and those letters */
        static const char named[] = "\"\\\n\r\t\b\f", letters[] = "\"\\nrtbf";
        const char *at = c ? strchr(named, c) : NULL;
        char escape[8];
        if (at) {
            escape[0] = '\\';
            escape[1] = letters[at - named];
            body_put(self, escape, 2);
        } else if (c < 0x20) {
            snprintf(escape, sizeof escape, "\\u%04x", c);
            body_put(self, escape, 6);
        } else {
            body_put(self, "\xEF\xBF\xBD", 3); /* invalid UTF-8 byte -> U+FFFD */
        }
        i++;
        run = i;
    }
    body_put(self, text + run, len - run);
}

static void body_put_string(body_t *self, const char *text, size_t len) {
    body_put(self, "\"", 1);
    body_put_escaped(self, text, len);
    body_put(self, "\"", 1);
}

/* Whether the body's history is a list of role messages (chat, Messages, Responses' input) rather
 * than one prompt string (completions). */
static bool body_has_messages(const body_t *self) {
    return self->options.api != API_COMPLETIONS;
}

/* Opens the list of messages on the first one: chat's and Messages' "messages", Responses'
 * "input". A leading system message went to "system" or "instructions" instead. */
static void body_open_list(body_t *self) {
    if (self->list_open)
        return;
    self->list_open = true;
    body_puts(self, self->options.api == API_RESPONSES ? ",\"input\":[" : ",\"messages\":[");
}

/* A message's opening up to its content: {"role":R,"content":T (no closing brace). */
static void body_open_message(body_t *self, const char *role, const char *text, size_t len) {
    body_open_list(self);
    body_puts(self, self->parts ? ",{\"role\":" : "{\"role\":");
    body_put_string(self, role, strlen(role));
    body_puts(self, ",\"content\":");
    body_put_string(self, text, len);
}

void body_begin(body_t *self, const body_options_t *options) {
    self->len = 0;
    self->parts = 0;
    self->failed = false;
    self->list_open = false;
    self->options = *options;
    if (body_reserve(self, 0))
        self->data[0] = '\0';
    body_puts(self, "{\"model\":");
    const char *model = options->model ? options->model : "";
    body_put_string(self, model, strlen(model));
    if (options->api == API_COMPLETIONS)
        body_puts(self, ",\"prompt\":\"");
    else if (options->api == API_CHAT)
        body_open_list(self);
}

void body_add(body_t *self, const char *role, const char *text, size_t len) {
    config_api_t api = self->options.api;
    if (!body_has_messages(self)) {
        if (self->parts)
            body_puts(self, "\\n");
        body_put_escaped(self, text, len);
        self->parts++;
        return;
    }
    if (api != API_CHAT && strcmp(role, "system") == 0) {
        if (!self->list_open) { /* Messages and Responses take the system prompt apart */
            body_puts(self, api == API_MESSAGES ? ",\"system\":" : ",\"instructions\":");
            body_put_string(self, text, len);
            return;
        }
        role = "user"; /* Messages has no system role among its messages */
    }
    body_open_message(self, role, text, len);
    body_puts(self, "}");
    self->parts++;
}

void body_add_tool_call(body_t *self, const char *text, size_t len, const char *call_id,
                        const char *name) {
    config_api_t api = self->options.api;
    if (api == API_COMPLETIONS) {
        body_add(self, "assistant", text, len);
        return;
    }
    if (api == API_CHAT) {
        body_open_message(self, "assistant", text, len);
        body_puts(self, ",\"tool_calls\":[{\"id\":");
        body_put_string(self, call_id, strlen(call_id));
        body_puts(self, ",\"type\":\"function\",\"function\":{\"name\":");
        body_put_string(self, name, strlen(name));
        body_puts(self, ",\"arguments\":\"{}\"}}]}");
        self->parts++;
        return;
    }
    body_open_list(self);
    if (api == API_MESSAGES) { /* content blocks: the text (never empty), then the tool use */
        body_puts(self, self->parts ? ",{\"role\":\"assistant\",\"content\":["
                                    : "{\"role\":\"assistant\",\"content\":[");
        if (len) {
            body_puts(self, "{\"type\":\"text\",\"text\":");
            body_put_string(self, text, len);
            body_puts(self, "},");
        }
        body_puts(self, "{\"type\":\"tool_use\",\"id\":");
        body_put_string(self, call_id, strlen(call_id));
        body_puts(self, ",\"name\":");
        body_put_string(self, name, strlen(name));
        body_puts(self, ",\"input\":{}}]}");
        self->parts++;
        return;
    }
    if (len) { /* Responses: the reply, then the call as an item of its own */
        body_open_message(self, "assistant", text, len);
        body_puts(self, "}");
        self->parts++;
    }
    body_puts(self, self->parts ? ",{\"type\":\"function_call\",\"call_id\":"
                                : "{\"type\":\"function_call\",\"call_id\":");
    body_put_string(self, call_id, strlen(call_id));
    body_puts(self, ",\"name\":");
    body_put_string(self, name, strlen(name));
    body_puts(self, ",\"arguments\":\"{}\"}");
    self->parts++;
}

void body_add_tool_result(body_t *self, const char *call_id, const char *text, size_t len) {
    config_api_t api = self->options.api;
    if (api == API_COMPLETIONS) {
        body_add(self, "tool", text, len);
        return;
    }
    body_open_list(self);
    const char *sep = self->parts ? "," : "";
    body_puts(self, sep);
    if (api == API_CHAT)
        body_puts(self, "{\"role\":\"tool\",\"tool_call_id\":");
    else if (api == API_MESSAGES)
        body_puts(self, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                        "\"tool_use_id\":");
    else
        body_puts(self, "{\"type\":\"function_call_output\",\"call_id\":");
    body_put_string(self, call_id, strlen(call_id));
    body_puts(self, api == API_RESPONSES ? ",\"output\":" : ",\"content\":");
    body_put_string(self, text, len);
    body_puts(self, api == API_MESSAGES ? "}]}" : "}");
    self->parts++;
}

/* The output limit under each API's name. */
static void body_put_limit(body_t *self) {
    const body_options_t *o = &self->options;
    const char *key = o->api == API_RESPONSES ? "max_output_tokens"
                      : o->api == API_MESSAGES || !o->max_completion_tokens
                          ? "max_tokens"
                          : "max_completion_tokens";
    char number[48];
    snprintf(number, sizeof number, ",\"%s\":%u", key, o->max_tokens);
    body_puts(self, number);
}

/* stream; chat and completions also ask for usage (Messages and Responses always report it). */
static void body_put_stream(body_t *self) {
    const body_options_t *o = &self->options;
    if (!o->stream)
        body_puts(self, ",\"stream\":false");
    else if (o->api == API_MESSAGES || o->api == API_RESPONSES)
        body_puts(self, ",\"stream\":true");
    else if (o->continuous_usage)
        body_puts(self, ",\"stream\":true,\"stream_options\":{\"include_usage\":true,"
                        "\"continuous_usage_stats\":true}");
    else
        body_puts(self, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
}

int body_end(body_t *self) {
    const body_options_t *o = &self->options;
    char number[80];
    if (!body_has_messages(self))
        body_puts(self, "\"");
    else {
        body_open_list(self);
        body_puts(self, "]");
    }
    body_put_limit(self);
    body_put_stream(self);
    if (o->ignore_eos)
        body_puts(self, ",\"ignore_eos\":true");
    if (o->min_tokens) {
        snprintf(number, sizeof number, ",\"min_tokens\":%u", o->max_tokens);
        body_puts(self, number);
    }
    if (o->thinking_tokens && o->api == API_MESSAGES) {
        snprintf(number, sizeof number, ",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":%u}",
                 o->thinking_tokens);
        body_puts(self, number);
    }
    if (o->previous_response_id && o->api == API_RESPONSES) {
        body_puts(self, ",\"previous_response_id\":");
        body_put_string(self, o->previous_response_id, strlen(o->previous_response_id));
    }
    if (o->tools_json && body_has_messages(self)) {
        body_puts(self, ",\"tools\":");
        body_put(self, o->tools_json, o->tools_len);
    }
    body_puts(self, "}");
    return self->failed ? -1 : 0;
}
