/* `stampede read-metrics FILE...`: a saved /metrics page (vLLM, SGLang, Dynamo, DCGM) read
 * offline exactly as a run reads a scraped one (telemetry_read.h), and what was recognised
 * printed: the dialect, each quantity's metric name and value, the histograms' counts and means.
 * For checking a server's page before a run and for `make realworld`. */
#ifndef STAMPEDE_READ_METRICS_H
#define STAMPEDE_READ_METRICS_H

#include <stdbool.h>

/* Reads the page saved at path and prints what was recognised on stdout: as text, or as_json one
 * JSON object on one line. 0, or -1 when it cannot be read (said on stderr). */
int read_metrics_file(const char *path, bool as_json);

#endif
