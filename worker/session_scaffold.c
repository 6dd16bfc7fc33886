#include "session_scaffold.h"

#include <stdlib.h>
#include <xxhash.h>

#include "prompt.h"
#include "workload.h"

session_scaffold_t *session_scaffold_new(const config_t *cfg) {
    session_scaffold_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    size_t cap = prompt_max_bytes(cfg->workload.system_prompt_tokens);
    self->system_text = malloc(cap);
    long n = self->system_text ? workload_system_text(cfg, self->system_text, cap) : -1;
    if (n < 0) {
        session_scaffold_destroy(&self);
        return NULL;
    }
    self->system_len = (size_t)n;
    self->system_words = self->system_len ? cfg->workload.system_prompt_tokens : 0;
    self->hash = XXH3_64bits(self->system_text, self->system_len);
    return self;
}

void session_scaffold_destroy(session_scaffold_t **self_p) {
    session_scaffold_t *self = *self_p;
    if (!self)
        return;
    free(self->system_text);
    free(self);
    *self_p = NULL;
}
