/* `stampede simulate FILE --profile NAME [--replicas N --router R]`: the flags, the engine (the
 * profile, the file's mock section over it, parsed as `stampede mock` parses its flags), then
 * sim/simulate.h runs the file in virtual time (docs/simulate.md). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "mock_cli.h"
#include "mock_profiles.h"
#include "sim_replicas.h"
#include "sim_study.h"
#include "simulate.h"
#include "units.h"

#define SIM_CLI_MAX_REPLICAS 4096

static void simulate_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede simulate FILE [--profile NAME|FILE] [--replicas N]\n"
            "                         [--router round_robin|least_loaded|prefix] [--out DIR]\n"
            "                         [--find-replicas MAX] [--network-delay D] [--trace]\n"
            "                         [--allow-invalid] [--print-report]\n"
            "       stampede simulate --study FILE... --profile P [--profile P...]\n"
            "                         [--concurrency LIST] [--out DIR]\n\n"
            "Runs FILE (one run, every level and repetition of its sweep, or the levels its\n"
            "capacity: section's search asks for, as stampede capacity does) through the\n"
            "simulated server's engine model in virtual time: one process, no sockets, an hour\n"
            "of load in seconds. The requests are the ones `stampede run` sends (the same\n"
            "workload generation and sessions), the engine the one `stampede mock` runs, and\n"
            "the results (results.json, config.yaml, report.md, report.html, results.csv)\n"
            "are written as a real run's, each marked SIMULATED. Details: docs/simulate.md.\n\n"
            "  --profile NAME|FILE the engine: a built-in profile (stampede mock --help lists\n"
            "                      them) or a profile file (stampede calibrate writes one); the\n"
            "                      file's mock: section applies over it. Default: the file's\n"
            "                      mock.profile, else \"default\"\n"
            "  --replicas N        N engines behind a router (default 1)\n"
            "  --router R          round_robin (default), least_loaded (fewest requests in\n"
            "                      flight) or prefix (the most prompt blocks already cached)\n"
            "  --find-replicas MAX the fewest replicas (1 ... MAX, by bisection) whose run of\n"
            "                      FILE meets its slo: section or, for a capacity: section,\n"
            "                      whose search's frontier carries capacity.target (without\n"
            "                      one: the frontier of each count 1 ... MAX, MAX <= 32);\n"
            "                      each trial in OUT/replicas-N; the count on stdout, in\n"
            "                      OUT/replicas.md and OUT/replicas.json, and in the chosen\n"
            "                      trial's report.md, report.html and results.json\n"
            "  --network-delay D   one way between client and server (default 0: the engine\n"
            "                      alone); a real run's results.json measures it: half its\n"
            "                      levels' gap.ttft.gap_mean_ms\n"
            "  --out DIR           results directory (default: the file's output.dir)\n"
            "  --trace             also OUT/requests.jsonl, one line per request\n"
            "  --allow-invalid     exit 0 for a run judged invalid (else 3)\n"
            "  --print-report      report.md to stdout after each report\n"
            "  --study             a scaling study: each FILE (a framework) on each --profile\n"
            "                      (a server configuration) as a sweep of --concurrency (default\n"
            "                      1,2,4,8,16,32,48,64), each level the file's own run (its\n"
            "                      limits: e.g. 48 tasks); the first FILE on every profile, every\n"
            "                      FILE on the first profile, each in OUT/FILE-PROFILE (default\n"
            "                      OUT: results/scaling-study); prints the tables of\n"
            "                      agentic-concurrency-scaling.md §3-§5 (server TPOT, Gen TPS,\n"
            "                      server TTFT, wall clock, makespan, critical path, per-role\n"
            "                      TPOT, 400s, power-law fits, throughput scaling); --replicas,\n"
            "                      --router, --network-delay and --trace apply to every cell\n\n"
            "Exit status: 0 ok, 1 when it cannot run or every request failed, 2 on a usage\n"
            "error, 3 invalid.\n");
}

/* The file's profile (its mock: section's `profile`), or NULL. */
static const char *simulate_cli_file_profile(const config_t *cfg) {
    for (size_t i = 0; i < cfg->mock.n_options; i++)
        if (!strcmp(cfg->mock.options[i].key, "profile"))
            return cfg->mock.options[i].value;
    return NULL;
}

/* The engine: the file's mock section as `stampede mock` flags, --profile after them. */
static int simulate_cli_engine(mock_options_t *engine, const config_t *cfg, const char *profile,
                               const char *path) {
    char **args = config_mock_args(&cfg->mock);
    if (!args) {
        fprintf(stderr, "simulate: out of memory\n");
        return -1;
    }
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 4, sizeof *argv);
    if (!argv) {
        free(args);
        fprintf(stderr, "simulate: out of memory\n");
        return -1;
    }
    argv[0] = "mock";
    memcpy(argv + 1, args, n * sizeof *argv);
    /* a built-in name, else a profile file (stampede calibrate's output) */
    argv[n + 1] =
        mock_profile_find(profile) || access(profile, F_OK) != 0 ? "--profile" : "--profile-file";
    argv[n + 2] = (char *)profile;
    char err[1024];
    int rc = mock_cli_parse(engine, (int)n + 3, argv, stderr, err, sizeof err);
    free(argv);
    free(args);
    if (rc != 0) {
        fprintf(stderr, "simulate: %s: the engine (--profile %s and the file's mock section): %s\n",
                path, profile, rc > 0 ? "help asked" : err);
        return -1;
    }
    return 0;
}

#define SIM_CLI_MAX_STUDY 16

/* The file whose capacity search each simulation runs afresh (simulate_search_t). */
typedef struct simulate_cli_search {
    const char *path;
    const config_t *cfg; /* loaded from path, alive for the searches */
} simulate_cli_search_t;

static int simulate_cli_search_open(void *arg, const char *out_dir, sweep_source_t *source,
                                    void **search) {
    const simulate_cli_search_t *file = arg;
    *search = capacity_run_open(file->path, file->cfg, out_dir, source);
    return *search ? 0 : -1;
}

static int simulate_cli_search_close(void *search, int rc) {
    capacity_run_t *run = search;
    if (capacity_run_finish(run, rc) != 0 && rc == 0)
        rc = 1;
    capacity_run_close(&run);
    return rc;
}

/* cfg from path: 0, or -1 said (file, line, column, key). */
static int simulate_cli_load(config_t *cfg, const char *path) {
    config_error_t cerr;
    if (config_load_file(cfg, path, &cerr) == 0)
        return 0;
    char msg[1024];
    config_error_format(&cerr, msg, sizeof msg);
    fprintf(stderr, "simulate: %s\n", msg);
    return -1;
}

/* The study's levels from "1,2,4,...": 0, or -1 said. */
static int simulate_cli_levels(const char *text, sim_study_levels_t *out) {
    out->n_levels = 0;
    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !(v >= 1) || v != (double)(uint32_t)v ||
            out->n_levels == SIM_STUDY_MAX_LEVELS || (*end && *end != ',')) {
            fprintf(stderr,
                    "simulate: --concurrency wants whole numbers >= 1 separated by commas (at "
                    "most %d), got '%s'\n",
                    SIM_STUDY_MAX_LEVELS, text);
            return -1;
        }
        out->levels[out->n_levels++] = v;
        p = *end ? end + 1 : end;
    }
    return out->n_levels ? 0 : -1;
}

/* A file's column name: its file name without the directory, ".yaml" and the prefix every file
 * of the study shares ("diamond-autogen.yaml", "diamond-a2a.yaml": autogen, a2a). */
static void simulate_cli_labels(char *const *files, size_t n, char labels[][64]) {
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(files[i], '/');
        snprintf(labels[i], 64, "%s", slash ? slash + 1 : files[i]);
        char *dot = strrchr(labels[i], '.');
        if (dot && dot != labels[i])
            *dot = '\0';
    }
    size_t common = n > 1 ? strlen(labels[0]) : 0;
    for (size_t i = 1; i < n; i++) {
        size_t k = 0;
        while (k < common && labels[i][k] == labels[0][k])
            k++;
        common = k;
    }
    while (common > 0 && labels[0][common - 1] != '-' && labels[0][common - 1] != '_')
        common--; /* at a word's edge */
    for (size_t i = 0; common > 0 && i < n; i++)
        memmove(labels[i], labels[i] + common, strlen(labels[i] + common) + 1);
}

/* One cell of the study: the file on the profile as a sweep of the levels, its tables kept out of
 * stdout (the study prints its own; each cell's is its report.md). 0 ok. */
static int simulate_cli_cell(const simulate_options_t *flags, const char *file, const char *profile,
                             const char *dir, sim_study_levels_t *levels) {
    config_t cfg;
    if (simulate_cli_load(&cfg, file) != 0)
        return -1;
    if (!cfg.limits.max_sessions && !cfg.limits.duration_ns) {
        fprintf(stderr,
                "simulate: --study: %s: each level is the file's run, so it needs "
                "limits.max_sessions (the report's 48 tasks) or limits.duration\n",
                file);
        config_free(&cfg);
        return -1;
    }
    levels->window_ns = cfg.limits.max_sessions ? 0 : cfg.limits.duration_ns;
    mock_options_t engine;
    mock_options_init(&engine);
    int rc = simulate_cli_engine(&engine, &cfg, profile, file);
    sweep_source_t source = sim_study_source(levels);
    simulate_options_t o = *flags; /* --replicas, --router, --network-delay, --trace */
    o.config_path = file;
    o.out_dir = dir;
    o.allow_invalid = true;
    o.engine = &engine;
    o.profile = profile;
    o.source = &source;
    if (rc == 0) {
        fflush(stdout);
        int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
        if (saved >= 0 && null >= 0)
            dup2(null, STDOUT_FILENO);
        rc = simulate_file(&o);
        fflush(stdout);
        if (saved >= 0 && null >= 0)
            dup2(saved, STDOUT_FILENO);
        if (saved >= 0)
            close(saved);
        if (null >= 0)
            close(null);
        fprintf(stderr, "simulate: study: %s on %s: %s\n", file, profile, rc == 0 ? dir : "FAILED");
    }
    mock_options_clear(&engine);
    config_free(&cfg);
    return rc == 0 ? 0 : -1;
}

/* `--study`: every cell the report's matrix runs, then its tables. */
static int simulate_cli_study(const simulate_options_t *flags, char *const *files, size_t n_files,
                              const char *const *profiles, size_t n_profiles,
                              const char *levels_text) {
    sim_study_levels_t levels;
    if (simulate_cli_levels(levels_text, &levels) != 0)
        return 2;
    if (n_files > SIM_CLI_MAX_STUDY) {
        fprintf(stderr, "simulate: --study takes at most %d files\n", SIM_CLI_MAX_STUDY);
        return 2;
    }
    char labels[SIM_CLI_MAX_STUDY][64];
    const char *label_of[SIM_CLI_MAX_STUDY];
    simulate_cli_labels(files, n_files, labels);
    for (size_t i = 0; i < n_files; i++)
        label_of[i] = labels[i];
    const char *dir = flags->out_dir ? flags->out_dir : "results/scaling-study";
    for (size_t i = 0; i < n_files; i++)
        for (size_t j = 0; j < n_profiles; j++) {
            char cell[4200];
            sim_study_cell_dir(dir, labels[i], profiles[j], cell, sizeof cell);
            if (sim_study_runs(i, j) &&
                simulate_cli_cell(flags, files[i], profiles[j], cell, &levels))
                return 1;
        }
    return sim_study_print(stdout, dir, label_of, n_files, profiles, n_profiles) == 0 ? 0 : 1;
}

int simulate_main(int argc, char **argv) {
    static const struct option longopts[] = {{"profile", required_argument, NULL, 'p'},
                                             {"replicas", required_argument, NULL, 'n'},
                                             {"router", required_argument, NULL, 'r'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"trace", no_argument, NULL, 'T'},
                                             {"allow-invalid", no_argument, NULL, 'I'},
                                             {"print-report", no_argument, NULL, 'R'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"network-delay", required_argument, NULL, 'd'},
                                             {"find-replicas", required_argument, NULL, 'f'},
                                             {"study", no_argument, NULL, 'S'},
                                             {"concurrency", required_argument, NULL, 'c'},
                                             {NULL, 0, NULL, 0}};
    simulate_options_t o = {.replicas = 1, .router = MOCK_ROUTER_ROUND_ROBIN};
    const char *profile = NULL, *profiles[SIM_CLI_MAX_STUDY], *study_levels = NULL;
    size_t n_profiles = 0;
    bool study = false;
    uint32_t find_replicas = 0; /* --find-replicas MAX */
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'p':
            profile = optarg;
            if (n_profiles == SIM_CLI_MAX_STUDY) {
                fprintf(stderr, "simulate: at most %d --profile\n", SIM_CLI_MAX_STUDY);
                return 2;
            }
            profiles[n_profiles++] = optarg;
            break;
        case 'S':
            study = true;
            break;
        case 'c':
            study_levels = optarg;
            break;
        case 'n': {
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || v == 0 || v > SIM_CLI_MAX_REPLICAS) {
                fprintf(stderr, "simulate: --replicas wants a whole number in [1, %d], got '%s'\n",
                        SIM_CLI_MAX_REPLICAS, optarg);
                return 2;
            }
            o.replicas = (uint32_t)v;
            break;
        }
        case 'f': {
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || v == 0 || v > SIM_CLI_MAX_REPLICAS) {
                fprintf(stderr,
                        "simulate: --find-replicas wants a whole number in [1, %d], got '%s'\n",
                        SIM_CLI_MAX_REPLICAS, optarg);
                return 2;
            }
            find_replicas = (uint32_t)v;
            break;
        }
        case 'r':
            if (mock_router_parse(optarg, &o.router) != 0) {
                fprintf(stderr,
                        "simulate: --router wants round_robin, least_loaded or prefix, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'd':
            if (units_parse_duration(optarg, &o.network_delay_ns) != 0 || o.network_delay_ns < 0) {
                fprintf(stderr,
                        "simulate: --network-delay wants a duration such as 300us or 2ms, got "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'o':
            o.out_dir = optarg;
            break;
        case 'T':
            o.trace = true;
            break;
        case 'I':
            o.allow_invalid = true;
            break;
        case 'R':
            o.print_report = true;
            break;
        case 'h':
            simulate_cli_usage(stdout);
            return 0;
        default:
            simulate_cli_usage(stderr);
            return 2;
        }
    }
    if (study || study_levels) {
        if (!study || optind >= argc || n_profiles == 0 || find_replicas) {
            fprintf(stderr, "simulate: %s\n\n",
                    !study          ? "--concurrency belongs to --study"
                    : find_replicas ? "--study and --find-replicas are runs of their own"
                                    : "--study needs FILE... and --profile P (once per profile)");
            simulate_cli_usage(stderr);
            return 2;
        }
        return simulate_cli_study(&o, argv + optind, (size_t)(argc - optind), profiles, n_profiles,
                                  study_levels ? study_levels : "1,2,4,8,16,32,48,64");
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "simulate: %s\n\n",
                optind >= argc ? "a workload FILE is needed" : "one workload FILE at a time");
        simulate_cli_usage(stderr);
        return 2;
    }
    o.config_path = argv[optind];
    config_t cfg;
    if (simulate_cli_load(&cfg, o.config_path) != 0)
        return 1;
    if (!profile)
        profile = simulate_cli_file_profile(&cfg);
    mock_options_t engine;
    mock_options_init(&engine);
    char profile_name[128];
    snprintf(profile_name, sizeof profile_name, "%s", profile ? profile : "default");
    int rc = simulate_cli_engine(&engine, &cfg, profile_name, o.config_path);
    /* a capacity: section: the search chooses the levels, as `stampede capacity` runs it */
    simulate_cli_search_t file = {.path = o.config_path, .cfg = &cfg};
    simulate_search_t search = {
        .open = simulate_cli_search_open, .close = simulate_cli_search_close, .arg = &file};
    if (rc == 0) {
        o.engine = &engine;
        o.profile = profile_name;
        o.search = cfg.capacity.given ? &search : NULL;
        rc = find_replicas ? sim_replicas_find(&o, find_replicas) : simulate_file(&o);
    } else {
        rc = 1;
    }
    config_free(&cfg);
    mock_options_clear(&engine);
    return rc;
}
