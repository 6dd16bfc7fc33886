/* Veeksha files (common/config_veeksha*.c): each construct of Veeksha's benchmark and
 * capacity-search files maps onto stampede's keys (Veeksha's defaults where a key is left out),
 * what stampede does not act on leaves a note, and what is out of scope (audio, lm-eval, the
 * microbenchmark commands) or wrong is refused naming the file, line and key. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "config_case.h"
#include "config_documents.h"
#include "metrics.h"
#include "temp_file.h"
#include "unit_main.h"

static const char *spec = "session_generator:\n"
                          "  type: synthetic\n"
                          "  session_graph:\n"
                          "    type: linear\n"
                          "    num_request_generator:\n"
                          "      type: uniform\n"
                          "      min: 110\n"
                          "      max: 150\n"
                          "    request_wait_generator:\n"
                          "      type: poisson\n"
                          "      arrival_rate: 31.25\n"
                          "  channels:\n"
                          "    - type: text\n"
                          "      body_length_generator: {type: uniform, min: 400, max: 600}\n"
                          "  output_spec:\n"
                          "    text:\n"
                          "      output_length_generator: {type: uniform, min: 150, max: 250}\n"
                          "traffic_scheduler:\n"
                          "  type: concurrent\n"
                          "  target_concurrent_sessions: 1\n"
                          "runtime:\n"
                          "  max_sessions: 5\n"
                          "seed: 77\n";

static void test_config_veeksha_multiturn_spec_maps_onto_a_chat_workload(void **state) {
    config_t cfg;
    config_case_load(&cfg, spec);
    assert_int_equal(cfg.seed, 77);
    assert_int_equal(cfg.workload.kind, WORKLOAD_CHAT);
    assert_int_equal(cfg.workload.turns.kind, DIST_UNIFORM);
    assert_true(cfg.workload.turns.param[DIST_P_MIN] == 110);
    assert_true(cfg.workload.turns.param[DIST_P_MAX] == 150);
    assert_int_equal(cfg.workload.think_time.kind, DIST_EXPONENTIAL);
    assert_true(fabs(dist_mean(&cfg.workload.think_time) - 0.032) < 1e-12);
    assert_true(cfg.workload.input_tokens.param[DIST_P_MIN] == 400);
    assert_true(cfg.workload.output_tokens.param[DIST_P_MAX] == 250);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_CONCURRENT);
    assert_int_equal(cfg.scheduler.concurrency, 1);
    assert_int_equal(cfg.limits.max_sessions, 5);
    /* written back, it is an ordinary stampede file with the same workload */
    char *text = config_to_yaml(&cfg);
    config_t again;
    config_case_load(&again, text);
    assert_int_equal(again.workload.kind, WORKLOAD_CHAT);
    assert_int_equal(again.limits.max_sessions, 5);
    free(text);
    config_free(&again);
    config_free(&cfg);
}

/* A file of the test's own (Veeksha checks trace paths, and !expand runs are named FILE#k). */
static void write_file(char *path, size_t len, const char *name, const char *text) {
    snprintf(path, len, "/tmp/stampede-test-veeksha-%d-%s", (int)getpid(), name);
    temp_file_write_at(path, text);
}

/* Writes the trace rows to a file (its path into trace) and loads a Veeksha trace session
 * generator over it (generator: its other keys, indented), concurrent, with a 30 s timeout. */
static void load_trace_generator(config_t *cfg, char *trace, size_t len, const char *name,
                                 const char *rows, const char *generator) {
    char yaml[1024];
    write_file(trace, len, name, rows);
    snprintf(yaml, sizeof yaml,
             "session_generator:\n  type: trace\n  trace_file: %s\n%s"
             "traffic_scheduler: {type: concurrent}\nruntime: {benchmark_timeout: 30}\n",
             trace, generator);
    config_case_load(cfg, yaml);
}

static void test_config_veeksha_trace_generator_maps_onto_a_trace_replay(void **state) {
    char trace[256];
    config_t cfg;
    load_trace_generator(&cfg, trace, sizeof trace, "t.jsonl",
                         "{\"session\": 1, \"node\": 1, \"new_input_length\": 4, "
                         "\"output_length\": 2}\n",
                         "  wrap_mode: false\n"
                         "  flavor: {type: timed_synthetic_session, page_size: 16}\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_TRACE);
    assert_int_equal(cfg.workload.trace.format, TRACE_FORMAT_VEEKSHA);
    assert_false(cfg.workload.trace.wrap);
    assert_string_equal(cfg.workload.trace.path, trace);
    assert_int_equal(cfg.limits.duration_ns, 30000000000LL);
    config_free(&cfg);
    unlink(trace);
}

/* Veeksha's untimed_content_multi_turn trace (rows of real conversations) is read as a dataset of
 * JSONL rows replayed as chats; wrap_mode, which a dataset does not do, leaves a note. */
static void test_config_veeksha_content_trace_is_a_dataset_of_chats(void **state) {
    char trace[256];
    config_t cfg;
    load_trace_generator(&cfg, trace, sizeof trace, "c.jsonl",
                         "{\"conversations\": [{\"from\": \"human\", \"value\": \"hi there\"}]}\n",
                         "  flavor: {type: untimed_content_multi_turn}\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_CHAT);
    assert_string_equal(cfg.workload.dataset.path, trace);
    assert_int_equal(cfg.workload.dataset.format, DATASET_FORMAT_JSONL);
    assert_null(cfg.workload.trace.path);
    assert_non_null(cfg.notes);
    assert_non_null(strstr(cfg.notes, "session_generator.wrap_mode: each conversation"));
    config_free(&cfg);
    unlink(trace);
}

/* A file of only a client gets Veeksha's defaults for everything else. */
static void test_config_veeksha_defaults_are_veeksha_s(void **state) {
    config_t cfg;
    config_case_load(&cfg, "client: {model: m}\n");
    assert_int_equal(cfg.seed, 42);
    assert_int_equal(cfg.workload.kind, WORKLOAD_CHAT); /* linear, inherit_history */
    assert_int_equal(cfg.workload.turns.kind, DIST_UNIFORM);
    assert_true(cfg.workload.turns.param[DIST_P_MIN] == 6 &&
                cfg.workload.turns.param[DIST_P_MAX] == 12);
    assert_int_equal(cfg.workload.think_time.kind, DIST_EXPONENTIAL);
    assert_true(fabs(dist_mean(&cfg.workload.think_time) - 1.0) < 1e-12);
    assert_true(cfg.workload.input_tokens.param[DIST_P_MAX] == 12);
    assert_true(cfg.workload.output_tokens.param[DIST_P_MIN] == 6);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_RATE);
    assert_int_equal(cfg.scheduler.arrival, ARRIVAL_POISSON);
    assert_true(cfg.scheduler.rate == 1.0);
    assert_int_equal(cfg.limits.max_sessions, 25);
    assert_int_equal(cfg.limits.duration_ns, 300000000000LL);
    assert_int_equal(cfg.target.timeout_ns, 300000000000LL);
    assert_true(cfg.target.ignore_eos);
    assert_true(cfg.target.max_completion_tokens); /* Veeksha's chat default */
    assert_false(cfg.target.min_tokens);
    assert_true(cfg.output.trace);
    assert_string_equal(cfg.output.dir, "benchmark_output");
    assert_int_equal(cfg.slo.n, 2); /* p99 TTFC 0.5 s, p90 TBC 50 ms */
    assert_string_equal(metrics_name(cfg.slo.items[0].metric), "ttfc");
    assert_true(cfg.slo.items[0].percentile == 99 && cfg.slo.items[0].bound_ns == 500000000);
    assert_string_equal(metrics_name(cfg.slo.items[1].metric), "itl");
    assert_true(cfg.slo.items[1].percentile == 90 && cfg.slo.items[1].bound_ns == 50000000);
    assert_null(cfg.notes);
    config_free(&cfg);
}

static void test_config_veeksha_client_maps_onto_the_target(void **state) {
    config_t cfg;
    config_case_load(&cfg, "client:\n  type: openai_completions\n  model: llama\n"
                           "  api_base: http://10.0.0.5:30002/v1/\n  api_key: sk-1\n"
                           "  request_timeout: 60\n  max_tokens_param: max_tokens\n"
                           "  min_tokens_param: min_tokens\n  ignore_eos: false\n");
    assert_int_equal(cfg.target.api, API_COMPLETIONS);
    assert_string_equal(cfg.target.model, "llama");
    assert_int_equal(cfg.target.n_endpoints, 1);
    assert_string_equal(cfg.target.endpoints[0], "http://10.0.0.5:30002");
    assert_int_equal(cfg.target.timeout_ns, 60000000000LL);
    assert_true(cfg.target.min_tokens);
    assert_false(cfg.target.max_completion_tokens); /* max_tokens_param: max_tokens */
    assert_false(cfg.target.ignore_eos);
    assert_int_equal(cfg.target.n_headers, 1);
    assert_string_equal(cfg.target.headers[0].name, "Authorization");
    assert_string_equal(cfg.target.headers[0].value, "Bearer sk-1");
    config_free(&cfg);
    config_case_load(&cfg, "client:\n  type: openai_chat_completions\n"
                           "  max_tokens_param: max_completion_tokens\n");
    assert_int_equal(cfg.target.api, API_CHAT);
    assert_true(cfg.target.max_completion_tokens);
    assert_null(cfg.notes);
    config_free(&cfg);
}

static void test_config_veeksha_traffic_scheduler_maps_intervals_rampup_and_cancel(void **state) {
    config_t cfg;
    config_case_load(&cfg, "traffic_scheduler:\n  type: rate\n  interval_generator:\n"
                           "    type: gamma\n    arrival_rate: 8\n    cv: 2\n");
    assert_true(cfg.scheduler.rate == 8 && cfg.scheduler.arrival_cv == 2);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_RATE);
    assert_int_equal(cfg.scheduler.arrival, ARRIVAL_GAMMA);
    config_free(&cfg);
    config_case_load(&cfg, "traffic_scheduler:\n  type: rate\n"
                           "  interval_generator: {type: fixed, interval: 0.25}\n");
    assert_int_equal(cfg.scheduler.arrival, ARRIVAL_CONSTANT);
    assert_true(cfg.scheduler.rate == 4);
    config_free(&cfg);
    config_case_load(&cfg, "traffic_scheduler:\n  type: concurrent\n"
                           "  target_concurrent_sessions: 7\n  rampup_seconds: 5\n"
                           "  cancel_session_on_failure: false\n");
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_CONCURRENT);
    assert_int_equal(cfg.scheduler.concurrency, 7);
    assert_int_equal(cfg.scheduler.ramp_up_ns, 5000000000LL);
    assert_string_equal(cfg.notes, "test.yaml:5:30: traffic_scheduler.cancel_session_on_failure: "
                                   "false: stampede still ends a session at its first failed "
                                   "request (true is its only behaviour)\n");
    config_free(&cfg);
    config_case_load(&cfg, "traffic_scheduler: {type: concurrent}\n");
    assert_int_equal(cfg.scheduler.concurrency, 3); /* Veeksha's defaults */
    assert_int_equal(cfg.scheduler.ramp_up_ns, 10000000000LL);
    config_free(&cfg);
}

static void test_config_veeksha_session_graphs_map_onto_workload_kinds(void **state) {
    config_t cfg;
    config_case_load(&cfg, "session_generator:\n  type: synthetic\n"
                           "  session_graph: {type: single_request}\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_REQUESTS);
    config_free(&cfg);
    config_case_load(&cfg, "session_generator:\n  session_graph:\n    type: linear\n"
                           "    inherit_history: false\n"
                           "    num_request_generator: {type: fixed, value: 3}\n"
                           "    request_wait_generator: {type: fixed, interval: 0.5}\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_GRAPH);
    assert_int_equal(cfg.workload.graph.shape, GRAPH_LINEAR);
    assert_true(cfg.workload.graph.length.param[DIST_P_VALUE] == 3);
    assert_true(cfg.workload.graph.nodes[0].history == 0);
    assert_true(dist_mean(&cfg.workload.graph.nodes[0].wait_after_ready) == 0.5);
    config_free(&cfg);
    config_case_load(&cfg, "session_generator:\n  session_graph:\n    type: branching\n"
                           "    num_layers_generator: {type: uniform, min: 3, max: 5}\n"
                           "    layer_width_generator: {type: fixed, value: 2}\n"
                           "    fan_in_generator: {type: fixed, value: 1}\n"
                           "    inherit_history: true\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_GRAPH);
    assert_int_equal(cfg.workload.graph.shape, GRAPH_BRANCHING);
    assert_true(cfg.workload.graph.depth.param[DIST_P_MIN] == 2); /* layers after the root */
    assert_true(cfg.workload.graph.depth.param[DIST_P_MAX] == 4);
    assert_true(cfg.workload.graph.width_given);
    assert_true(cfg.workload.graph.width.param[DIST_P_VALUE] == 2);
    assert_true(cfg.workload.graph.fan_out.param[DIST_P_MAX] == 2); /* Veeksha's default 1..2 */
    assert_true(cfg.workload.graph.nodes[0].history == 1);
    assert_null(cfg.notes);
    config_free(&cfg);
}

static void test_config_veeksha_shared_prefix_is_a_shared_system_prompt(void **state) {
    config_t cfg;
    config_case_load(&cfg, "session_generator:\n  channels:\n    - type: text\n"
                           "      shared_prefix_ratio: 0.2\n      shared_prefix_probability: 0.5\n"
                           "      body_length_generator: {type: uniform, min: 20, max: 30}\n");
    assert_int_equal(cfg.workload.system_prompt_tokens, 5); /* 0.2 x 25 */
    assert_true(cfg.workload.input_tokens.param[DIST_P_MIN] == 16);
    assert_true(cfg.workload.input_tokens.param[DIST_P_MAX] == 24);
    assert_string_equal(cfg.notes, "test.yaml:5:34: "
                                   "session_generator.channels[0].shared_prefix_probability: "
                                   "every session shares the prefix (stampede's system prompt), "
                                   "not a share 0.5 of them\n");
    config_free(&cfg);
}

static void test_config_veeksha_runtime_evaluators_recorder_and_outputs(void **state) {
    config_t cfg;
    config_case_load(&cfg, "runtime: {max_sessions: -1, benchmark_timeout: 10}\n"
                           "trace_recorder: {enabled: false, include_content: true}\n"
                           "output_dir: out/v\n"
                           "wandb: {enabled: true, project: veeksha}\n"
                           "server: {type: vllm, port: 30003}\n"
                           "evaluators:\n  - type: performance\n    slos:\n"
                           "      - {name: a, metric: tbc, percentile: 0.95, value: 0.05}\n"
                           "      - {metric: e2e, percentile: 1, value: 10, type: constant}\n");
    assert_int_equal(cfg.limits.max_sessions, 0);
    assert_int_equal(cfg.limits.duration_ns, 10000000000LL);
    assert_false(cfg.output.trace);
    assert_string_equal(cfg.output.dir, "out/v");
    assert_int_equal(cfg.slo.n, 2);
    assert_string_equal(metrics_name(cfg.slo.items[0].metric), "itl");
    assert_int_equal(cfg.slo.items[0].stat, CONFIG_SLO_PERCENTILE);
    assert_true(fabs(cfg.slo.items[0].percentile - 95) < 1e-9);
    assert_int_equal(cfg.slo.items[0].bound_ns, 50000000);
    assert_string_equal(metrics_name(cfg.slo.items[1].metric), "e2e");
    assert_int_equal(cfg.slo.items[1].stat, CONFIG_SLO_MAX);
    assert_string_equal(cfg.notes,
                        "test.yaml:4:1: wandb: Weights & Biases logging is not mapped; ignored\n");
    assert_string_equal(cfg.managed_server,
                        "test.yaml:5:1: server: a managed vllm server (Veeksha starts it)");
    config_free(&cfg);
}

/* !expand on the scheduler's knob is a sweep; on any other key, one run per value (FILE#k). */
static void test_config_veeksha_expand_is_sweep_levels_and_runs(void **state) {
    config_t cfg;
    config_case_load(&cfg, "traffic_scheduler:\n  type: rate\n  interval_generator:\n"
                           "    type: poisson\n    arrival_rate: !expand [5, 10]\n"
                           "runtime: {benchmark_timeout: 60}\n");
    assert_int_equal(cfg.sweep.axis, SWEEP_AXIS_RATE);
    assert_int_equal(cfg.sweep.n_levels, 2);
    assert_true(cfg.sweep.levels[0] == 5 && cfg.sweep.levels[1] == 10);
    assert_int_equal(cfg.sweep.snapshot_ns, 60000000000LL);
    assert_int_equal(cfg.limits.duration_ns, 0);
    config_free(&cfg);
    char path[256], run[300];
    write_file(path, sizeof path, "expand.yml",
               "traffic_scheduler:\n  type: concurrent\n  target_concurrent_sessions: !expand [4, "
               "8]\nsession_generator:\n  channels:\n    - type: text\n      body_length_generator:"
               "\n        type: fixed\n        value: !expand [512, 1024, 2048]\n"
               "  output_spec:\n    text:\n      output_length_generator: {type: fixed, value: "
               "!expand [1, 2]}\nruntime: {max_sessions: 32, benchmark_timeout: 60}\n");
    assert_int_equal(config_file_documents(path), 6);
    config_error_t err;
    snprintf(run, sizeof run, "%s#4", path); /* 1024 tokens, 2 out */
    assert_int_equal(config_load_file(&cfg, run, &err), 0);
    assert_true(cfg.workload.input_tokens.param[DIST_P_VALUE] == 1024);
    assert_true(cfg.workload.output_tokens.param[DIST_P_VALUE] == 2);
    assert_int_equal(cfg.sweep.axis, SWEEP_AXIS_CONCURRENCY);
    assert_true(cfg.sweep.levels[0] == 4 && cfg.sweep.levels[1] == 8);
    config_free(&cfg);
    unlink(path);
}

static void test_config_veeksha_capacity_search_maps_onto_the_capacity_section(void **state) {
    config_t cfg;
    config_case_load(&cfg, "output_dir: cap\nstart_value: 5\nmax_value: 100\n"
                           "expansion_factor: 3\nmax_iterations: 7\nprecision: 2\n"
                           "benchmark_config:\n  traffic_scheduler:\n    type: rate\n"
                           "    interval_generator: {type: gamma}\n"
                           "  runtime: {max_sessions: -1, benchmark_timeout: 10}\n");
    assert_true(cfg.capacity.given);
    assert_int_equal(cfg.capacity.axis, CAPACITY_AXIS_RATE);
    assert_true(cfg.capacity.start == 5 && cfg.capacity.max == 100);
    assert_true(fabs(cfg.capacity.precision - 0.01) < 1e-12);
    assert_false(cfg.capacity.precision_relative);
    assert_true(cfg.capacity.expansion == 3);
    assert_int_equal(cfg.capacity.max_trials, 7);
    assert_int_equal(cfg.scheduler.arrival, ARRIVAL_GAMMA);
    assert_int_equal(cfg.limits.duration_ns, 10000000000LL);
    assert_string_equal(cfg.output.dir, "cap");
    assert_int_equal(cfg.slo.n, 2); /* Veeksha's default SLOs judge each level */
    /* written back, the capacity section keeps the expansion and the runs */
    char *text = config_to_yaml(&cfg);
    config_t again;
    config_case_load(&again, text);
    assert_true(again.capacity.expansion == 3 && again.capacity.max_trials == 7);
    free(text);
    config_free(&again);
    config_free(&cfg);
    config_case_load(&cfg, "start_value: 10\nmax_value: 20\nbenchmark_config:\n"
                           "  traffic_scheduler: {type: concurrent}\n"
                           "  runtime: {benchmark_timeout: 10}\n");
    assert_int_equal(cfg.capacity.axis, CAPACITY_AXIS_CONCURRENCY);
    assert_true(cfg.capacity.precision == 1);
    assert_int_equal(cfg.scheduler.ramp_up_ns, 0); /* the search sets it per level in Veeksha */
    config_free(&cfg);
}

static const message_case_t out_of_scope_files[] = {
    {"model: m\napi_base: http://h/v1\ninput_lengths: [512]\nbatch_sizes: [1, 2]\n",
     "bad.yaml:3:1: input_lengths: a file for `veeksha decode` (its decode microbenchmark "
     "over input_lengths x batch_sizes), out of scope: stampede runs the files of `veeksha "
     "benchmark` (stampede run FILE) and `veeksha capacity-search` (stampede capacity FILE)"},
    {"model: m\ninput_lengths: [128, 256]\nsamples_per_length: 10\noutput_tokens: 1\n",
     "bad.yaml:2:1: input_lengths: a file for `veeksha prefill` (its prefill microbenchmark "
     "over input_lengths), out of scope: stampede runs the files of `veeksha benchmark` "
     "(stampede run FILE) and `veeksha capacity-search` (stampede capacity FILE)"},
    {"client: {type: stt, provider: deepgram_nova}\n",
     "bad.yaml:1:16: client.type: a stt client: audio (speech-to-text and text-to-speech) "
     "is out of scope: stampede drives text LLM endpoints (/v1/chat/completions, "
     "/v1/completions)"},
    {"client: {type: streaming_tts}\n",
     "bad.yaml:1:16: client.type: a streaming_tts client: audio (speech-to-text and "
     "text-to-speech) is out of scope: stampede drives text LLM endpoints "
     "(/v1/chat/completions, /v1/completions)"},
    {"session_generator: {type: trace, flavor: {type: seed_tts_text}}\n",
     "bad.yaml:1:49: session_generator.flavor.type: an audio trace flavor: audio "
     "(speech-to-text and text-to-speech) is out of scope: stampede drives text LLM "
     "endpoints (/v1/chat/completions, /v1/completions)"},
    {"evaluators:\n  - type: performance\n  - type: audio_quality\n",
     "bad.yaml:3:11: evaluators[1].type: an audio_quality evaluator: audio (speech-to-text "
     "and text-to-speech) is out of scope: stampede drives text LLM endpoints "
     "(/v1/chat/completions, /v1/completions)"},
    {"session_generator: {type: lmeval, tasks: [triviaqa]}\n",
     "bad.yaml:1:27: session_generator.type: lmeval sessions: lm-eval accuracy evaluation is "
     "out of scope: stampede measures serving performance, not task accuracy"},
    {"evaluators:\n  - type: performance\n  - type: accuracy_lmeval\n",
     "bad.yaml:3:11: evaluators[1].type: an accuracy_lmeval evaluator: lm-eval accuracy "
     "evaluation is out of scope: stampede measures serving performance, not task "
     "accuracy"},
    {"session_generator: {channels: [{type: audio}]}\n",
     "bad.yaml:1:39: session_generator.channels[0].type: audio channels are out of scope: "
     "stampede sends text prompts to LLM endpoints"},
    {"evaluators: [{slos: [{metric: interactivity, value: 1}]}]\n",
     "bad.yaml:1:31: evaluators[0].slos[0].metric: 'interactivity' is not a text metric "
     "stampede measures (ttfc, tbc, tpot, e2e); audio metrics are out of scope"},
};

/* Out of scope: named as such, with the Veeksha command a microbenchmark file belongs to. */
static void test_config_veeksha_refuses_out_of_scope_files_saying_what(void **state) {
    CONFIG_CASE_REFUSALS(out_of_scope_files);
}

static const message_case_t unmapped_keys[] = {
    {"session_generator: {type: synthetic, session_graph: {type: linear, "
     "num_request_generator: {type: fixed, value: 3}}}\nruntime: {max_sesions: 5}\n",
     "bad.yaml:2:11: runtime.max_sesions: unknown key 'max_sesions'; did you mean "
     "'max_sessions'?"},
    {"session_generator:\n  type: synthetic\n  session_graph:\n    type: tree\n",
     "bad.yaml:4:11: session_generator.session_graph.type: expected one of linear, "
     "single_request, branching, got 'tree'"},
    {"session_generator:\n  session_graph:\n    type: linear\n"
     "    num_request_generator: {type: poisson, arrival_rate: 2}\n",
     "bad.yaml:4:35: session_generator.session_graph.num_request_generator.type: expected "
     "one of fixed, uniform, normal, fixed_stair, inverse_gaussian, zipf, stair, got "
     "'poisson'"},
    {"runtime: {max_sessions: -1, benchmark_timeout: -1}\n",
     "bad.yaml:1:10: runtime: max_sessions -1 and benchmark_timeout -1 leave the run "
     "unbounded; stampede refuses an unbounded run against a shared server"},
    {"session_generator:\n  type: trace\n  trace_file: no/such.jsonl\n",
     "bad.yaml:3:15: session_generator.trace_file: cannot read the trace 'no/such.jsonl' "
     "(no/such.jsonl): No such file or directory"},
    {"traffic_scheduler: {type: sequential_launch}\n",
     "bad.yaml:1:27: traffic_scheduler.type: sequential_launch is not mapped: stampede has "
     "no launch ordering across sessions in flight (use rate or concurrent)"},
    {"session_generator:\n  session_graph: {type: branching, single_root: false}\n",
     "bad.yaml:2:49: session_generator.session_graph.single_root: false is not mapped: "
     "stampede's branching graphs have one root"},
    {"client: {additional_sampling_params: '{\"temperature\": 0}'}\n",
     "bad.yaml:1:38: client.additional_sampling_params: extra sampling parameters are not "
     "mapped: stampede's requests carry only the limit, min_tokens and ignore_eos"},
    {"session_generator:\n  channels: [{type: text, body_length_generator: {type: "
     "fixed_stair, values: [8x]}}]\n",
     "bad.yaml:2:79: session_generator.channels[0].body_length_generator.values[0]: "
     "expected a number, got '8x'"},
    {"start_value: 2.6\nmax_value: 2.9\nbenchmark_config: {traffic_scheduler: {type: "
     "concurrent}}\n",
     "bad.yaml:2:12: max_value: expected 0 < start_value <= max_value, got 3 and 2"},
    {"start_value: 1\nbenchmark_config:\n  traffic_scheduler: {type: rate, "
     "interval_generator: {type: poisson, arrival_rate: !expand [1, 2]}}\n",
     "bad.yaml:3:85: !expand: a capacity search varies its scheduler's knob itself; !expand "
     "is for `veeksha benchmark` files"},
};

static void test_config_veeksha_refuses_what_it_does_not_map_with_line_and_key(void **state) {
    CONFIG_CASE_REFUSALS(unmapped_keys);
}

UNIT_MAIN(cmocka_unit_test(test_config_veeksha_multiturn_spec_maps_onto_a_chat_workload),
          cmocka_unit_test(test_config_veeksha_trace_generator_maps_onto_a_trace_replay),
          cmocka_unit_test(test_config_veeksha_content_trace_is_a_dataset_of_chats),
          cmocka_unit_test(test_config_veeksha_defaults_are_veeksha_s),
          cmocka_unit_test(test_config_veeksha_client_maps_onto_the_target),
          cmocka_unit_test(test_config_veeksha_traffic_scheduler_maps_intervals_rampup_and_cancel),
          cmocka_unit_test(test_config_veeksha_session_graphs_map_onto_workload_kinds),
          cmocka_unit_test(test_config_veeksha_shared_prefix_is_a_shared_system_prompt),
          cmocka_unit_test(test_config_veeksha_runtime_evaluators_recorder_and_outputs),
          cmocka_unit_test(test_config_veeksha_expand_is_sweep_levels_and_runs),
          cmocka_unit_test(test_config_veeksha_capacity_search_maps_onto_the_capacity_section),
          cmocka_unit_test(test_config_veeksha_refuses_out_of_scope_files_saying_what),
          cmocka_unit_test(test_config_veeksha_refuses_what_it_does_not_map_with_line_and_key))
