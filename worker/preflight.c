#include "preflight.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loop.h"
#include "redact.h"

#define PREFLIGHT_REQUEST_NS 10000000000LL /* one preflight request at most */
#define PREFLIGHT_EXCERPT 200              /* bytes of an answer a message quotes */

/* What one preflight request got back. */
typedef struct preflight_answer {
    char body[4096]; /* the start of the body, NUL-terminated */
    size_t len;
    long status;
    char content_type[128];
    char server[128]; /* the Server header, "" when none */
    char curl_error[CURL_ERROR_SIZE];
} preflight_answer_t;

static size_t preflight_on_body(char *data, size_t size, size_t n, void *arg) {
    preflight_answer_t *a = arg;
    size_t bytes = size * n, room = sizeof a->body - 1 - a->len;
    size_t take = bytes < room ? bytes : room;
    memcpy(a->body + a->len, data, take);
    a->len += take;
    a->body[a->len] = '\0';
    return bytes;
}

/* Keeps the Server header of the answer. */
static size_t preflight_on_header(char *line, size_t size, size_t n, void *arg) {
    preflight_answer_t *a = arg;
    size_t len = size * n;
    if (len > 7 && strncasecmp(line, "server:", 7) == 0) {
        const char *v = line + 7;
        size_t vl = len - 7;
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        snprintf(a->server, sizeof a->server, "%.*s", (int)vl, v);
    }
    return len;
}

/* Performs one request (body NULL: a GET) and fills *a; the curl result. */
static CURLcode preflight_perform(const preflight_t *self, const char *url, const char *body,
                                  struct curl_slist *headers, const char *pin,
                                  preflight_answer_t *a) {
    memset(a, 0, sizeof *a);
    int64_t left = self->deadline_ns - loop_now_ns();
    if (left > PREFLIGHT_REQUEST_NS)
        left = PREFLIGHT_REQUEST_NS;
    long timeout_ms = left > 1000000 ? (long)(left / 1000000) : 1;
    long connect_ms = (long)(self->cfg->target.connect_timeout_ns / 1000000);
    CURL *e = curl_easy_init();
    if (!e) {
        snprintf(a->curl_error, sizeof a->curl_error, "out of memory");
        return CURLE_OUT_OF_MEMORY;
    }
    struct curl_slist *resolve = pin ? curl_slist_append(NULL, pin) : NULL;
    curl_net_apply(self->net, e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "stampede");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     connect_ms > 0 && connect_ms < timeout_ms ? connect_ms : timeout_ms);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, preflight_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, preflight_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a->curl_error);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    CURLcode rc = curl_easy_perform(e);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &a->status);
    char *type = NULL;
    if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
        snprintf(a->content_type, sizeof a->content_type, "%s", type);
    if (rc != CURLE_OK && !a->curl_error[0])
        snprintf(a->curl_error, sizeof a->curl_error, "%s", curl_easy_strerror(rc));
    curl_easy_cleanup(e);
    curl_slist_free_all(resolve);
    return rc;
}

/* The first PREFLIGHT_EXCERPT bytes of the answer on one line, for a message. */
static void preflight_excerpt(const preflight_answer_t *a, char *out, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < a->len && i < PREFLIGHT_EXCERPT && n + 1 < cap; i++) {
        unsigned char ch = (unsigned char)a->body[i];
        out[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    out[n] = '\0';
    if (a->len > PREFLIGHT_EXCERPT && n + 4 < cap)
        strcpy(out + n, "...");
    if (n == 0)
        snprintf(out, cap, "(no body)");
}

/* The request's JSON in the configured API's shape: the configured model, one word, one token
 * (Responses: 16, the least OpenAI accepts). malloc'd. */
static char *preflight_body(const config_t *cfg) {
    config_api_t api = cfg->target.api;
    json_t *o = json_pack("{s:s, s:i, s:b}", "model", cfg->target.model ? cfg->target.model : "",
                          api == API_RESPONSES ? "max_output_tokens" : "max_tokens",
                          api == API_RESPONSES ? 16 : 1, "stream", cfg->target.stream);
    if (api == API_CHAT || api == API_MESSAGES)
        json_object_set_new(
            o, "messages",
            json_pack("[{s:s, s:s}]", "role", "user", "content", "Reply with one word."));
    else
        json_object_set_new(o, api == API_RESPONSES ? "input" : "prompt",
                            json_string("Reply with one word."));
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* GET of path at endpoint e's base: its JSON answer when it is a 200 with a JSON body, else NULL
 * (the caller owns it). */
static json_t *preflight_get_json(const preflight_t *self, size_t e, const char *path,
                                  struct curl_slist *headers, const char *pin) {
    char base[2048], url[2100];
    config_endpoint_base(self->cfg->target.endpoints[e], base, sizeof base);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        base[--n] = '\0';
    snprintf(url, sizeof url, "%s%s", base, path);
    preflight_answer_t *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    json_t *root = NULL;
    if (preflight_perform(self, url, NULL, headers, pin, a) == CURLE_OK && a->status == 200)
        root = json_loadb(a->body, a->len, 0, NULL);
    free(a);
    return root;
}

/* The model ids of a /v1/models answer ({"data": [{"id"}...]}), or NULL when it lists none. */
static json_t *preflight_model_ids(const json_t *root) {
    json_t *ids = json_array(), *item;
    size_t i;
    json_array_foreach(json_object_get(root, "data"), i, item) {
        const char *id = json_string_value(json_object_get(item, "id"));
        if (id)
            json_array_append_new(ids, json_string(id));
    }
    if (json_array_size(ids) == 0) {
        json_decref(ids);
        return NULL;
    }
    return ids;
}

/* What a server that passed says about itself (preflight.h), appended to self->said. */
static void preflight_describe(const preflight_t *self, size_t e, struct curl_slist *headers,
                               const char *pin, const preflight_answer_t *answer) {
    json_t *models = preflight_get_json(self, e, "/v1/models", headers, pin);
    json_t *version = preflight_get_json(self, e, "/version", headers, pin);
    json_t *ids = preflight_model_ids(models);
    const char *v = json_string_value(json_object_get(version, "version"));
    json_array_append_new(
        self->said,
        json_pack("{s:s, s:o, s:o, s:o}", "endpoint", self->cfg->target.endpoints[e],
                  "server_header", answer->server[0] ? json_string(answer->server) : json_null(),
                  "models", ids ? ids : json_null(), "version", v ? json_string(v) : json_null()));
    json_decref(models);
    json_decref(version);
}

/* After a refusal: when GET /v1/models lists the served models and target.model is not among
 * them, " (the server serves: a, b; set target.model)" into out; else "". */
static void preflight_models(const preflight_t *self, size_t e, struct curl_slist *headers,
                             const char *pin, char *out, size_t cap) {
    out[0] = '\0';
    json_t *root = preflight_get_json(self, e, "/v1/models", headers, pin);
    json_t *data = json_object_get(root, "data");
    const char *model = self->cfg->target.model ? self->cfg->target.model : "";
    bool listed = false;
    size_t used = 0, i;
    json_t *item;
    json_array_foreach(data, i, item) {
        const char *id = json_string_value(json_object_get(item, "id"));
        if (!id)
            continue;
        listed = listed || strcmp(id, model) == 0;
        int w = snprintf(out + used, cap - used, "%s%s", used ? ", " : " (the server serves: ", id);
        used = w < 0 || (size_t)w >= cap - used ? cap - 1 : used + (size_t)w;
    }
    if (listed || used == 0)
        out[0] = '\0';
    else if (used + 24 < cap)
        snprintf(out + used, cap - used, "; set target.model)");
    json_decref(root);
}

/* A server may echo what it was sent: the values of secret headers (the API key) leave no
 * message. */
static void preflight_redact(const preflight_t *self, char *why, size_t len) {
    for (const struct curl_slist *h = self->headers; h; h = h->next) {
        const char *colon = strchr(h->data, ':');
        char name[256];
        if (!colon || (size_t)(colon - h->data) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(colon - h->data), h->data);
        if (!config_header_is_secret(name))
            continue;
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if (strncasecmp(value, "Bearer ", 7) == 0)
            value += 7;
        if (strlen(value) >= REDACT_MIN_LEN)
            redact_text(why, len, value);
    }
}

int preflight_endpoint(const preflight_t *self, size_t e, const char *pin, char *why, size_t len) {
    const char *endpoint = self->cfg->target.endpoints[e];
    char *url = config_request_url(&self->cfg->target, endpoint);
    char *body = preflight_body(self->cfg);
    preflight_answer_t *a = malloc(sizeof *a);
    struct curl_slist *headers = NULL;
    bool ok = url && body && a;
    for (const struct curl_slist *h = self->headers; ok && h; h = h->next)
        ok = (headers = curl_slist_append(headers, h->data)) != NULL;
    struct curl_slist *with = ok ? curl_slist_append(headers, PREFLIGHT_HEADER) : NULL;
    int rc = -1;
    if (!with) {
        snprintf(why, len, "preflight of %s: out of memory", endpoint);
        goto done;
    }
    headers = with;
    char request[2300], excerpt[PREFLIGHT_EXCERPT + 8], models[512] = "";
    snprintf(request, sizeof request, "POST %s (model '%s', %s%s)", url,
             self->cfg->target.model ? self->cfg->target.model : "",
             self->cfg->target.api == API_RESPONSES ? "max_output_tokens 16" : "max_tokens 1",
             self->cfg->target.stream ? ", stream" : "");
    if (preflight_perform(self, url, body, headers, pin, a) != CURLE_OK) {
        snprintf(why, len,
                 "preflight of %s: %s failed: %s (target.preflight: false or "
                 "--no-preflight skips this check)",
                 endpoint, request, a->curl_error);
        goto done;
    }
    preflight_excerpt(a, excerpt, sizeof excerpt);
    if (a->status < 200 || a->status >= 300) {
        if (a->status >= 400 && a->status < 500)
            preflight_models(self, e, headers, pin, models, sizeof models);
        snprintf(why, len, "preflight of %s: %s answered HTTP %ld: %s%s", endpoint, request,
                 a->status, excerpt, models);
        goto done;
    }
    if (self->cfg->target.stream &&
        (!strstr(a->content_type, "text/event-stream") || !strstr(a->body, "data:"))) {
        snprintf(why, len,
                 "preflight of %s: %s answered HTTP %ld but not an SSE stream (content-type "
                 "'%s'): %s",
                 endpoint, request, a->status, a->content_type, excerpt);
        goto done;
    }
    rc = 0;
    if (self->said)
        preflight_describe(self, e, headers, pin, a);
done:
    if (rc != 0)
        preflight_redact(self, why, len);
    curl_slist_free_all(headers);
    free(a);
    free(body);
    free(url);
    return rc;
}
