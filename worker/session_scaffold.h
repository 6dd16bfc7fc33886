/* The scaffold a request opens with: a system prompt and, in chat mode, a tools array of function
 * definitions. Without workload.scaffold every session and role shares the one system prompt of
 * workload.system_prompt_tokens words. With it, each role (or the workload, without roles) has
 * its own system prompt and tools, of the role's sizes (workload.scaffold.roles) or the
 * section's, generated from the seed and the role index only, so they are
 * the same bytes in every session of that role and a server's prefix cache sees real reuse across
 * sessions. */
#ifndef STAMPEDE_SESSION_SCAFFOLD_H
#define STAMPEDE_SESSION_SCAFFOLD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* One role's scaffold. */
typedef struct session_scaffold_role {
    char *system_text; /* owned; system_len bytes (0: no system message) */
    size_t system_len;
    char *tools_json; /* owned: the tools array as sent; NULL without tools (or not chat) */
    size_t tools_len;
    uint32_t tools; /* tools in it */
    uint32_t words; /* words the scaffold counts as: the system text and tool descriptions */
    uint64_t hash;  /* XXH3 of everything the scaffold sends */
} session_scaffold_role_t;

typedef struct session_scaffold {
    session_scaffold_role_t *roles; /* one per role index; one shared when no section is given */
    uint32_t n_roles;
    char *compact_text; /* owned: the summarise instruction (workload.compaction.prompt_tokens
                           words, from the seed only), compact_len bytes */
    size_t compact_len;
    uint32_t compact_words;
} session_scaffold_t;

/* The scaffolds of cfg's workload; NULL when memory is short. */
session_scaffold_t *session_scaffold_new(const config_t *cfg);
/* The scaffold of role index `role`. */
const session_scaffold_role_t *session_scaffold_of(const session_scaffold_t *self, uint32_t role);
/* Frees it; *self_p becomes NULL. */
void session_scaffold_destroy(session_scaffold_t **self_p);

#endif
