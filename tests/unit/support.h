/* Functions only the unit tests call, compiled into every unit test and into no product code
 * (tests/unit/support_*.c, the library stampede_test_support): oracles that recompute what the
 * product does another way, and conveniences over a product door. docs/architecture.md, "Test
 * seams", says why each is here and not in its room. */
#ifndef STAMPEDE_TEST_SUPPORT_H
#define STAMPEDE_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "mock_chunk.h"
#include "prom_parse.h"
#include "report.h"

/* A digest of session `index`: every node's shape (parents, role, lengths, wait, inherit) and
 * fresh prompt text, from common/workload's generation alone (support_workload.c). */
uint64_t workload_session_digest(const config_t *cfg, uint64_t index);
/* An order-independent digest of sessions [0, n): the system text, the sum of the session digests
 * and, in rate mode, the arrival times of [0, n). */
uint64_t workload_digest(const config_t *cfg, uint64_t n_sessions);

/* The worker (0..n_workers-1) that runs global session `session`, by the arithmetic of
 * docs/architecture.md "Session ownership", independent of plan_share_owns (support_plan.c). */
uint32_t plan_session_owner(const config_t *cfg, uint32_t n_workers, uint64_t session);

/* The type a "# TYPE name type" line gave family name, or NULL when the page gave none
 * (support_prom.c). */
const char *prom_page_type(const prom_page_t *self, const char *name);

/* One token chunk of one word: mock_chunk_token_open, the word, mock_chunk_token_close
 * (support_mock.c). */
char *mock_chunk_token(char *p, const mock_chunk_head_t *head, const char *word, size_t word_len,
                       bool reasoning, const char *finish, const mock_chunk_usage_t *usage,
                       int64_t sent_ns);

/* results.json of these levels written to path: report_json then report_write_json_root
 * (support_report.c). 0 ok; -1 with errno set. */
int report_write_json_levels(const report_level_t *levels, size_t n_levels, const char *path,
                             const report_meta_t *meta);

#endif
