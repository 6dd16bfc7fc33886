/* `stampede read-metrics FILE...`: a saved /metrics page (vLLM, SGLang, Dynamo, DCGM) read
 * offline exactly as a run reads a scraped one (telemetry_read.h), and what was recognised
 * printed: the dialect, each quantity's metric name and value, the histograms' counts and means.
 * For checking a server's page before a run and for `make realworld`. */
#ifndef STAMPEDE_READ_METRICS_H
#define STAMPEDE_READ_METRICS_H

/* The subcommand (argv[0] is "read-metrics"): 0 when every file was read, 1 when one could not
 * be, 2 on a usage error. */
int read_metrics_main(int argc, char **argv);

#endif
