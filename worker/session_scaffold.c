#include "session_scaffold.h"

#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "buffer.h"
#include "prompt.h"
#include "rng.h"
#include "workload.h"

/* The summarise instruction's draw: a field of the prompt stream that no other draw uses. */
#define SESSION_SCAFFOLD_FIELD_COMPACT 0x636f6d70u /* "comp" */

/* Role r's system text of n words: rng(seed, prompt, r, 0, system); role 0's is
 * workload_system_text's. */
static long session_scaffold_system_text(const config_t *cfg, uint32_t role, uint32_t n, char *buf,
                                         size_t cap) {
    rng_t rng;
    rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, role, 0, RNG_FIELD_SYSTEM);
    return prompt_append_words(&rng, n, buf, cap);
}

/* Role r's tools array: tool k is named tool_k and described by rng(seed, prompt, r, k + 1,
 * system) words; its only parameter is a string. 0 ok, -1 on no memory. */
static int session_scaffold_tools(const config_t *cfg, uint32_t role,
                                  const config_scaffold_size_t *size, buffer_t *out) {
    /* The same function in each API's shape: chat nests it under "function"; Messages names its
     * schema input_schema; Responses keeps chat's fields flat. */
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"input\":{\"type\":"
                                 "\"string\"}},\"required\":[\"input\"]}";
    config_api_t api = cfg->target.api;
    const char *open = api == API_MESSAGES    ? "{\"name\":\""
                       : api == API_RESPONSES ? "{\"type\":\"function\",\"name\":\""
                                              : "{\"type\":\"function\",\"function\":{\"name\":\"";
    const char *key = api == API_MESSAGES ? "\",\"input_schema\":" : "\",\"parameters\":";
    const char *close = api == API_CHAT ? "}}" : "}";
    int rc = buffer_append(out, "[", 1);
    for (uint32_t k = 0; rc == 0 && k < size->tools; k++) {
        rc = buffer_appendf(out, "%s%stool_%u\",\"description\":\"", k ? "," : "", open,
                            (unsigned)k);
        if (rc == 0)
            rc = buffer_reserve(out, prompt_max_bytes(size->tool_tokens));
        if (rc == 0) {
            rng_t rng;
            rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, role, k + 1, RNG_FIELD_SYSTEM);
            long n = prompt_append_words(&rng, size->tool_tokens, out->data + out->len,
                                         out->cap - out->len);
            rc = n < 0 ? -1 : 0;
            out->len += n < 0 ? 0 : (size_t)n;
        }
        if (rc == 0)
            rc = buffer_appendf(out, "%s%s%s", key, schema, close);
    }
    return rc == 0 ? buffer_append(out, "]", 1) : -1;
}

/* Fills one role's scaffold; 0 ok, -1 on no memory. */
static int session_scaffold_fill(const config_t *cfg, uint32_t role, session_scaffold_role_t *out) {
    bool given = cfg->workload.scaffold.given;
    config_scaffold_size_t size = config_scaffold_size(cfg, role);
    size_t cap = prompt_max_bytes(size.system_tokens);
    out->system_text = malloc(cap);
    if (!out->system_text)
        return -1;
    long n =
        given ? session_scaffold_system_text(cfg, role, size.system_tokens, out->system_text, cap)
              : workload_system_text(cfg, out->system_text, cap);
    if (n < 0)
        return -1;
    out->system_len = (size_t)n;
    out->words = out->system_len ? size.system_tokens : 0;
    out->hash = XXH3_64bits(out->system_text, out->system_len);
    if (!given || size.tools == 0 || cfg->target.api == API_COMPLETIONS)
        return 0;
    buffer_t tools;
    buffer_init(&tools);
    if (session_scaffold_tools(cfg, role, &size, &tools) < 0) {
        buffer_clear(&tools);
        return -1;
    }
    out->tools_json = tools.data; /* the buffer's storage is now ours */
    out->tools_len = tools.len;
    out->tools = size.tools;
    out->words += size.tools * size.tool_tokens;
    out->hash = XXH3_64bits_withSeed(out->tools_json, out->tools_len, out->hash);
    return 0;
}

session_scaffold_t *session_scaffold_new(const config_t *cfg) {
    session_scaffold_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    const config_workload_t *w = &cfg->workload;
    self->n_roles = w->scaffold.given && w->n_roles > 1 ? (uint32_t)w->n_roles : 1;
    self->roles = calloc(self->n_roles, sizeof *self->roles);
    bool ok = self->roles != NULL;
    for (uint32_t r = 0; ok && r < self->n_roles; r++)
        ok = session_scaffold_fill(cfg, r, &self->roles[r]) == 0;
    uint32_t compact_words = w->compaction.limit_tokens ? w->compaction.prompt_tokens : 0;
    size_t cap = prompt_max_bytes(compact_words);
    if (ok && (ok = (self->compact_text = malloc(cap)) != NULL)) {
        rng_t rng;
        rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, 0, 0,
                 SESSION_SCAFFOLD_FIELD_COMPACT);
        long n = prompt_append_words(&rng, compact_words, self->compact_text, cap);
        ok = n >= 0;
        self->compact_len = n > 0 ? (size_t)n : 0;
        self->compact_words = compact_words;
    }
    if (!ok)
        session_scaffold_destroy(&self);
    return self;
}

const session_scaffold_role_t *session_scaffold_of(const session_scaffold_t *self, uint32_t role) {
    return &self->roles[role < self->n_roles ? role : 0];
}

void session_scaffold_destroy(session_scaffold_t **self_p) {
    session_scaffold_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t r = 0; self->roles && r < self->n_roles; r++) {
        free(self->roles[r].system_text);
        free(self->roles[r].tools_json);
    }
    free(self->roles);
    free(self->compact_text);
    free(self);
    *self_p = NULL;
}
