/* Reading a results.json document (schema_version 2, docs/results.md) for the report writers:
 * the level axis, a level's value and name, numbers that may be absent, and the cells the
 * markdown, CSV and compare writers put them in. */
#ifndef STAMPEDE_REPORT_DOC_H
#define STAMPEDE_REPORT_DOC_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The number at key of o, NaN when o or the key is absent or not a number. */
double report_doc_number(const json_t *o, const char *key);
/* The engine profile of the embedded mock when it served the run (served_by.simulated), else
 * NULL: a real server, or a results.json written before served_by. */
const char *report_doc_simulated(const json_t *root);
/* The account of a simulation into buf ("virtual time through the engine model, profile P"; returns
 * buf) when `stampede simulate` wrote root (served_by.virtual_time), else NULL. */
const char *report_doc_simulation(const json_t *root, char *buf, size_t len);
/* The replica search's answer when root is the run it chose (analysis.replicas.statement:
 * "Replicas needed: N (SIMULATED, ...): ..."), else NULL; `stampede simulate --find-replicas`. */
const char *report_doc_replicas(const json_t *root);
/* "rate" when root's levels are rates (sessions/s), else "concurrency". */
const char *report_doc_axis(const json_t *root);
/* The level's target (its "concurrency" or "rate" number), NaN when absent. */
double report_doc_level_value(const json_t *root, const json_t *level);
/* The level's value as text into buf ("50", "2.5", "?" when absent); returns buf. */
const char *report_doc_level_text(const json_t *root, const json_t *level, char *buf, size_t len);
/* The file name stem of level i, as a sweep's level directories: "01-c50", "02-r2.5". */
void report_doc_level_name(const json_t *root, size_t i, char *buf, size_t len);
/* A figure as the reports write it, unit appended ("65ms"): whole numbers from 100, one decimal
 * from 10, else two; "—" for NaN. */
void report_doc_figure(char *buf, size_t len, double x, const char *unit);
/* A CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break. */
void report_doc_csv_field(FILE *out, const char *text);

#endif
