/* `stampede report DIR`: reads DIR/results.json (a run's or a sweep's, schema_version 2) and
 * writes the reports people read beside it: DIR/report.md, DIR/results.csv and
 * DIR/hgrm/NN-LEVEL-METRIC.hgrm (docs/reports.md). The end of every run and sweep calls
 * report_cmd_render on its output. */
#ifndef STAMPEDE_REPORT_CMD_H
#define STAMPEDE_REPORT_CMD_H

#include <jansson.h>
#include <stddef.h>

/* DIR/results.json parsed and checked (an object of schema_version 2 with a levels array); the
 * caller json_decref's it. NULL with a message naming the file and the reason in err. */
json_t *report_cmd_load(const char *dir, char *err, size_t err_len);
/* Writes every report of dir from its results.json. 0 ok; -1 with a message naming the file in
 * err (files already written stay). */
int report_cmd_render(const char *dir, char *err, size_t err_len);

#endif
