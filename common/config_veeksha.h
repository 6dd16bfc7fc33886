/* A Veeksha file (`veeksha benchmark` or `veeksha capacity-search`), read as it is into stampede's
 * config: each key maps onto one of stampede's, is accepted and ignored with a note
 * (config_t.notes), or is refused naming what is out of scope (docs/workloads.md, "Veeksha
 * files"). Unknown keys are refused naming the file, line and key. Internal to common/config*.c. */
#ifndef STAMPEDE_CONFIG_VEEKSHA_H
#define STAMPEDE_CONFIG_VEEKSHA_H

#include <stdbool.h>

#include "config.h"
#include "config_yaml.h"

/* Whether the document's root is a Veeksha file (it has a key only Veeksha's files have:
 * session_generator, client, benchmark_config, input_lengths, ...). */
bool config_veeksha_is(config_yaml_t *r, yaml_node_t *root);
/* Reads the Veeksha keys of root into c (initialised); of a file whose !expand lists make several
 * runs, run r->veeksha_run (1-based; 0: the first). The keys stampede adds (target, output, mock)
 * are accepted at the root and left to the caller. 0 ok; -1 with r->err filled. */
int config_veeksha_parse(config_yaml_t *r, yaml_node_t *root, config_t *c);
/* The runs a Veeksha benchmark document makes: the product of its !expand lists' sizes (a list
 * of the scheduler's knob, target_concurrent_sessions or arrival_rate, is one run's sweep
 * levels); 1 for any other document. */
int config_veeksha_runs(yaml_document_t *doc);

#endif
