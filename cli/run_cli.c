#define _GNU_SOURCE /* pipe2 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "config_documents.h"
#include "controller.h"
#include "loop.h"
#include "outfile.h"
#include "results.h"

#define RUN_DEFAULT_WORKERS 2
#define RUN_MOCK_START_MS 10000
#define RUN_REGISTER_TIMEOUT_NS 30000000000LL

typedef struct run_child {
    pid_t pid;
    int index; /* worker index, -1 for the mock */
    bool reaped;
    int status;
} run_child_t;

typedef struct run_state {
    run_child_t *children;
    size_t n_children;
    size_t cap_children;
    int mock_out; /* read end of the mock's stdout, drained so it never blocks */
    bool once;    /* one run: the workers are --once and exit when released */
    char out_dir[4096];
} run_state_t;

/* fork + exec of this binary with argv; the child gets its own process group and dies with us. */
static pid_t spawn(char *const argv[], int out_fd, int err_fd) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    if (out_fd >= 0)
        dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0)
        dup2(err_fd, STDERR_FILENO);
    execv("/proc/self/exe", argv);
    _exit(127);
}

static run_child_t *add_child(run_state_t *st, pid_t pid, int index) {
    if (buffer_grow_array(&st->children, &st->cap_children, st->n_children + 1,
                          sizeof *st->children) < 0)
        return NULL;
    st->children[st->n_children] = (run_child_t){.pid = pid, .index = index};
    return &st->children[st->n_children++];
}

/* The last line the mock wrote to OUT/mock.log (its refusal of an option), into buf. */
static void mock_log_last_line(const run_state_t *st, char *buf, size_t len) {
    char path[4200], text[4096];
    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/mock.log", st->out_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    while (n > 0 && text[n - 1] == '\n')
        n--;
    text[n] = '\0';
    const char *nl = strrchr(text, '\n');
    const char *last = nl ? nl + 1 : text;
    size_t keep = strlen(last) < len ? strlen(last) : len - 1;
    memcpy(buf, last, keep);
    buf[keep] = '\0';
}

/* Starts `stampede mock --port 0` with the file's mock options (mock_args, NULL-terminated) and
 * reads the port it prints; 0 on failure (reason printed). */
static int start_mock(run_state_t *st, int log_fd, char *const *mock_args, const char *source,
                      char *url, size_t url_len) {
    int fds[2];
    size_t n_args = 0;
    while (mock_args[n_args] != NULL)
        n_args++;
    char **argv = calloc(n_args + 5, sizeof *argv);
    if (argv == NULL || pipe2(fds, O_CLOEXEC) != 0) {
        free(argv);
        return -1;
    }
    argv[0] = "stampede";
    argv[1] = "mock";
    argv[2] = "--port";
    argv[3] = "0";
    memcpy(argv + 4, mock_args, n_args * sizeof *argv);
    pid_t pid = spawn(argv, fds[1], log_fd);
    free(argv);
    close(fds[1]);
    if (pid < 0 || !add_child(st, pid, -1)) {
        close(fds[0]);
        fprintf(stderr, "run: cannot start the embedded mock: %s\n", strerror(errno));
        return -1;
    }
    st->mock_out = fds[0];
    char line[256];
    size_t len = 0;
    bool closed = false; /* the mock closed its stdout: it is exiting */
    int64_t give_up_ns = loop_now_ns() + RUN_MOCK_START_MS * 1000000LL;
    for (;;) {
        long left = (long)((give_up_ns - loop_now_ns()) / 1000000);
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            break;
        ssize_t n = read(fds[0], line + len, sizeof line - 1 - len);
        if (n <= 0) {
            closed = true;
            break;
        }
        len += (size_t)n;
        line[len] = '\0';
        char *nl = strchr(line, '\n');
        const char *at = strstr(line, "listening on ");
        if (nl && at) {
            const char *colon = strrchr(at, ':');
            int port = colon ? atoi(colon + 1) : 0;
            if (port > 0) {
                snprintf(url, url_len, "http://127.0.0.1:%d", port);
                fcntl(fds[0], F_SETFL, O_NONBLOCK);
                return 0;
            }
        }
        if (len >= sizeof line - 1)
            break;
    }
    run_child_t *mock = &st->children[st->n_children - 1];
    for (int i = 0; closed && !mock->reaped && i < 50; i++) { /* at most 1 s to exit */
        mock->reaped = waitpid(mock->pid, &mock->status, WNOHANG) == mock->pid;
        struct timespec d = {0, 20000000};
        if (!mock->reaped)
            nanosleep(&d, NULL);
    }
    if (mock->reaped) {
        char why[1024];
        mock_log_last_line(st, why, sizeof why);
        if (n_args > 0)
            fprintf(stderr,
                    "run: %s: the embedded mock refused the options of the mock section: %s\n",
                    source, why);
        else
            fprintf(stderr, "run: the embedded mock exited at start: %s\n", why);
        return -1;
    }
    fprintf(stderr,
            "run: the embedded mock did not say where it listens within %d s; see %s/mock.log\n",
            RUN_MOCK_START_MS / 1000, st->out_dir);
    return -1;
}

static int start_workers(run_state_t *st, const char *endpoint, unsigned n, int log_fd) {
    for (unsigned i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "local-%u", i);
        char *argv[] = {"stampede",  "worker",
                        "--connect", (char *)endpoint,
                        "--id",      id,
                        "--spool", /* beside the results, for stampede merge */
                        st->out_dir, st->once ? "--once" : NULL,
                        NULL};
        pid_t pid = spawn(argv, log_fd, log_fd);
        if (pid < 0 || !add_child(st, pid, (int)i)) {
            fprintf(stderr, "run: cannot start local worker %u: %s\n", i, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void describe_status(int status, char *buf, size_t len) {
    if (WIFEXITED(status))
        snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "signal %s", strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "status %d", status);
}

/* The controller's per-iteration hook: a local child that died abnormally aborts the run. */
static int check_children(void *arg, char *why, size_t len) {
    run_state_t *st = arg;
    if (st->mock_out >= 0) {
        char sink[4096];
        while (read(st->mock_out, sink, sizeof sink) > 0)
            ;
    }
    for (size_t i = 0; i < st->n_children; i++) {
        run_child_t *c = &st->children[i];
        if (c->reaped || waitpid(c->pid, &c->status, WNOHANG) != c->pid)
            continue;
        c->reaped = true;
        if (c->index >= 0 && WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0)
            continue; /* a worker released after its run */
        char how[64];
        describe_status(c->status, how, sizeof how);
        if (c->index < 0)
            snprintf(why, len, "the embedded mock server exited (%s); see %s/mock.log", how,
                     st->out_dir);
        else
            snprintf(why, len, "local worker %d exited (%s); see %s/workers.log", c->index, how,
                     st->out_dir);
        return 1;
    }
    return 0;
}

/* Waits up to ms for the children matching `workers` (or the mock) to exit; returns how many are
 * still running. */
static size_t wait_children(run_state_t *st, bool workers, long ms) {
    for (long waited = 0;; waited += 20) {
        size_t alive = 0;
        for (size_t i = 0; i < st->n_children; i++) {
            run_child_t *c = &st->children[i];
            if (c->reaped || (c->index >= 0) != workers)
                continue;
            if (waitpid(c->pid, &c->status, WNOHANG) == c->pid)
                c->reaped = true;
            else
                alive++;
        }
        if (!alive || waited >= ms)
            return alive;
        struct timespec d = {0, 20000000};
        nanosleep(&d, NULL);
    }
}

static void signal_children(run_state_t *st, bool workers, int sig) {
    for (size_t i = 0; i < st->n_children; i++)
        if (!st->children[i].reaped && (st->children[i].index >= 0) == workers)
            kill(st->children[i].pid, sig);
}

/* Workers exit by themselves once released (--once); whatever is left is stopped (at once when
 * they served several runs: they are long-lived). */
static void reap_all(run_state_t *st) {
    if (wait_children(st, true, st->once ? 5000 : 0)) {
        signal_children(st, true, SIGTERM);
        if (wait_children(st, true, 2000)) {
            signal_children(st, true, SIGKILL);
            wait_children(st, true, 2000);
        }
    }
    signal_children(st, false, SIGTERM);
    if (wait_children(st, false, 2000)) {
        signal_children(st, false, SIGKILL);
        wait_children(st, false, 2000);
    }
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: stampede run FILE [FILE]... [--workers N] [--target URL]... [--out DIR]\n"
            "                    [--trace] [--http-phases|--verbose] [--no-preflight]\n"
            "                    [--allow-invalid] [--grace DURATION]\n"
            "                    [--progress-interval DURATION]\n"
            "                    [--metrics-listen HOST:PORT [--metrics-prefix P]\n"
            "                     [--metrics-compat loadgen]\n"
            "                     [--metrics-token-file FILE | --metrics-insecure]]\n"
            "  FILE...        workload files, run one after another by the same local\n"
            "                 workers; with several, run N writes to DIR/run-N; a file\n"
            "                 of several YAML documents (---) is one run per document.\n"
            "                 A file with a sweep: section runs each of its levels in turn\n"
            "                 (DIR/levels/NN-<level>/rep-R, the sweep in DIR/results.json;\n"
            "                 docs/sweeps.md). A `veeksha benchmark` file runs as it is\n"
            "                 (its !expand lists: sweep levels or runs; its notes on\n"
            "                 stderr; docs/workloads.md, \"Veeksha files\")\n"
            "  --workers N    local worker processes (default %d)\n"
            "  --target URL   endpoint base URL or whole request URL (.../v1/chat/completions),\n"
            "                 repeatable; overrides the file (without\n"
            "                 any, the embedded `stampede mock` is started, with the options\n"
            "                 of the first file's mock: section)\n"
            "  --out DIR      results directory (default: the file's output.dir)\n"
            "  --trace        also write DIR/requests.jsonl with every chunk time\n"
            "  --no-preflight skip the one small request worker 0 sends each endpoint before\n"
            "                 the start (a dead server, a 4xx/5xx, a model it does not\n"
            "                 serve or an answer that is not SSE stops the run in seconds)\n"
            "  --http-phases  the table also shows the HTTP phases (blocked, dns, connecting,\n"
            "                 tls, sending, waiting, receiving); --verbose does the same\n"
            "  --allow-invalid  exit 0 for a run judged invalid (client saturated, schedule\n"
            "                 lag, a worker lost, stopped by limits.max_error_pct...);\n"
            "                 without it such a run exits 3. The results are written\n"
            "                 either way, with validity.reasons\n"
            "  --grace DURATION  on Ctrl-C/SIGTERM the requests in flight have this long to\n"
            "                 finish before they are cancelled (default 5s; 0: at once); the\n"
            "                 results are written marked partial, exit 130. A second signal\n"
            "                 quits at once, the workers told to abandon the run\n"
            "  --progress-interval DURATION  how often the live line is written when stderr\n"
            "                 is not a terminal (default 10s; a terminal's is redrawn every\n"
            "                 second; also STAMPEDE_PROGRESS_INTERVAL)\n"
            "  --metrics-listen HOST:PORT  serve live Prometheus metrics at /metrics during\n"
            "                 the runs (port 0 picks one; the address is printed on stderr)\n"
            "  --metrics-prefix P  prefix of the metric names (default stampede_)\n"
            "  --metrics-compat loadgen  also the reference names (loadgen_ttft_all_seconds\n"
            "                 Summary, loadgen_requests_total...; docs/metrics.md)\n"
            "  --metrics-token-file FILE  every scrape must send Authorization: Bearer T, T\n"
            "                 the file's first line (401 otherwise)\n"
            "  --metrics-insecure  allow --metrics-listen beyond loopback without a token\n"
            "                 (without either, only a loopback address is accepted;\n"
            "                 docs/security.md)\n",
            RUN_DEFAULT_WORKERS);
}

/* Loads a workload file for what `stampede run` decides before the controller (which loads it
 * again): the output directory, whether an endpoint is named, the mock section. */
static int peek_config(const char *path, config_t *cfg) {
    config_error_t err;
    if (config_load_file(cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "run: %s\n", msg);
        return -1;
    }
    return 0;
}

/* A Veeksha file's notes (keys accepted but not acted on), once per file, and its managed server:
 * ignored with --target, refused without (stampede does not start servers). 0 or -1. */
static int veeksha_remarks(const config_t *cfg, bool has_target, const char **last_notes) {
    if (cfg->notes && (!*last_notes || strcmp(*last_notes, cfg->notes) != 0)) {
        for (const char *line = cfg->notes; *line;) {
            const char *end = strchr(line, '\n');
            int len = end ? (int)(end - line) : (int)strlen(line);
            fprintf(stderr, "run: note: %.*s\n", len, line);
            line += len + (end != NULL);
        }
        *last_notes = cfg->notes;
    }
    if (!cfg->managed_server)
        return 0;
    if (has_target) {
        fprintf(stderr, "run: note: %s: ignored: --target is given\n", cfg->managed_server);
        return 0;
    }
    fprintf(stderr,
            "run: %s: stampede does not start servers; start it and give its URL with "
            "--target URL\n",
            cfg->managed_server);
    return -1;
}

/* A mock section that does not reach the mock is said so, not silently dropped. */
static void note_ignored_mock(const char *path, bool needs_mock, const char *first) {
    if (needs_mock)
        fprintf(stderr,
                "run: note: %s: its mock section is ignored: the embedded mock serves every file "
                "with the options of the first, %s\n",
                path, first);
    else
        fprintf(stderr,
                "run: note: %s: its mock section is ignored: the run has a target (--target or "
                "target.endpoints), so no embedded mock is started\n",
                path);
}

static int open_log(const run_state_t *st, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", st->out_dir, name);
    int fd = outfile_open(path, O_APPEND);
    if (fd < 0)
        fprintf(stderr, "run: cannot write %s: %s\n", path, strerror(errno));
    return fd;
}

int run_main(int argc, char **argv) {
    return run_main_source(argc, argv, NULL);
}

/* The embedded mock's engine profile for the mock section: its `profile`, "fixed" when it sets
 * fixed timings (ttft, itl: no engine model), else the mock's "default". */
static const char *mock_profile(const config_mock_t *mock) {
    const char *profile = "default";
    for (size_t i = 0; i < mock->n_options; i++) {
        if (!strcmp(mock->options[i].key, "profile"))
            return mock->options[i].value;
        if (!strcmp(mock->options[i].key, "ttft") || !strcmp(mock->options[i].key, "itl"))
            profile = "fixed";
    }
    return profile;
}

int run_main_source(int argc, char **argv, const struct sweep_source *source) {
    static const struct option longopts[] = {
        {"workers", required_argument, NULL, 'w'},
        CONTROLLER_SHARED_LONGOPTS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned workers = RUN_DEFAULT_WORKERS;
    controller_options_t o = {0}; /* the shared flags; the rest once the workers are known */
    const char **targets = calloc((size_t)argc + 2, sizeof *targets);
    run_state_t st = {.mock_out = -1};
    int rc = 1, worker_log = -1, mock_log = -1;
    char mock_url[64];
    config_t first = {0}; /* the first file, whose mock section the embedded mock takes */
    bool *has_mock = NULL;
    char **mock_args = NULL;
    char **runs = NULL; /* the files, a file of several YAML documents as several runs */
    size_t n_runs = 0;
    if (!targets)
        return 1;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "w:t:o:TPvh", longopts, NULL)) != -1) {
        char *end;
        if (controller_options_apply(&o, targets, c, optarg))
            continue;
        switch (c) {
        case 'w': {
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 1024) {
                fprintf(stderr, "run: --workers wants a number from 1 to 1024, got '%s'\n", optarg);
                goto out;
            }
            workers = (unsigned)n;
            break;
        }
        case 'h':
            usage(stdout);
            rc = 0;
            goto out;
        default:
            usage(stderr);
            goto out;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "run: a workload FILE is required\n");
        usage(stderr);
        goto out;
    }
    /* The mock serves only when no file names an endpoint (one that does not, beside one that
     * does, is refused by the controller), with the first file's mock options; logs go to the
     * first file's output directory. */
    bool needs_mock = true;
    runs = config_expand_documents(&argv[optind], (size_t)(argc - optind), &n_runs);
    has_mock = calloc(n_runs + 1, sizeof *has_mock);
    if (!runs || !has_mock)
        goto out;
    char *last_notes = NULL; /* the runs of one Veeksha file share their notes: said once */
    for (size_t i = n_runs; i-- > 0;) {
        config_t cfg;
        if (peek_config(runs[i], &cfg) != 0) {
            free(last_notes);
            goto out;
        }
        const char *said = last_notes;
        int remarks = veeksha_remarks(&cfg, o.n_targets > 0, &said);
        if (said == cfg.notes && said != last_notes) {
            free(last_notes);
            last_notes = strdup(cfg.notes);
        }
        if (remarks != 0) {
            free(last_notes);
            config_free(&cfg);
            goto out;
        }
        needs_mock = needs_mock && o.n_targets == 0 && cfg.target.n_endpoints == 0;
        has_mock[i] = cfg.mock.n_options > 0;
        if (i > 0) {
            config_free(&cfg);
            continue;
        }
        snprintf(st.out_dir, sizeof st.out_dir, "%s",
                 o.out_dir        ? o.out_dir
                 : cfg.output.dir ? cfg.output.dir
                                  : "results");
        first = cfg;
    }
    free(last_notes);
    for (size_t i = 0; i < n_runs; i++)
        if (has_mock[i] && (!needs_mock || i > 0))
            note_ignored_mock(runs[i], needs_mock, runs[0]);
    /* A sweep runs each level as a run of its own: its workers stay for the next one. */
    st.once = n_runs == 1 && first.sweep.axis == SWEEP_AXIS_NONE && !source;
    if (outfile_make_dir(st.out_dir) != 0) {
        fprintf(stderr, "run: cannot create the output directory %s: %s\n", st.out_dir,
                strerror(errno));
        goto out;
    }
    worker_log = open_log(&st, "workers.log");
    if (worker_log < 0)
        goto out;
    if (needs_mock) {
        mock_log = open_log(&st, "mock.log");
        mock_args = config_mock_args(&first.mock);
        if (mock_log < 0 || !mock_args ||
            start_mock(&st, mock_log, mock_args, runs[0], mock_url, sizeof mock_url) != 0)
            goto out;
        targets[o.n_targets++] = mock_url;
        o.simulated_profile = mock_profile(&first.mock);
        fprintf(stderr, "run: no target given: embedded mock at %s (pid %d)\n", mock_url,
                (int)st.children[st.n_children - 1].pid);
    }
    o.config_path = runs[0];
    o.config_paths = (const char *const *)runs;
    o.n_configs = n_runs;
    o.targets = targets;
    o.bind = "tcp://127.0.0.1:*";
    o.expect_workers = workers;
    o.out_dir = st.out_dir;
    o.register_timeout_ns = RUN_REGISTER_TIMEOUT_NS;
    o.name = "run";
    o.hook = check_children;
    o.hook_arg = &st;
    o.source = source;
    controller_t *ctl = controller_new(&o);
    if (!ctl)
        goto out;
    if (start_workers(&st, controller_endpoint(ctl), workers, worker_log) == 0)
        rc = controller_run(ctl);
    controller_destroy(&ctl);
out:
    reap_all(&st);
    if (st.mock_out >= 0)
        close(st.mock_out);
    if (worker_log >= 0)
        close(worker_log);
    if (mock_log >= 0)
        close(mock_log);
    free(st.children);
    free(targets);
    free(has_mock);
    free(mock_args);
    config_documents_free(runs);
    config_free(&first);
    return rc;
}
