#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config_case.h"
#include "temp_file.h"
#include "unit_main.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_documents.h"

static const char *data_dir(void) {
    const char *dir = getenv("STAMPEDE_DATA");
    return dir ? dir : "tests/data";
}

static void data_path(char *buf, size_t len, const char *name) {
    snprintf(buf, len, "%s/config/%s", data_dir(), name);
}

static void load_data_file(config_t *cfg, const char *name) {
    char path[1024], msg[1024];
    config_error_t err;
    data_path(path, sizeof path, name);
    if (config_load_file(cfg, path, &err) != 0) {
        config_error_format(&err, msg, sizeof msg);
        fail_msg("%s should load: %s", path, msg);
    }
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A table of bad files, each with the exact message a user sees. */
static const message_case_t bad_cases[] = {
    {"limits: {duration: 10s}\ntarget: {endpoints: ['http://10.0.0.1:70000/v1']}\n",
     "bad.yaml:2:22: target.endpoints[0]: URL 'http://10.0.0.1:70000/v1' names port '70000': a "
     "port "
     "is a whole number from 1 to 65535"},
    {"limits: {duration: 10s}\nworkload: {input_tokens: 4294967296000}\n",
     "bad.yaml:2:26: workload.input_tokens: 4294967296000 tokens is above the ceiling of 10000000, "
     "the largest context window of any model (docs/config.md)"},
    {"limits: {duration: 10s}\nworkload:\n  output_tokens: {dist: lognormal, mean: 20000000, "
     "sigma: 1}\n",
     "bad.yaml:3:18: workload.output_tokens: 20000000 tokens is above the ceiling of 10000000, the "
     "largest context window of any model (docs/config.md)"},
    {"scheduler:\n  concurency: 4\nlimits: {duration: 10s}\n",
     "bad.yaml:2:3: scheduler.concurency: unknown key 'concurency'; did you mean 'concurrency'?"},
    {"colour: red\nlimits: {duration: 10s}\n",
     "bad.yaml:1:1: colour: unknown key 'colour'; valid keys here: seed, text_seed, target, "
     "workload, scheduler, limits, warmup, output, mock, server_metrics, gpu_metrics, "
     "scrape_interval, "
     "sweep, slo, capacity, deployment, validity, fleet"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens:\n    dist: lognormal\n    mean: 512\n"
     "    sigma: {a: 1}\n",
     "bad.yaml:6:12: workload.input_tokens.sigma: expected a number, got a mapping"},
    {"limits: {duration: 10s}\ntarget:\n  api: chatt\n",
     "bad.yaml:3:8: target.api: expected one of chat, completions, messages, responses, got "
     "'chatt'; did you mean "
     "'chat'?"},
    {"limits: {duration: 10s}\ntarget:\n  session_header: X Session\n",
     "bad.yaml:3:19: target.session_header: 'X Session' is not a valid HTTP header name (letters, "
     "digits and !#$%&'*+-.^_`|~), e.g. X-Session-ID"},
    {"limits: {duration: 10s}\ntarget:\n  replica_header: Content-Type\n",
     "bad.yaml:3:19: target.replica_header: 'Content-Type' is a header stampede sets itself; name "
     "another"},
    {"limits: {duration: 10s}\ntarget:\n  api: messages\n  stream: false\n",
     "bad.yaml:4:11: target.stream: stream: false is for chat and completions; target.api "
     "messages is measured streamed (its events give TTFT and ITL)"},
    {"limits: {duration: 10s}\ntarget:\n  previous_response_id: true\n",
     "bad.yaml:3:25: target.previous_response_id: previous_response_id chains the turns of api: "
     "responses; target.api is chat"},
    {"limits: {duration: 10s}\ntarget:\n  thinking_tokens: -1\n",
     "bad.yaml:3:20: target.thinking_tokens: expected a whole number >= 0, got '-1'"},
    {"limits: {duration: 10s}\ntarget: {routing: fastest}\n",
     "bad.yaml:2:19: target.routing: expected one of round_robin, sticky, random, least_inflight, "
     "got 'fastest'"},
    {"limits:\n  duration: 10s\n  duration: 20s\n",
     "bad.yaml:3:3: limits.duration: duplicate key 'duration' (first given at line 2, column 3)"},
    {"limits:\n  duration: 10 parsecs\n",
     "bad.yaml:2:13: limits.duration: expected a duration such as 500ms, 2s, 1.5m or 1m30s (units "
     "ns, us, ms, s, m, h; a bare number is seconds), got '10 parsecs'"},
    {"limits: {duration: 10s}\nscheduler:\n  kind: rate\n  rate: 5/week\n",
     "bad.yaml:4:9: scheduler.rate: expected a rate such as 5/s, 300/m, 10/h or 2.5 (a bare "
     "number is per second), got '5/week'"},
    {"limits: {duration: 10s}\ntarget:\n  timeout: 0s\n",
     "bad.yaml:3:12: target.timeout: expected a duration greater than 0, got '0s'"},
    {"limits:\n  max_requests: -5\n",
     "bad.yaml:2:17: limits.max_requests: expected a whole number >= 0, got '-5'"},
    {"limits: {duration: 10s}\ntarget:\n  api_key_env: OPENAI_API_KEY\n"
     "  api_key_file: /run/secrets/key\n",
     "bad.yaml:4:3: target.api_key_file: api_key_env and api_key_file are both given; keep one"},
    {"limits: {duration: 10s}\nscheduler:\n  kind: rate\n  concurrency: 8\n",
     "bad.yaml:3:9: scheduler.rate: a rate scheduler needs a rate (sessions per second), e.g. "
     "rate: 5/s"},
    {"limits: {duration: 10s}\nscheduler:\n  kind: rate\n  rate: 0/s\n",
     "bad.yaml:4:9: scheduler.rate: a rate scheduler needs a rate greater than 0, got '0/s'"},
    {"seed: 3\nworkload: {kind: chat}\n",
     "bad.yaml:1:1: limits: no limit given: set at least one of limits.duration, "
     "limits.max_sessions or limits.max_requests (an unbounded run against a shared server is "
     "refused)"},
    {"seed: 3\nlimits:\n  duration: 0s\n",
     "bad.yaml:2:1: limits: no limit given: set at least one of limits.duration, "
     "limits.max_sessions or limits.max_requests (an unbounded run against a shared server is "
     "refused)"},
    {"limits: {duration: 10s}\ntarget: [a, b\n",
     "bad.yaml:3:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow "
     "sequence at line 2, column 9)"},
    {"limits: {duration: 10s}\ntarget:\n\tapi: chat\n",
     "bad.yaml:3:1: YAML syntax error: found character that cannot start any token (while "
     "scanning for the next token at line 3, column 1); YAML allows no tabs in indentation, use "
     "spaces"},
    {"limits: {duration: 10s}\nworkload:\n  output_tokens: {dist: lognormall, mean: 5, sigma: 1}\n",
     "bad.yaml:3:25: workload.output_tokens.dist: expected one of fixed, uniform, normal, "
     "lognormal, exponential, poisson, gamma, inverse_gaussian, pareto, zipf, empirical, "
     "mixture, got 'lognormall'; did you mean 'lognormal'?"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dist: uniform, min: 1, max: 5, mean: "
     "3}\n",
     "bad.yaml:3:49: workload.input_tokens.mean: uniform does not take 'mean'; it takes: min, max"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dist: lognormal, mean: 512, sigma: 0}\n",
     "bad.yaml:3:53: workload.input_tokens.sigma: lognormal needs sigma > 0"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {mean: 5}\n",
     "bad.yaml:3:17: workload.input_tokens: a distribution mapping needs 'dist: KIND' (KIND one "
     "of fixed, uniform, normal, lognormal, exponential, poisson, gamma, inverse_gaussian, "
     "pareto, zipf, empirical, mixture)"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dsit: uniform, min: 1, max: 4}\n",
     "bad.yaml:3:18: workload.input_tokens.dsit: unknown key 'dsit'; did you mean 'dist'?"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dist: lognormal, mean: 5, sigm: 1}\n",
     "bad.yaml:3:44: workload.input_tokens.sigm: unknown key 'sigm'; did you mean 'sigma'?"},
    {"limits: {duration: 10s}\nworkload:\n  output_tokens: 0\n",
     "bad.yaml:3:18: workload.output_tokens: expected a value >= 1, got '0'"},
    {"limits: {duration: 10s}\nworkload:\n  think_time: {dist: exponential, mean: 2 parsecs}\n",
     "bad.yaml:3:41: workload.think_time.mean: expected a duration or a number of seconds, got '2 "
     "parsecs'"},
    {"limits: {duration: 10s}\nworkload:\n  turns: [1, 2]\n",
     "bad.yaml:3:10: workload.turns: expected a number or a distribution mapping such as {dist: "
     "uniform, min: 10, max: 20}, got a sequence"},
    {"limits: {duration: 10s}\nworkload:\n  output_tokens: {dist: empirical, values: [1, 2, 3], "
     "weights: [1, 2]}\n",
     "bad.yaml:3:64: workload.output_tokens.weights: expected 3 weights (one per value), got 2"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dist: lognormal, mean: 5, sigma: 1, "
     "sigma: 2}\n",
     "bad.yaml:3:54: workload.input_tokens.sigma: duplicate key 'sigma' (first given at line 3, "
     "column 44)"},
    {"limits: {duration: 10s}\nworkload:\n  input_tokens: {dist: empirical, file: "
     "no-such-lengths.txt}\n",
     "bad.yaml:3:41: workload.input_tokens.file: no-such-lengths.txt: cannot open: No such file "
     "or directory"},
    {"limits: {duration: 10s}\ntarget:\n  endpoints: [http://a:1, ftp://x]\n",
     "bad.yaml:3:27: target.endpoints[1]: expected a URL starting with http:// or https://, got "
     "'ftp://x'"},
    {"limits: {duration: 10s}\nscheduler:\n  kind: rate\n  rate: 5/s\n  arrival: gamma\n",
     "bad.yaml:5:12: scheduler.arrival_cv: gamma arrivals need arrival_cv (the coefficient of "
     "variation of the gaps, > 0)"},
    {"limits: {duration: 10s}\nscheduler:\n  concurrency: 0\n",
     "bad.yaml:3:16: scheduler.concurrency: a concurrent scheduler needs concurrency >= 1, got "
     "'0'"},
    {"limits: {duration: 10s}\nwarmup: 10s\n",
     "bad.yaml:2:9: warmup: warmup 10s leaves nothing to measure within limits.duration 10s"},
    {"limits: {duration: 10s}\ntarget:\n  api_key_env: sk-abc123secret\n",
     "bad.yaml:3:16: target.api_key_env: expected the name of an environment variable (letters, "
     "digits and _), not the key itself"},
    {"limits: {duration: 10s}\ntarget:\n  api_key_env: KEY\n  headers: {Authorization: Bearer x}\n",
     "bad.yaml:4:13: target.headers.Authorization: an Authorization header and api_key_env both "
     "supply the key; keep one"},
    {"limits: {duration: 10s}\ntarget:\n  headers: {\"X Team\": infra}\n",
     "bad.yaml:3:13: target.headers.X Team: 'X Team' is not a valid HTTP header name"},
    {"limits: {duration: 10s}\ntarget:\n  headers: {X-A: 1, x-a: 2}\n",
     "bad.yaml:3:21: target.headers.x-a: duplicate key 'x-a' (first given at line 3, column 13)"},
    {"- a\n- b\n",
     "bad.yaml:1:1: expected a mapping of sections (seed, target, workload, scheduler, limits, "
     "warmup, output, mock), got a sequence"},
    {"limits: {duration: 1s}\n---\nseed: 2\n",
     "bad.yaml:2:1: expected a single YAML document, found a second one"},
    {"limits: {duration: 10s}\nvalidity: {max_schedule_lag: 0s}\n",
     "bad.yaml:2:30: validity.max_schedule_lag: expected a duration greater than 0, got '0s'"},
    {"limits: {duration: 10s}\nfleet: {liveness: 1}\n",
     "bad.yaml:2:19: fleet.liveness: must be at least 2 (heartbeats missed before a peer is lost)"},
    {"limits: {duration: 10s}\nfleet: {heartbeat: 5ms}\n",
     "bad.yaml:2:20: fleet.heartbeat: must be between 10ms and 60s"},
    {"limits: {duration: 10s}\nfleet: {abort_on_worker_loss_pct: 150}\n",
     "bad.yaml:2:35: fleet.abort_on_worker_loss_pct: must be a percentage between 0 and 100"},
    {"limits: {duration: 10s}\nfleet: {rebalance: true}\n",
     "bad.yaml:2:9: fleet.rebalance: unknown key 'rebalance'; valid keys here: heartbeat, "
     "liveness, "
     "abort_on_worker_loss_pct, rebalance_on_join"},
    {"limits: {duration: 10s}\nvalidity: {max_lag: 1s}\n",
     "bad.yaml:2:12: validity.max_lag: unknown key 'max_lag'; valid keys here: max_schedule_lag"},
    {"limits: {duration: 10s}\noutput:\n  trace: maybe\n",
     "bad.yaml:3:10: output.trace: expected true or false, got 'maybe'"},
    {"limits: {duration: 10s}\nscheduler: 5\n",
     "bad.yaml:2:12: scheduler: expected a mapping, got '5'"},
    {"limits: {duration: 10s}\nseed: 1.5\n",
     "bad.yaml:2:7: seed: expected a whole number, got '1.5'"},
    {"limits: {duration: 1s}\nmodel: \xff\n",
     "bad.yaml:2:8: cannot read the text: invalid leading UTF-8 octet (0xff at byte 30)"},
    {"limits: {duration: 1s}\ntarget:\n  headers: {X-A: \"a\\nb\"}\n",
     "bad.yaml:3:18: target.headers.X-A: a header value must not contain a line break or other "
     "control character"},
    {"limits: {duration: 10s}\ntarget:\n  model: \"\"\n",
     "bad.yaml:3:10: target.model: expected a non-empty string, got ''"},
    /* results.json keys per-endpoint blocks by URL: two entries would collapse into one */
    {"limits: {duration: 10s}\ntarget:\n  endpoints:\n    - http://a:8000\n    - http://b:8000\n"
     "    - http://a:8000/v1/\n",
     "bad.yaml:6:7: target.endpoints[2]: 'http://a:8000/v1/' is the same endpoint as "
     "'http://a:8000' (both are http://a:8000 once a trailing / or /v1 is dropped); list each "
     "endpoint once"},
    {"limits: {duration: 10s}\nworkload:\n  roles: [planner, executor, planner]\n",
     "bad.yaml:3:30: workload.roles[2]: role 'planner' is named twice"},
    {"limits: {duration: 10s}\nworkload:\n  roles: [\"plan ner\"]\n",
     "bad.yaml:3:11: workload.roles[0]: 'plan ner' is not a role name (letters, digits, '_', '-', "
     "'.')"},
    {"limits: {duration: 10s}\nworkload:\n  roles: planner\n",
     "bad.yaml:3:10: workload.roles: expected a sequence of role names, e.g. [planner, executor]"},
    {"limits: {duration: 10s}\nworkload:\n  think_time:\n    dist: mixture\n    components:\n"
     "      - {weight: 0, dist: uniform, min: 1ms, max: 20ms}\n",
     "bad.yaml:6:18: workload.think_time.components[0].weight: expected a weight > 0, got '0'"},
    {"limits: {duration: 10s}\nworkload:\n  think_time: {dist: mixture}\n",
     "bad.yaml:3:15: workload.think_time: mixture needs components: [{weight: W, dist: KIND, "
     "...}, ...]"},
    {"limits: {duration: 10s}\nworkload:\n  think_time: {dist: mixture, components: []}\n",
     "bad.yaml:3:43: workload.think_time.components: expected a non-empty sequence of "
     "distribution mappings, each with a weight"},
    {"limits: {duration: 10s}\nworkload:\n  think_time:\n    dist: mixture\n    components:\n"
     "      - {weight: 1, dist: uniform, min: 1ms, max: 20ms}\n"
     "      - {weight: 2, dist: pareto, scale: 100ms, alpha: -1}\n",
     "bad.yaml:7:56: workload.think_time.components[1].alpha: pareto needs alpha > 0 and scale > "
     "0"},
};

static void test_config_bad_files_give_exact_messages(void **state) {
    CONFIG_CASE_REFUSALS(bad_cases);
}

static void test_config_error_never_echoes_a_pasted_key(void **state) {
    const char *yaml = "limits: {duration: 10s}\ntarget:\n  api_key_env: sk-abc123secret\n";
    config_t cfg;
    config_error_t err;
    char msg[1024];
    assert_int_equal(config_load_string(&cfg, yaml, strlen(yaml), "k.yaml", &err), -1);
    config_error_format(&err, msg, sizeof msg);
    assert_null(strstr(msg, "abc123"));
}

static void test_config_bad_data_files_give_exact_messages(void **state) {
    static const message_case_t cases[] = {
        /* file name, message after "PATH:" */
        {"bad_unknown_section.yaml",
         "4:1: schedular: unknown key 'schedular'; did you mean 'scheduler'?"},
        {"bad_tab_indent.yaml",
         "3:1: YAML syntax error: found character that cannot start any token (while scanning for "
         "the next token at line 3, column 1); YAML allows no tabs in indentation, use spaces"},
        {"bad_empirical_file.yaml", "4:41: workload.input_tokens.file: value 0 (entry 2 of the "
                                    "file) is below the minimum 1"},
        {"bad_rate_without_rate.yaml", "4:9: scheduler.rate: a rate scheduler needs a rate "
                                       "(sessions per second), e.g. rate: 5/s"},
        {"no_such_file.yaml", " cannot read the file: No such file or directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024], expected[2048], msg[2048];
        config_t cfg;
        config_error_t err;
        data_path(path, sizeof path, cases[i].input);
        snprintf(expected, sizeof expected, "%s:%s", path, cases[i].message);
        assert_int_equal(config_load_file(&cfg, path, &err), -1);
        config_error_format(&err, msg, sizeof msg);
        assert_string_equal(msg, expected);
    }
}

static void test_config_directory_is_refused_with_errno_text(void **state) {
    char path[1024], msg[2048], expected[2048];
    config_t cfg;
    config_error_t err;
    snprintf(path, sizeof path, "%s/config", data_dir());
    assert_int_equal(config_load_file(&cfg, path, &err), -1);
    config_error_format(&err, msg, sizeof msg);
    snprintf(expected, sizeof expected, "%s: cannot read the file: Is a directory", path);
    assert_string_equal(msg, expected);
    assert_int_equal(err.line, 0);
}

static void test_config_minimal_file_takes_every_default(void **state) {
    config_t c;
    load_data_file(&c, "good_minimal.yaml");
    assert_int_equal(c.seed, 1);
    assert_int_equal(c.target.n_endpoints, 0);
    assert_int_equal(c.target.api, API_CHAT);
    assert_string_equal(c.target.model, "mock");
    assert_int_equal(c.target.n_headers, 0);
    assert_null(c.target.api_key_env);
    assert_null(c.target.api_key_file);
    assert_int_equal(c.target.timeout_ns, 600000000000LL);
    assert_int_equal(c.target.connect_timeout_ns, 10000000000LL);
    assert_int_equal(c.target.routing, ROUTING_ROUND_ROBIN);
    assert_false(c.target.ignore_eos);
    assert_false(c.target.min_tokens);
    assert_true(c.target.stream);
    assert_int_equal(c.workload.kind, WORKLOAD_REQUESTS);
    assert_int_equal(c.workload.turns.kind, DIST_FIXED);
    assert_true(c.workload.turns.param[DIST_P_VALUE] == 1);
    assert_true(c.workload.input_tokens.param[DIST_P_VALUE] == 512);
    assert_true(c.workload.output_tokens.param[DIST_P_VALUE] == 128);
    assert_true(c.workload.think_time.param[DIST_P_VALUE] == 0);
    assert_int_equal(c.workload.system_prompt_tokens, 0);
    assert_int_equal(c.scheduler.kind, SCHEDULER_CONCURRENT);
    assert_int_equal(c.scheduler.concurrency, 1);
    assert_int_equal(c.scheduler.ramp_up_ns, 0);
    assert_int_equal(c.scheduler.arrival, ARRIVAL_POISSON);
    assert_true(c.scheduler.arrival_cv == 1.0);
    assert_int_equal(c.limits.duration_ns, 0);
    assert_int_equal(c.limits.max_sessions, 0);
    assert_int_equal(c.limits.max_requests, 10);
    assert_int_equal(c.warmup_ns, 0);
    assert_string_equal(c.output.dir, "results");
    assert_false(c.output.trace);
    assert_true(ends_with(c.source, "config/good_minimal.yaml"));
    config_free(&c);
}

static void assert_param(const dist_t *d, dist_param_t p, double expected) {
    if (!(d->given & (1u << p)) || d->param[p] != expected)
        fail_msg("%s: %s is %g (given %d), expected %g exactly", dist_kind_name(d->kind),
                 dist_param_name(p), d->param[p], !!(d->given & (1u << p)), expected);
}

static void test_config_full_file_sets_every_key(void **state) {
    config_t c;
    load_data_file(&c, "good_full.yaml");
    assert_int_equal(c.seed, 12345678901234ULL);
    assert_int_equal(c.target.n_endpoints, 2);
    assert_string_equal(c.target.endpoints[0], "http://127.0.0.1:8000");
    assert_string_equal(c.target.endpoints[1], "https://frontend.example:443");
    assert_int_equal(c.target.api, API_COMPLETIONS);
    assert_string_equal(c.target.model, "llama-3.1-70b");
    assert_int_equal(c.target.n_headers, 2);
    assert_string_equal(c.target.headers[0].name, "X-Team");
    assert_string_equal(c.target.headers[0].value, "infra");
    assert_string_equal(c.target.headers[1].name, "X-Api-Key");
    assert_string_equal(c.target.headers[1].value, "abc123");
    assert_string_equal(c.target.api_key_env, "OPENAI_API_KEY");
    assert_null(c.target.api_key_file);
    assert_int_equal(c.target.timeout_ns, 120000000000LL);
    assert_int_equal(c.target.connect_timeout_ns, 1500000000LL);
    assert_true(c.target.ignore_eos);
    assert_true(c.target.min_tokens);
    assert_false(c.target.stream);
    assert_int_equal(c.target.routing, ROUTING_STICKY);
    assert_int_equal(c.workload.kind, WORKLOAD_CHAT);
    assert_int_equal(c.workload.turns.kind, DIST_UNIFORM);
    assert_param(&c.workload.turns, DIST_P_MIN, 2);
    assert_param(&c.workload.turns, DIST_P_MAX, 6);
    assert_int_equal(c.workload.input_tokens.kind, DIST_LOGNORMAL);
    assert_param(&c.workload.input_tokens, DIST_P_MEAN, 512);
    assert_param(&c.workload.input_tokens, DIST_P_SIGMA, 0.4);
    assert_param(&c.workload.input_tokens, DIST_P_MIN, 16);
    assert_param(&c.workload.input_tokens, DIST_P_MAX, 4096);
    assert_int_equal(c.workload.output_tokens.kind, DIST_GAMMA);
    assert_param(&c.workload.output_tokens, DIST_P_MEAN, 128);
    assert_param(&c.workload.output_tokens, DIST_P_CV, 0.5);
    assert_param(&c.workload.output_tokens, DIST_P_MAX, 1024);
    assert_int_equal(c.workload.think_time.kind, DIST_EXPONENTIAL);
    assert_param(&c.workload.think_time, DIST_P_MEAN, 2.0); /* "2s" in seconds */
    assert_param(&c.workload.think_time, DIST_P_MAX, 30.0); /* "30s" */
    assert_int_equal(c.workload.system_prompt_tokens, 256);
    assert_int_equal(c.scheduler.kind, SCHEDULER_RATE);
    assert_int_equal(c.scheduler.concurrency, 64);
    assert_int_equal(c.scheduler.ramp_up_ns, 10000000000LL);
    assert_true(c.scheduler.rate == 5.0); /* 300/m */
    assert_int_equal(c.scheduler.arrival, ARRIVAL_GAMMA);
    assert_true(c.scheduler.arrival_cv == 2.0);
    assert_int_equal(c.limits.duration_ns, 90000000000LL);
    assert_int_equal(c.limits.max_sessions, 100);
    assert_int_equal(c.limits.max_requests, 1000);
    assert_int_equal(c.warmup_ns, 5000000000LL);
    assert_string_equal(c.output.dir, "results/full");
    assert_true(c.output.trace);
    config_free(&c);
}

static void test_config_empirical_from_file_and_inline_with_weights(void **state) {
    config_t c;
    load_data_file(&c, "good_empirical.yaml");
    assert_int_equal(c.workload.turns.kind, DIST_ZIPF);
    assert_param(&c.workload.turns, DIST_P_N, 8);
    assert_param(&c.workload.turns, DIST_P_EXPONENT, 1.2);
    const dist_t *in = &c.workload.input_tokens;
    assert_int_equal(in->kind, DIST_EMPIRICAL);
    assert_int_equal(in->n_values, 4);
    const double lengths[] = {100, 200, 350, 800};
    for (size_t i = 0; i < 4; i++)
        assert_true(in->values[i] == lengths[i]);
    /* Resolved against the config file's directory, and absolute. */
    assert_non_null(in->file);
    assert_int_equal(in->file[0], '/');
    assert_true(ends_with(in->file, "/config/lengths.txt"));
    const dist_t *out = &c.workload.output_tokens;
    assert_int_equal(out->n_values, 3);
    assert_non_null(out->weights);
    assert_true(out->values[1] == 128 && out->weights[1] == 2);
    const dist_t *think = &c.workload.think_time;
    assert_int_equal(think->n_values, 3);
    assert_true(think->values[0] == 0.5 && think->values[1] == 1.0 && think->values[2] == 2.5);
    assert_true(think->weights[0] == 3);
    config_free(&c);
}

static void test_config_rate_file_bare_numbers_and_no_cap(void **state) {
    config_t c;
    load_data_file(&c, "good_rate.yaml");
    assert_int_equal(c.seed, 0);
    assert_int_equal(c.target.n_endpoints, 1);
    assert_string_equal(c.target.endpoints[0], "http://localhost:9000");
    assert_int_equal(c.target.api_key_file[0], '/');
    assert_true(ends_with(c.target.api_key_file, "/config/secrets/key.txt"));
    assert_int_equal(c.workload.input_tokens.kind, DIST_NORMAL);
    assert_param(&c.workload.input_tokens, DIST_P_STDDEV, 50);
    assert_int_equal(c.workload.output_tokens.kind, DIST_POISSON);
    assert_int_equal(c.workload.think_time.kind, DIST_FIXED);
    assert_true(c.workload.think_time.param[DIST_P_VALUE] == 0.25);
    assert_int_equal(c.scheduler.kind, SCHEDULER_RATE);
    assert_true(c.scheduler.rate == 2.5);
    assert_int_equal(c.scheduler.arrival, ARRIVAL_CONSTANT);
    assert_int_equal(c.scheduler.concurrency, 0); /* rate mode: no cap unless given */
    assert_int_equal(c.limits.duration_ns, 0);
    assert_int_equal(c.limits.max_sessions, 500);
    assert_int_equal(c.warmup_ns, 500000000LL);
    config_free(&c);
}

static void test_config_null_values_take_defaults(void **state) {
    config_t c;
    config_case_load(&c,
                     "limits: {max_requests: 5}\ntarget:\n  model:\n  api_key_env: ~\nworkload:\n");
    assert_string_equal(c.target.model, "mock");
    assert_null(c.target.api_key_env);
    config_free(&c);
}

static void assert_dist_equal(const dist_t *a, const dist_t *b, const char *what) {
    if (a->kind != b->kind || a->given != b->given || a->n_values != b->n_values)
        fail_msg("%s: kind %d/%d given %#x/%#x n_values %zu/%zu differ", what, a->kind, b->kind,
                 a->given, b->given, a->n_values, b->n_values);
    for (int p = 0; p < DIST_P__COUNT; p++)
        if ((a->given & (1u << p)) && a->param[p] != b->param[p])
            fail_msg("%s.%s: %.17g != %.17g", what, dist_param_name((dist_param_t)p), a->param[p],
                     b->param[p]);
    if ((a->weights == NULL) != (b->weights == NULL))
        fail_msg("%s: weights present in one only", what);
    for (size_t i = 0; i < a->n_values; i++)
        if ((a->values && a->values[i] != b->values[i]) ||
            (a->weights && a->weights[i] != b->weights[i]))
            fail_msg("%s: value %zu differs", what, i);
    for (size_t i = 0; a->kind == DIST_MIXTURE && i < a->n_values; i++)
        assert_dist_equal(&a->components[i], &b->components[i], what);
}

/* Field by field; with redacted, secret-looking header values must read "<redacted>". */
static void assert_config_equal(const config_t *a, const config_t *b, bool redacted) {
    assert_int_equal(a->seed, b->seed);
    assert_int_equal(a->validity.max_schedule_lag_ns, b->validity.max_schedule_lag_ns);
    assert_int_equal(a->fleet.heartbeat_ns, b->fleet.heartbeat_ns);
    assert_int_equal(a->fleet.liveness, b->fleet.liveness);
    assert_true(a->fleet.abort_on_worker_loss_pct == b->fleet.abort_on_worker_loss_pct);
    assert_int_equal(a->fleet.rebalance_on_join, b->fleet.rebalance_on_join);
    assert_int_equal(a->target.n_endpoints, b->target.n_endpoints);
    for (size_t i = 0; i < a->target.n_endpoints; i++)
        assert_string_equal(a->target.endpoints[i], b->target.endpoints[i]);
    assert_int_equal(a->target.api, b->target.api);
    assert_string_equal(a->target.model, b->target.model);
    assert_int_equal(a->target.n_headers, b->target.n_headers);
    for (size_t i = 0; i < a->target.n_headers; i++) {
        assert_string_equal(a->target.headers[i].name, b->target.headers[i].name);
        bool hidden = redacted && config_header_is_secret(a->target.headers[i].name);
        assert_string_equal(hidden ? "<redacted>" : a->target.headers[i].value,
                            b->target.headers[i].value);
    }
    assert_true((a->target.api_key_env == NULL) == (b->target.api_key_env == NULL));
    if (a->target.api_key_env)
        assert_string_equal(a->target.api_key_env, b->target.api_key_env);
    assert_true((a->target.api_key_file == NULL) == (b->target.api_key_file == NULL));
    if (a->target.api_key_file)
        assert_string_equal(a->target.api_key_file, b->target.api_key_file);
    assert_int_equal(a->target.timeout_ns, b->target.timeout_ns);
    assert_int_equal(a->target.connect_timeout_ns, b->target.connect_timeout_ns);
    assert_int_equal(a->target.routing, b->target.routing);
    assert_int_equal(a->target.ignore_eos, b->target.ignore_eos);
    assert_int_equal(a->target.min_tokens, b->target.min_tokens);
    assert_int_equal(a->target.stream, b->target.stream);
    assert_int_equal(a->workload.kind, b->workload.kind);
    assert_dist_equal(&a->workload.turns, &b->workload.turns, "turns");
    assert_dist_equal(&a->workload.input_tokens, &b->workload.input_tokens, "input_tokens");
    assert_dist_equal(&a->workload.output_tokens, &b->workload.output_tokens, "output_tokens");
    assert_dist_equal(&a->workload.think_time, &b->workload.think_time, "think_time");
    assert_int_equal(a->workload.n_roles, b->workload.n_roles);
    for (size_t i = 0; i < a->workload.n_roles; i++)
        assert_string_equal(a->workload.roles[i], b->workload.roles[i]);
    assert_int_equal(a->workload.system_prompt_tokens, b->workload.system_prompt_tokens);
    assert_int_equal(a->workload.trace.format, b->workload.trace.format);
    if (a->workload.trace.path || b->workload.trace.path)
        assert_string_equal(a->workload.trace.path, b->workload.trace.path);
    assert_int_equal(a->workload.trace.block_size, b->workload.trace.block_size);
    assert_true(a->workload.trace.time_scale == b->workload.trace.time_scale);
    assert_int_equal(a->workload.trace.wrap, b->workload.trace.wrap);
    assert_int_equal(a->scheduler.kind, b->scheduler.kind);
    assert_int_equal(a->scheduler.concurrency, b->scheduler.concurrency);
    assert_int_equal(a->scheduler.ramp_up_ns, b->scheduler.ramp_up_ns);
    assert_true(a->scheduler.rate == b->scheduler.rate);
    assert_int_equal(a->scheduler.arrival, b->scheduler.arrival);
    assert_true(a->scheduler.arrival_cv == b->scheduler.arrival_cv);
    assert_int_equal(a->limits.duration_ns, b->limits.duration_ns);
    assert_int_equal(a->limits.max_sessions, b->limits.max_sessions);
    assert_int_equal(a->limits.max_requests, b->limits.max_requests);
    assert_int_equal(a->warmup_ns, b->warmup_ns);
    assert_string_equal(a->output.dir, b->output.dir);
    assert_int_equal(a->output.trace, b->output.trace);
}

/* Writing c, loading that and writing again gives the same text: the written form is a fixed
 * point (the first write of a file may differ only in comments, e.g. where values came from). */
static void assert_written_form_is_fixed_point(const config_t *c) {
    config_t reloaded;
    config_error_t err;
    char *text = config_to_yaml_unredacted(c);
    assert_int_equal(config_load_string(&reloaded, text, strlen(text), "w.yaml", &err), 0);
    char *again = config_to_yaml_unredacted(&reloaded);
    assert_string_equal(text, again);
    free(text);
    free(again);
    config_free(&reloaded);
}

/* Load, write, load the text again: equal field by field, redacted or not. */
static void round_trip(const char *path) {
    config_t first, second, third;
    config_error_t err;
    char msg[1024];
    if (config_load_file(&first, path, &err) != 0) {
        config_error_format(&err, msg, sizeof msg);
        fail_msg("%s: %s", path, msg);
    }
    char *text = config_to_yaml_unredacted(&first);
    assert_non_null(text);
    if (config_load_string(&second, text, strlen(text), "written.yaml", &err) != 0) {
        config_error_format(&err, msg, sizeof msg);
        fail_msg("%s written back does not load: %s\n%s", path, msg, text);
    }
    assert_config_equal(&first, &second, false);
    assert_written_form_is_fixed_point(&second);

    char *redacted = config_to_yaml(&first);
    assert_non_null(redacted);
    assert_int_equal(config_load_string(&third, redacted, strlen(redacted), "r.yaml", &err), 0);
    assert_config_equal(&first, &third, true);
    free(text);
    free(redacted);
    config_free(&first);
    config_free(&second);
    config_free(&third);
}

static void test_config_round_trip_of_data_files(void **state) {
    static const char *const names[] = {"good_full.yaml", "good_minimal.yaml",
                                        "good_empirical.yaml", "good_rate.yaml"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        data_path(path, sizeof path, names[i]);
        round_trip(path);
    }
}

static void test_config_round_trip_of_every_example(void **state) {
    DIR *dir = opendir("examples");
    size_t n = 0;
    assert_non_null(dir);
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (!ends_with(e->d_name, ".yaml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "examples/%s", e->d_name);
        char *file = path;
        size_t runs = 0; /* a file of several YAML documents: each document */
        char **documents = config_expand_documents(&file, 1, &runs);
        assert_non_null(documents);
        for (size_t k = 0; k < runs; k++)
            round_trip(documents[k]);
        config_documents_free(documents);
        n++;
    }
    closedir(dir);
    assert_true(n >= 1);
}

static void test_config_round_trip_keeps_awkward_values_exact(void **state) {
    config_t a, b;
    config_error_t err;
    config_case_load(&a,
                     "limits: {duration: 1m0.000000001s}\n"
                     "target:\n  model: \"we\\\"ird\\\\name\\ttab: #x\"\n"
                     "  headers: {X-Note: \"a: b # c\"}\n"
                     "workload:\n  think_time: {dist: lognormal, median: 0.1234567891234, sigma: "
                     "0.3333333333333333}\n  input_tokens: {dist: normal, mean: 1e6, stddev: "
                     "0.1}\nscheduler:\n  kind: rate\n  rate: 1/h\nvalidity: {max_schedule_lag: "
                     "250ms}\nfleet: {heartbeat: 250ms, liveness: 4, abort_on_worker_loss_pct: "
                     "12.5, rebalance_on_join: true}\n");
    char *text = config_to_yaml(&a);
    assert_int_equal(config_load_string(&b, text, strlen(text), "w.yaml", &err), 0);
    assert_config_equal(&a, &b, true);
    assert_int_equal(b.limits.duration_ns, 60000000001LL);
    assert_string_equal(b.target.model, "we\"ird\\name\ttab: #x");
    assert_true(b.scheduler.rate == 1.0 / 3600);
    assert_int_equal(b.validity.max_schedule_lag_ns, 250000000LL);
    assert_int_equal(b.fleet.heartbeat_ns, 250000000LL);
    assert_int_equal(b.fleet.liveness, 4);
    assert_true(b.fleet.abort_on_worker_loss_pct == 12.5);
    assert_true(b.fleet.rebalance_on_join);
    free(text);
    config_free(&a);
    config_free(&b);
}

/* target.api messages and responses, the routing headers and thinking_tokens load and are
 * written back (file and wire form alike), and a deep copy keeps them. */
static void test_config_api_and_routing_headers_load_and_write_back(void **state) {
    config_t a, b, copy;
    config_error_t err;
    config_case_load(&a, "limits: {duration: 10s}\n"
                         "target:\n  api: messages\n  session_header: X-Dynamo-Session-ID\n"
                         "  replica_header: x-worker-id\n  thinking_tokens: 2048\n");
    assert_int_equal(a.target.api, API_MESSAGES);
    assert_string_equal(config_api_path(a.target.api), "/messages");
    char *text = config_to_yaml(&a);
    assert_int_equal(config_load_string(&b, text, strlen(text), "w.yaml", &err), 0);
    assert_int_equal(b.target.api, API_MESSAGES);
    assert_string_equal(b.target.session_header, "X-Dynamo-Session-ID");
    assert_string_equal(b.target.replica_header, "x-worker-id");
    assert_int_equal(b.target.thinking_tokens, 2048);
    assert_int_equal(config_copy(&copy, &b), 0);
    assert_string_equal(copy.target.session_header, "X-Dynamo-Session-ID");
    assert_string_equal(copy.target.replica_header, "x-worker-id");
    free(text);
    config_free(&a);
    config_free(&b);
    config_free(&copy);
    config_case_load(&a, "limits: {duration: 10s}\ntarget: {api: responses}\n");
    assert_int_equal(a.target.api, API_RESPONSES);
    assert_null(a.target.session_header);
    char *url = config_request_url(&a.target, "http://h:8000/v1/");
    assert_string_equal(url, "http://h:8000/v1/responses");
    free(url);
    config_api_t api;
    assert_int_equal(config_endpoint_api("http://h/v1/messages?beta=true", &api), 0);
    assert_int_equal(api, API_MESSAGES);
    config_free(&a);
}

static void test_config_write_redacts_secret_headers_and_never_holds_keys(void **state) {
    config_t c;
    setenv("OPENAI_API_KEY", "sk-test-should-never-appear", 1);
    load_data_file(&c, "good_full.yaml");
    char *text = config_to_yaml(&c);
    assert_non_null(text);
    assert_null(strstr(text, "abc123")); /* X-Api-Key value */
    assert_null(strstr(text, "sk-test-should-never-appear"));
    assert_non_null(strstr(text, "\"X-Api-Key\": \"<redacted>\""));
    assert_non_null(strstr(text, "\"X-Team\": \"infra\""));
    assert_non_null(strstr(text, "api_key_env: \"OPENAI_API_KEY\""));
    char *wire = config_to_yaml_unredacted(&c);
    assert_non_null(strstr(wire, "\"X-Api-Key\": \"abc123\""));
    free(wire);
    free(text);
    unsetenv("OPENAI_API_KEY");
    config_free(&c);
}

static void test_config_write_yaml_to_stream_matches_string(void **state) {
    config_t c;
    load_data_file(&c, "good_empirical.yaml");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(config_write_yaml(&c, out), 0);
    fclose(out);
    char *text = config_to_yaml(&c);
    assert_string_equal(buf, text);
    free(buf);
    free(text);
    config_free(&c);
}

typedef struct secret_case {
    const char *name;
    bool secret;
} secret_case_t;

static void test_config_header_secrecy_by_name(void **state) {
    static const secret_case_t cases[] = {
        {"Authorization", true}, {"authorization", true},   {"Proxy-Authorization", true},
        {"api-key", true},       {"X-API-Key", true},       {"X-Auth-Token", true},
        {"Cookie", true},        {"X-Client-Secret", true}, {"X-Team", false},
        {"X-Session-ID", false}, {"User-Agent", false},     {"Accept", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (config_header_is_secret(cases[i].name) != cases[i].secret)
            fail_msg("%s: expected secret=%d", cases[i].name, cases[i].secret);
}

static void test_config_set_endpoints_normalises_and_refuses_bad_urls(void **state) {
    config_t c;
    load_data_file(&c, "good_full.yaml");
    char *urls[] = {"http://10.0.0.1:8000/", "https://gw.example/llama/v1", "HTTP://x:1"};
    assert_int_equal(config_set_endpoints(&c, urls, 3), 0);
    assert_int_equal(c.target.n_endpoints, 3);
    assert_string_equal(c.target.endpoints[0], "http://10.0.0.1:8000");
    assert_string_equal(c.target.endpoints[1], "https://gw.example/llama");
    assert_string_equal(c.target.endpoints[2], "HTTP://x:1");
    char *bad[] = {"http://ok:1", "localhost:8000"};
    assert_int_equal(config_set_endpoints(&c, bad, 2), -1);
    assert_int_equal(c.target.n_endpoints, 3); /* unchanged */
    char why[256];
    assert_int_equal(config_endpoint_check("http://", why, sizeof why), -1);
    assert_string_equal(why, "URL 'http://' names no host");
    assert_int_equal(config_endpoint_check("http://a b", why, sizeof why), -1);
    assert_int_equal(config_endpoint_check("http://h/x?q=1", why, sizeof why), -1);
    assert_int_equal(config_set_endpoints(&c, NULL, 0), 0);
    assert_int_equal(c.target.n_endpoints, 0);
    config_free(&c);
}

/* --target twice with the same server (here once with /v1) is refused, naming both URLs: the
 * results would otherwise merge the two into one entry keyed by that URL. */
static void test_config_set_endpoints_refuses_the_same_endpoint_twice(void **state) {
    config_t c;
    load_data_file(&c, "good_full.yaml");
    size_t before = c.target.n_endpoints;
    char *twice[] = {"http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.1:8000/v1"};
    assert_int_equal(config_set_endpoints(&c, twice, 3), -1);
    assert_int_equal(c.target.n_endpoints, before); /* unchanged */
    char why[1024];
    size_t bad = 99;
    assert_int_equal(config_endpoints_check(twice, 3, &bad, why, sizeof why), -1);
    assert_int_equal(bad, 2);
    assert_string_equal(why, "'http://10.0.0.1:8000/v1' is the same endpoint as "
                             "'http://10.0.0.1:8000' (both are http://10.0.0.1:8000 once a "
                             "trailing / or /v1 is dropped); list each endpoint once");
    char *invalid[] = {"http://ok:1", "ftp://x"};
    assert_int_equal(config_endpoints_check(invalid, 2, &bad, why, sizeof why), -1);
    assert_int_equal(bad, 1);
    char *distinct[] = {"http://10.0.0.1:8000", "http://10.0.0.1:8001", "https://10.0.0.1:8000"};
    assert_int_equal(config_endpoints_check(distinct, 3, &bad, why, sizeof why), 0);
    assert_int_equal(config_set_endpoints(&c, distinct, 3), 0);
    assert_int_equal(c.target.n_endpoints, 3);
    config_free(&c);
}

static void test_config_api_key_from_env_and_file(void **state) {
    config_t c;
    config_error_t err;
    char *key = NULL, msg[1024];
    config_case_load(&c, "limits: {max_requests: 1}\ntarget: {api_key_env: STAMPEDE_TEST_KEY}\n");
    setenv("STAMPEDE_TEST_KEY", "sk-from-env", 1);
    assert_int_equal(config_api_key(&c, &key, &err), 0);
    assert_string_equal(key, "sk-from-env");
    free(key);
    unsetenv("STAMPEDE_TEST_KEY");
    assert_int_equal(config_api_key(&c, &key, &err), -1);
    assert_null(key);
    config_error_format(&err, msg, sizeof msg);
    assert_string_equal(msg,
                        "test.yaml: target.api_key_env: environment variable STAMPEDE_TEST_KEY "
                        "is not set");
    config_free(&c);

    char path[] = "/tmp/stampede-test-key-XXXXXX";
    temp_file_write(path, "  sk-from-file \n");
    char yaml[512];
    snprintf(yaml, sizeof yaml, "limits: {max_requests: 1}\ntarget: {api_key_file: %s}\n", path);
    config_case_load(&c, yaml);
    assert_int_equal(config_api_key(&c, &key, &err), 0);
    assert_string_equal(key, "sk-from-file");
    free(key);
    unlink(path);
    assert_int_equal(config_api_key(&c, &key, &err), -1);
    assert_string_equal(err.key, "target.api_key_file");
    assert_non_null(strstr(err.message, "No such file or directory"));
    config_free(&c);

    config_case_load(&c, "limits: {max_requests: 1}\n");
    key = (char *)"sentinel";
    assert_int_equal(config_api_key(&c, &key, &err), 0);
    assert_null(key); /* none configured */
    config_free(&c);
}

static void test_config_mixture_loads_writes_back_and_copies(void **state) {
    config_t a, b, c;
    config_case_load(&a, "limits: {duration: 10s}\nworkload:\n  think_time:\n    dist: mixture\n"
                         "    max: 60s\n    components:\n"
                         "      - {weight: 0.7, dist: uniform, min: 1ms, max: 20ms}\n"
                         "      - {weight: 0.3, dist: pareto, scale: 100ms, alpha: 1.5}\n"
                         "      - {dist: fixed, value: 2s}\n");
    const dist_t *t = &a.workload.think_time;
    assert_int_equal(t->kind, DIST_MIXTURE);
    assert_int_equal(t->n_values, 3);
    assert_float_equal(t->weights[0], 0.7, 0);
    assert_float_equal(t->weights[2], 1.0, 0); /* default weight */
    assert_float_equal(t->components[0].param[DIST_P_MAX], 0.020, 1e-12);
    assert_float_equal(t->components[1].param[DIST_P_SCALE], 0.100, 1e-12);
    assert_float_equal(t->param[DIST_P_MAX], 60.0, 0);
    char *text = config_to_yaml_unredacted(&a);
    assert_non_null(text);
    config_case_load(&b, text);
    assert_config_equal(&a, &b, false);
    assert_int_equal(config_copy(&c, &a), 0);
    assert_config_equal(&a, &c, false);
    free(text);
    config_free(&a);
    config_free(&b);
    config_free(&c);
}

static void test_config_roles_are_named_in_order_and_copied(void **state) {
    config_t a, b;
    config_case_load(
        &a, "limits: {duration: 10s}\nworkload:\n  roles: [planner, executor, aggregator]\n");
    assert_int_equal(a.workload.n_roles, 3);
    assert_string_equal(config_role_name(&a, 0), "planner");
    assert_string_equal(config_role_name(&a, 2), "aggregator");
    assert_null(config_role_name(&a, 3));
    uint32_t index = 9;
    assert_int_equal(config_role_index(&a, "executor", &index), 0);
    assert_int_equal(index, 1);
    assert_int_equal(config_role_index(&a, "critic", &index), 0);
    assert_int_equal(index, 3);
    assert_string_equal(config_role_name(&a, 3), "critic");
    assert_int_equal(config_copy(&b, &a), 0);
    assert_config_equal(&a, &b, false);
    char *text = config_to_yaml(&a);
    assert_non_null(strstr(text, "roles: [\"planner\", \"executor\", \"aggregator\", \"critic\"]"));
    free(text);
    config_free(&a);
    config_free(&b);
}

static void test_config_copy_is_deep_and_equal(void **state) {
    config_t a, b;
    load_data_file(&a, "good_empirical.yaml");
    assert_int_equal(config_copy(&b, &a), 0);
    assert_config_equal(&a, &b, false);
    assert_ptr_not_equal(a.workload.input_tokens.values, b.workload.input_tokens.values);
    assert_ptr_not_equal(a.output.dir, b.output.dir);
    config_free(&a);
    config_free(&b); /* under ASan: no double free, no leak */
}

static void test_config_error_format_without_position_or_key(void **state) {
    config_error_t err = {.file = "x.yaml", .line = 0, .column = 0, .key = "", .message = "boom"};
    char buf[64];
    config_error_format(&err, buf, sizeof buf);
    assert_string_equal(buf, "x.yaml: boom");
    err.line = 3;
    err.column = 7;
    snprintf(err.key, sizeof err.key, "target.api");
    config_error_format(&err, buf, sizeof buf);
    assert_string_equal(buf, "x.yaml:3:7: target.api: boom");
    char small[8];
    config_error_format(&err, small, sizeof small);
    assert_string_equal(small, "x.yaml:");
}

/* Damaged files (bytes replaced, dropped or inserted) load or fail with a message: never a crash
 * (the ASan build checks memory), and whatever loads writes back to something that loads. */
static void test_config_damaged_files_fail_cleanly(void **state) {
    static const char *const names[] = {"good_full.yaml", "good_rate.yaml"};
    static const char noise[] = ":{}[],-#&*!|>'\"%@ \n\t0123456789.smh/~";
    uint64_t x = 88172645463325252ULL;
    for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
        char path[1024], base[4096], buf[4200];
        data_path(path, sizeof path, names[f]);
        FILE *in = fopen(path, "rb");
        assert_non_null(in);
        size_t n = fread(base, 1, sizeof base, in);
        fclose(in);
        for (int round = 0; round < 1500; round++) {
            size_t len = n;
            memcpy(buf, base, n);
            for (int m = 0; m < 3; m++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                size_t at = (size_t)(x >> 8) % len;
                char c = noise[(x >> 40) % (sizeof noise - 1)];
                if (x % 3 == 0) {
                    buf[at] = c;
                } else if (x % 3 == 1) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                } else {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = c;
                    len++;
                }
            }
            config_t c, again;
            config_error_t err;
            if (config_load_string(&c, buf, len, "damaged.yaml", &err) != 0) {
                if (err.message[0] == '\0')
                    fail_msg("round %d of %s failed without a message", round, names[f]);
                continue;
            }
            char *text = config_to_yaml_unredacted(&c);
            if (config_load_string(&again, text, strlen(text), "w.yaml", &err) != 0)
                fail_msg("round %d of %s: written form does not load: %s", round, names[f],
                         err.message);
            free(text);
            config_free(&again);
            config_free(&c);
        }
    }
}

static void test_config_names_match_the_file_grammar(void **state) {
    assert_string_equal(config_api_name(API_COMPLETIONS), "completions");
    assert_string_equal(config_routing_name(ROUTING_LEAST_INFLIGHT), "least_inflight");
    assert_string_equal(config_workload_kind_name(WORKLOAD_CHAT), "chat");
    assert_string_equal(config_scheduler_kind_name(SCHEDULER_RATE), "rate");
    assert_string_equal(config_arrival_name(ARRIVAL_GAMMA), "gamma");
}

static void test_config_reasoning_tags_default_given_off_and_written_back(void **state) {
    config_t c;
    config_case_load(&c, "limits: {duration: 1s}\n");
    assert_string_equal(c.target.reasoning_open, "<think>");
    assert_string_equal(c.target.reasoning_close, "</think>");
    config_free(&c);
    config_case_load(&c, "target:\n  reasoning_tags: [\"[THINK]\", \"[/THINK]\"]\n"
                         "limits: {duration: 1s}\n");
    assert_string_equal(c.target.reasoning_open, "[THINK]");
    assert_string_equal(c.target.reasoning_close, "[/THINK]");
    char *text = config_to_yaml(&c);
    assert_non_null(strstr(text, "reasoning_tags: [\"[THINK]\", \"[/THINK]\"]"));
    config_t again;
    config_case_load(&again, text);
    assert_string_equal(again.target.reasoning_close, "[/THINK]");
    free(text);
    config_free(&again);
    config_free(&c);
    config_case_load(&c, "target:\n  reasoning_tags: []\nlimits: {duration: 1s}\n");
    assert_null(c.target.reasoning_open);
    assert_null(c.target.reasoning_close);
    text = config_to_yaml(&c);
    assert_non_null(strstr(text, "reasoning_tags: []"));
    config_case_load(&again, text);
    assert_null(again.target.reasoning_open);
    free(text);
    config_free(&again);
    config_free(&c);
}

static const message_case_t bad_reasoning_tags[] = {
    {"target:\n  reasoning_tags: [\"<think>\"]\n",
     "bad.yaml:2:19: target.reasoning_tags: expected two tags (the opening and the closing "
     "one) "
     "or none, got 1"},
    {"target:\n  reasoning_tags: \"<think>\"\n",
     "bad.yaml:2:19: target.reasoning_tags: expected [OPEN, CLOSE], e.g. [\"<think>\", "
     "\"</think>\"], or [] to turn the detection off"},
    {"target:\n  reasoning_tags: [\"<t>\", \"<t>\"]\n",
     "bad.yaml:2:19: target.reasoning_tags: the opening and the closing tag are the same"},
    {"target:\n  reasoning_tags: [\"<t>\", \"\"]\n",
     "bad.yaml:2:27: target.reasoning_tags[1]: expected a non-empty string, got ''"},
};

static void test_config_reasoning_tags_refusals(void **state) {
    CONFIG_CASE_REFUSALS(bad_reasoning_tags);
}

UNIT_MAIN(cmocka_unit_test(test_config_bad_files_give_exact_messages),
          cmocka_unit_test(test_config_reasoning_tags_default_given_off_and_written_back),
          cmocka_unit_test(test_config_reasoning_tags_refusals),
          cmocka_unit_test(test_config_error_never_echoes_a_pasted_key),
          cmocka_unit_test(test_config_bad_data_files_give_exact_messages),
          cmocka_unit_test(test_config_directory_is_refused_with_errno_text),
          cmocka_unit_test(test_config_minimal_file_takes_every_default),
          cmocka_unit_test(test_config_full_file_sets_every_key),
          cmocka_unit_test(test_config_empirical_from_file_and_inline_with_weights),
          cmocka_unit_test(test_config_rate_file_bare_numbers_and_no_cap),
          cmocka_unit_test(test_config_null_values_take_defaults),
          cmocka_unit_test(test_config_round_trip_of_data_files),
          cmocka_unit_test(test_config_round_trip_of_every_example),
          cmocka_unit_test(test_config_round_trip_keeps_awkward_values_exact),
          cmocka_unit_test(test_config_api_and_routing_headers_load_and_write_back),
          cmocka_unit_test(test_config_write_redacts_secret_headers_and_never_holds_keys),
          cmocka_unit_test(test_config_write_yaml_to_stream_matches_string),
          cmocka_unit_test(test_config_header_secrecy_by_name),
          cmocka_unit_test(test_config_set_endpoints_normalises_and_refuses_bad_urls),
          cmocka_unit_test(test_config_set_endpoints_refuses_the_same_endpoint_twice),
          cmocka_unit_test(test_config_api_key_from_env_and_file),
          cmocka_unit_test(test_config_copy_is_deep_and_equal),
          cmocka_unit_test(test_config_roles_are_named_in_order_and_copied),
          cmocka_unit_test(test_config_mixture_loads_writes_back_and_copies),
          cmocka_unit_test(test_config_error_format_without_position_or_key),
          cmocka_unit_test(test_config_damaged_files_fail_cleanly),
          cmocka_unit_test(test_config_names_match_the_file_grammar))
