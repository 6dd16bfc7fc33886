/* results.csv: one row per level × repetition × slice (all, each endpoint, each role) with the
 * columns of docs/reports.md. A run is its one level and repetition 1; a sweep's rows come from
 * each repetition's own results.json (OUT/levels/NN-LEVEL/rep-R/results.json), then one row per
 * level with repetition "pooled": the level's figures pooled over its valid repetitions. */
#ifndef STAMPEDE_REPORT_CSV_H
#define STAMPEDE_REPORT_CSV_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The header row's columns, comma-separated (no newline). */
extern const char *const report_csv_columns;
/* Writes the CSV of root (read from dir/results.json; a sweep's repetitions are read from dir)
 * to out. 0 ok; -1 with a message naming the file that could not be read in err. */
int report_csv_render(const json_t *root, const char *dir, FILE *out, char *err, size_t err_len);

#endif
