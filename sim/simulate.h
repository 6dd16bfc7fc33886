/* `stampede simulate`'s library: a workload file (one run, or a sweep's levels and repetitions,
 * or the levels a sweep source such as the capacity search asks for) run through the mock's
 * engine model in virtual time, in one process with no sockets, its results written as a real
 * run's are (results.json, config.yaml, every report) and marked simulated in each. The worker's
 * own workload generation and session executor make the requests, the mock's own parsing and
 * engine answer them, and the controller's own merge, results and sweep code count them. */
#ifndef STAMPEDE_SIMULATE_H
#define STAMPEDE_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>

#include "mock_options.h"
#include "mock_virtual.h"
#include "sweep.h"

/* The capacity search of a file, opened afresh for each simulation of it (one per replica count
 * under sim_replicas_find). The tool gives it: the search's code is the tool's
 * (cli/capacity_cli.c). */
typedef struct simulate_search {
    /* A new search whose results go to out_dir (NULL: the file's output.dir): its levels as
     * *source, the search in *search. 0, or -1 said. */
    int (*open)(void *arg, const char *out_dir, sweep_source_t *source, void **search);
    /* Once its levels ran with status rc: its summary on stdout and analysis.capacity in the
     * results.json; frees search. rc, or 1 when rc was 0 and that failed. */
    int (*close)(void *search, int rc);
    void *arg;
} simulate_search_t;

typedef struct simulate_options {
    const char *config_path;
    const char *out_dir;          /* NULL: the file's output.dir */
    bool trace;                   /* OUT/requests.jsonl, as run --trace */
    bool allow_invalid;           /* an invalid run exits 0, not 3 */
    bool print_report;            /* report.md to stdout after each report */
    const mock_options_t *engine; /* the engine: the profile, the file's mock section over it */
    const char *profile;          /* the profile's name or file, for the marks */
    uint32_t replicas;            /* >= 1 */
    mock_router_t router;
    int64_t network_delay_ns;        /* one way, client to server and back (0: the engine alone) */
    const sweep_source_t *source;    /* NULL: the search's, the file's sweep section, or one run */
    const simulate_search_t *search; /* non-NULL: each simulation is a capacity search */
} simulate_options_t;

/* Simulates options->config_path on options->replicas engines. The exit status as `stampede
 * run`'s: 0 ok, 1 when it could not start or every request failed (said on stderr), 3 invalid
 * (without allow_invalid). How many replicas a file needs: sim_replicas.h. */
int simulate_file(const simulate_options_t *options);
/* simulate_file on `replicas` engines (options->replicas ignored), its results in out_dir (NULL:
 * the options'). */
int simulate_on(const simulate_options_t *options, uint32_t replicas, const char *out_dir);

#endif
