/* The replay keys of a requests.jsonl line: what makes stampede's own --trace output a valid
 * session trace (docs/workloads.md). The controller regenerates each request's node from the
 * config (sessions are a pure function of the config, seed and index) and writes its parents,
 * history parent, role name, lengths, wait, the session's arrival (timed runs) and hash ids. */
#ifndef STAMPEDE_TRACE_KEYS_H
#define STAMPEDE_TRACE_KEYS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

typedef struct trace_keys trace_keys_t;

/* A writer for cfg (which must outlive it); NULL on no memory. */
trace_keys_t *trace_keys_new(const config_t *cfg);
/* Frees it and sets *self_p to NULL. */
void trace_keys_destroy(trace_keys_t **self_p);
/* True for a request the replay must not send itself: a summarise request of compaction (role
 * is the compaction role), which a replay with the same compaction settings sends on its own. */
bool trace_keys_skip(const trace_keys_t *self, uint32_t role);
/* Appends ,"parents":[...],"history_parent":...,"history":...,"append_parent_replies":...,
 * "role_name":...,"new_input_length":...,"output_length":...,"wait_after_ready":s and, when
 * they apply, "arrival":s and "hash_ids":[...] for node `node` of session `session` to out.
 * Nothing is written for a node the session does not have. */
void trace_keys_write(trace_keys_t *self, FILE *out, uint64_t session, uint32_t node);

#endif
