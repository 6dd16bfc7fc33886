/* Reading a dataset file into conversations (common/dataset.h): a ShareGPT JSON array of rows, or
 * a JSONL file of one row per line. A row is a conversation (`conversations` of {from, value},
 * ShareGPT's; `conversation` or `messages` of {role, content}, LMSYS's and OpenAI's) or one prompt
 * (`prompt`). The array is read one row at a time, so memory holds the file and one row's tree,
 * and a row's errors name the line it starts on. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset.h"
#include "prompt.h"
#include "text_lines.h"
#include "workload.h"

typedef enum { SPEAKER_USER, SPEAKER_REPLY, SPEAKER_SKIP, SPEAKER_UNKNOWN } dataset_speaker_t;

int dataset_fail(dataset_reader_t *rd, int line, int column, const char *key, const char *fmt,
                 ...) {
    va_list ap;
    va_start(ap, fmt);
    config_error_setv(rd->err, rd->file, line, line > 0 ? column : 0, key, fmt, ap);
    va_end(ap);
    return -1;
}

static dataset_speaker_t dataset_speaker(const char *who) {
    static const char *const users[] = {"human", "user", NULL};
    static const char *const replies[] = {"gpt",  "assistant", "chatgpt", "bard",
                                          "bing", "model",     NULL};
    for (size_t i = 0; users[i]; i++)
        if (strcmp(who, users[i]) == 0)
            return SPEAKER_USER;
    for (size_t i = 0; replies[i]; i++)
        if (strcmp(who, replies[i]) == 0)
            return SPEAKER_REPLY;
    return strcmp(who, "system") == 0 ? SPEAKER_SKIP : SPEAKER_UNKNOWN;
}

/* The length of a text as stampede counts it: the tokenizer's, else the words. */
static int64_t dataset_count(dataset_reader_t *rd, const char *text, size_t len) {
    if (!rd->tokenizer)
        return (int64_t)prompt_count_words(text, len);
    return tokenizer_encode(rd->tokenizer, rd->scratch, text, len, NULL, 0);
}

/* Ends the last turn: counts its text and its reply. 0 or -1. */
static int dataset_close_turn(dataset_reader_t *rd, int line, const char *key, bool has_reply) {
    dataset_turn_t *t = &rd->turns[rd->n_turns - 1];
    int64_t tokens = dataset_count(rd, rd->arena.data + t->text_at, t->text_len);
    int64_t reply = has_reply ? dataset_count(rd, rd->reply.data, rd->reply.len) : -1;
    if (tokens < 0 || (has_reply && reply < 0))
        return dataset_fail(rd, line, 0, key, "out of memory counting tokens");
    t->tokens = tokens > WORKLOAD_MAX_TOKENS ? WORKLOAD_MAX_TOKENS + 1u : (uint32_t)tokens;
    t->reply_tokens = reply;
    buffer_reset(&rd->reply);
    return 0;
}

/* Appends text to the open turn (joined with a newline) or to a new one. */
static int dataset_add_user(dataset_reader_t *rd, int line, const char *key, const char *text,
                            size_t len, bool join) {
    dataset_turn_t *t = join ? &rd->turns[rd->n_turns - 1] : NULL;
    size_t total = (t ? t->text_len + 1 : 0) + len;
    if (total > DATASET_MAX_TEXT_BYTES)
        return dataset_fail(rd, line, 0, key,
                            "a turn of %zu bytes: more than the %u a turn may have", total,
                            DATASET_MAX_TEXT_BYTES);
    if (!t) {
        if (buffer_grow_array(&rd->turns, &rd->cap_turns, rd->n_turns + 1, sizeof *rd->turns))
            return dataset_fail(rd, line, 0, key, "out of memory");
        t = &rd->turns[rd->n_turns++];
        t->text_at = rd->arena.len;
        t->text_len = 0;
    } else if (buffer_append(&rd->arena, "\n", 1) != 0) {
        return dataset_fail(rd, line, 0, key, "out of memory");
    }
    if (buffer_append(&rd->arena, text, len) != 0)
        return dataset_fail(rd, line, 0, key, "out of memory");
    t->text_len = (uint32_t)total;
    return 0;
}

/* A message's text: a string, or OpenAI's list of parts whose text parts are joined. NULL when
 * it is neither (what is wrong in why). */
static const char *dataset_content(json_t *v, buffer_t *scratch, size_t *len, const char **why) {
    if (json_is_string(v)) {
        *len = json_string_length(v);
        return json_string_value(v);
    }
    if (!json_is_array(v)) {
        *why = "expected a string (or a list of text parts)";
        return NULL;
    }
    buffer_reset(scratch);
    size_t i;
    json_t *part;
    json_array_foreach(v, i, part) {
        json_t *text = json_object_get(part, "text");
        if (!json_is_string(text) || !json_is_string(json_object_get(part, "type")) ||
            strcmp(json_string_value(json_object_get(part, "type")), "text") != 0) {
            *why = "a part that is not {\"type\": \"text\", \"text\": ...}: only text is sent";
            return NULL;
        }
        if ((scratch->len && buffer_append(scratch, "\n", 1) != 0) ||
            buffer_append(scratch, json_string_value(text), json_string_length(text)) != 0) {
            *why = "out of memory";
            return NULL;
        }
    }
    *len = scratch->len;
    return scratch->len ? scratch->data : "";
}

/* A list of messages: user turns in order, each closed by the replies that follow it; leading
 * replies and system messages are not sent (the server writes the replies; the scaffold is the
 * system prompt). who/what: the keys of a message's speaker and text. */
static int dataset_read_messages(dataset_reader_t *rd, int line, const char *prefix, json_t *list,
                                 const char *list_key, const char *who, const char *what) {
    char key[128];
    size_t first = rd->n_turns, k;
    bool open = false, replied = false; /* a turn is open; it has a reply so far */
    json_t *m;
    buffer_t parts;
    buffer_init(&parts);
    int rc = 0;
    json_array_foreach(list, k, m) {
        snprintf(key, sizeof key, "%s%s[%zu]", prefix, list_key, k);
        json_t *speaker = json_object_get(m, who);
        if (!json_is_object(m) || !json_is_string(speaker)) {
            rc = dataset_fail(rd, line, 0, key, "expected an object with '%s' and '%s'", who, what);
            break;
        }
        dataset_speaker_t s = dataset_speaker(json_string_value(speaker));
        if (s == SPEAKER_UNKNOWN) {
            snprintf(key, sizeof key, "%s%s[%zu].%s", prefix, list_key, k, who);
            rc = dataset_fail(rd, line, 0, key,
                              "unknown speaker '%s' (expected human or user, gpt or assistant, "
                              "or system)",
                              json_string_value(speaker));
            break;
        }
        if (s == SPEAKER_SKIP || (s == SPEAKER_REPLY && !open))
            continue;
        size_t len = 0;
        const char *why = NULL;
        const char *text = dataset_content(json_object_get(m, what), &parts, &len, &why);
        if (!text) {
            snprintf(key, sizeof key, "%s%s[%zu].%s", prefix, list_key, k, what);
            rc = dataset_fail(rd, line, 0, key, "%s", why);
            break;
        }
        if (s == SPEAKER_USER && open && replied && (rc = dataset_close_turn(rd, line, key, true)))
            break;
        if (s == SPEAKER_USER) {
            if ((rc = dataset_add_user(rd, line, key, text, len, open && !replied)))
                break;
            open = true;
            replied = false;
            continue;
        }
        if ((replied && buffer_append(&rd->reply, "\n", 1) != 0) ||
            buffer_append(&rd->reply, text, len) != 0) {
            rc = dataset_fail(rd, line, 0, key, "out of memory");
            break;
        }
        replied = true;
    }
    buffer_clear(&parts);
    if (rc == 0 && open)
        rc = dataset_close_turn(rd, line, list_key, replied);
    if (rc != 0 || rd->n_turns == first)
        return rc;
    if (rd->n_turns - first > WORKLOAD_MAX_NODES)
        return dataset_fail(rd, line, 0, list_key,
                            "%zu user turns: more than the %u a session may have",
                            rd->n_turns - first, WORKLOAD_MAX_NODES);
    if (buffer_grow_array(&rd->conversations, &rd->cap_conversations, rd->n_conversations + 1,
                          sizeof *rd->conversations))
        return dataset_fail(rd, line, 0, list_key, "out of memory");
    rd->conversations[rd->n_conversations++] = (dataset_conversation_t){
        .first_turn = (uint32_t)first, .n_turns = (uint32_t)(rd->n_turns - first)};
    return 0;
}

/* {"prompt": TEXT, "output_tokens": N?}: one turn whose reply is N tokens long (none: no reply). */
static int dataset_read_prompt(dataset_reader_t *rd, int line, const char *prefix, json_t *row) {
    char key[128];
    json_t *prompt = json_object_get(row, "prompt");
    json_t *output = json_object_get(row, "output_tokens");
    snprintf(key, sizeof key, "%sprompt", prefix);
    if (!json_is_string(prompt))
        return dataset_fail(rd, line, 0, key, "expected a string");
    if (output && (!json_is_integer(output) || json_integer_value(output) < 1 ||
                   json_integer_value(output) > WORKLOAD_MAX_TOKENS)) {
        snprintf(key, sizeof key, "%soutput_tokens", prefix);
        return dataset_fail(rd, line, 0, key, "expected a whole number from 1 to %u",
                            WORKLOAD_MAX_TOKENS);
    }
    if (dataset_add_user(rd, line, key, json_string_value(prompt), json_string_length(prompt),
                         false) != 0 ||
        dataset_close_turn(rd, line, key, false) != 0)
        return -1;
    if (output)
        rd->turns[rd->n_turns - 1].reply_tokens = json_integer_value(output);
    if (buffer_grow_array(&rd->conversations, &rd->cap_conversations, rd->n_conversations + 1,
                          sizeof *rd->conversations))
        return dataset_fail(rd, line, 0, key, "out of memory");
    rd->conversations[rd->n_conversations++] =
        (dataset_conversation_t){.first_turn = (uint32_t)(rd->n_turns - 1), .n_turns = 1};
    return 0;
}

/* One row: a conversation in one of the three shapes, or a prompt. prefix: "[i]." in an array. */
static int dataset_read_row(dataset_reader_t *rd, int line, const char *prefix, json_t *row) {
    static const struct {
        const char *list, *who, *what;
    } shapes[] = {{"conversations", "from", "value"},
                  {"conversation", "role", "content"},
                  {"messages", "role", "content"}};
    char key[64];
    if (!json_is_object(row))
        return dataset_fail(rd, line, 0, prefix[0] ? prefix : NULL,
                            "expected a JSON object (a conversation or a prompt)");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        json_t *list = json_object_get(row, shapes[i].list);
        if (!list)
            continue;
        if (!json_is_array(list)) {
            snprintf(key, sizeof key, "%s%s", prefix, shapes[i].list);
            return dataset_fail(rd, line, 0, key, "expected a list of messages");
        }
        return dataset_read_messages(rd, line, prefix, list, shapes[i].list, shapes[i].who,
                                     shapes[i].what);
    }
    if (json_object_get(row, "prompt"))
        return dataset_read_prompt(rd, line, prefix, row);
    return dataset_fail(rd, line, 0, prefix[0] ? prefix : NULL,
                        "expected a row with 'conversations', 'conversation', 'messages' or "
                        "'prompt'");
}

static int dataset_read_jsonl_line(void *arg, int line, const char *text, size_t n) {
    dataset_reader_t *rd = arg;
    json_error_t jerr;
    json_t *row = json_loadb(text, n, 0, &jerr);
    int rc = row ? dataset_read_row(rd, line, "", row)
                 : dataset_fail(rd, line, jerr.column, NULL, "not JSON: %s", jerr.text);
    json_decref(row);
    return rc;
}

static int dataset_read_jsonl(dataset_reader_t *rd, FILE *f) {
    int rc = text_lines_each(f, dataset_read_jsonl_line, rd);
    if (rc == 0 && ferror(f))
        rc = dataset_fail(rd, 0, 0, NULL, "cannot read the file: %s", strerror(errno));
    return rc;
}

/* Where the reader is in the array: a byte offset and its line and column (1-based). */
typedef struct cursor {
    const char *p, *end;
    int line, column;
} cursor_t;

static void cursor_advance(cursor_t *c, size_t n) {
    for (const char *stop = c->p + n; c->p < stop; c->p++) {
        if (*c->p == '\n') {
            c->line++;
            c->column = 1;
        } else if (((unsigned char)*c->p & 0xC0) != 0x80) { /* a character, as jansson counts */
            c->column++;
        }
    }
}

static void cursor_skip_space(cursor_t *c) {
    size_t n = 0;
    while (c->p + n < c->end && strchr(" \t\r\n", c->p[n]) && c->p[n] != '\0')
        n++;
    cursor_advance(c, n);
}

/* [row, row, ...]: each row parsed alone where it starts (JSON_DISABLE_EOF_CHECK stops after it),
 * so a syntax error's line and column are the file's and the time is linear in the file. */
static int dataset_read_array(dataset_reader_t *rd, const char *data, size_t size) {
    cursor_t c = {.p = data, .end = data + size, .line = 1, .column = 1};
    cursor_skip_space(&c);
    if (c.p == c.end || *c.p != '[')
        return dataset_fail(rd, c.line, c.column, NULL,
                            "expected a JSON array of conversations ('[' first)");
    cursor_advance(&c, 1);
    cursor_skip_space(&c);
    bool empty = c.p < c.end && *c.p == ']';
    for (size_t i = 0; !empty; i++) {
        cursor_skip_space(&c);
        json_error_t jerr;
        json_t *row =
            json_loadb(c.p, (size_t)(c.end - c.p), JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
        if (!row)
            return dataset_fail(rd, c.line + jerr.line - 1,
                                jerr.line <= 1 ? c.column + jerr.column - 1 : jerr.column, NULL,
                                "not JSON: %s", jerr.text);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "[%zu].", i);
        int line = c.line, rc = dataset_read_row(rd, line, prefix, row);
        json_decref(row);
        if (rc != 0)
            return -1;
        cursor_advance(&c, jerr.position);
        cursor_skip_space(&c);
        if (c.p < c.end && *c.p == ',') {
            cursor_advance(&c, 1);
            continue;
        }
        if (c.p < c.end && *c.p == ']')
            break;
        return dataset_fail(rd, c.line, c.column, NULL, "expected ',' or ']' after row %zu", i);
    }
    cursor_advance(&c, 1);
    cursor_skip_space(&c);
    if (c.p != c.end)
        return dataset_fail(rd, c.line, c.column, NULL, "text after the array's closing ']'");
    return 0;
}

static int dataset_read_sharegpt(dataset_reader_t *rd, FILE *f) {
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return dataset_fail(rd, 0, 0, NULL, "cannot read the file: %s", strerror(errno));
    size_t size = (size_t)st.st_size;
    char *data = malloc(size ? size : 1);
    if (!data)
        return dataset_fail(rd, 0, 0, NULL, "out of memory for a file of %zu bytes", size);
    int rc = fread(data, 1, size, f) == size
                 ? dataset_read_array(rd, data, size)
                 : dataset_fail(rd, 0, 0, NULL, "cannot read the file: %s", strerror(errno));
    free(data);
    return rc;
}

int dataset_read(dataset_reader_t *rd, config_dataset_format_t format) {
    FILE *f = fopen(rd->file, "r");
    if (!f)
        return dataset_fail(rd, 0, 0, NULL, "cannot read the dataset: %s", strerror(errno));
    int rc =
        format == DATASET_FORMAT_JSONL ? dataset_read_jsonl(rd, f) : dataset_read_sharegpt(rd, f);
    fclose(f);
    if (rc == 0 && rd->n_conversations == 0)
        return dataset_fail(rd, 0, 0, NULL,
                            "no conversation with a user turn in it: the dataset is empty");
    return rc;
}
