/* `stampede mock`: its flags (a table of them, each naming the field of mock_options_t it sets),
 * the --help text, then the server until SIGTERM or SIGINT. */
#include "mock_cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_mock.h"
#include "mock.h"
#include "mock_profiles.h"

typedef enum mock_option_kind {
    OPT_STRING,   /* char[size] at offset */
    OPT_PORT,     /* int 0..65535 */
    OPT_U32,      /* uint32_t >= 1 */
    OPT_U32_ANY,  /* uint32_t >= 0 */
    OPT_U64,      /* uint64_t >= 1 */
    OPT_SIZE,     /* size_t >= 1 */
    OPT_MS,       /* double >= 0 */
    OPT_RATE,     /* double in [0, 1] */
    OPT_STATUS,   /* int 100..599 */
    OPT_DIST,     /* dist_t via dist_parse_spec */
    OPT_FLAG,     /* bool set to true, no value */
    OPT_FLAG_OFF, /* bool set to false, no value */
    OPT_HELP,
    OPT_FAULTS, /* mock_faults_t via mock_faults_parse */
} mock_option_kind_t;

typedef struct mock_option {
    const char *name;
    mock_option_kind_t kind;
    size_t offset;
    size_t size;
    const char *arg;
    const char *help;
} mock_option_t;

#define F(field) offsetof(mock_options_t, field), sizeof(((mock_options_t *)0)->field)

static const mock_option_t mock_option_table[] = {
    {"--port", OPT_PORT, F(port), "N", "TCP port; 0 picks a free one (default 8000)"},
    {"--bind", OPT_STRING, F(bind), "ADDR", "IPv4 address to listen on (default 127.0.0.1)"},
    {"--model", OPT_STRING, F(model), "NAME", "served model name (default mock-llama)"},
    {"--strict-model", OPT_FLAG, F(strict_model), NULL,
     "answer 404 to requests naming another model, as vLLM does"},
    {"--seed", OPT_U64, F(seed), "N", "seed of reply words, lengths and faults (default 0)"},
    {"--profile", OPT_STRING, F(profile), "NAME", "engine profile (see below; default: default)"},
    {"--ttft-ms", OPT_MS, F(ttft_ms), "MS",
     "fixed mode: first token MS after the request arrives, whatever the load"},
    {"--itl-ms", OPT_MS, F(itl_ms), "MS", "fixed mode: then one token every MS"},
    {"--max-num-seqs", OPT_U32, F(max_num_seqs), "N", "sequences running at most"},
    {"--max-num-batched-tokens", OPT_U32, F(max_num_batched_tokens), "N",
     "prefill + decode tokens per engine step at most (chunked prefill)"},
    {"--max-model-len", OPT_U32, F(max_model_len), "N",
     "prompt + max_tokens above this is refused with HTTP 400"},
    {"--kv-cache-tokens", OPT_U64, F(kv_cache_tokens), "N",
     "KV pool in tokens (16-token blocks); running sequences and cached prefixes share it"},
    {"--prefix-cache-tokens", OPT_U64, F(prefix_cache_tokens), "N",
     "cap of the prefix cache (default: the whole KV pool)"},
    {"--no-prefix-cache", OPT_FLAG_OFF, F(prefix_cache), NULL, "disable prefix caching"},
    {"--tpot-base-ms", OPT_MS, F(tpot_base_ms), "MS",
     "engine step time per sequence: step = fixed + MS x running^alpha + prefill"},
    {"--alpha", OPT_MS, F(alpha), "A", "step time grows as running^A"},
    {"--step-fixed-ms", OPT_MS, F(step_fixed_ms), "MS",
     "engine step time whatever the batch (reading the weights)"},
    {"--spec-tokens", OPT_U32_ANY, F(spec_tokens), "K",
     "speculative decoding: K draft tokens per step, so a streamed chunk carries 1 to K+1 "
     "tokens (0 = off)"},
    {"--spec-acceptance", OPT_RATE, F(spec_acceptance), "P",
     "probability a draft token is accepted when the one before it was"},
    {"--spec-draft-ms", OPT_MS, F(spec_draft_ms), "MS", "drafter time per draft token per step"},
    {"--spec-verify-weight", OPT_MS, F(spec_verify_weight), "W",
     "a verified draft token counts W sequences in the step time's running^alpha"},
    {"--prefill-tokens-per-s", OPT_MS, F(prefill_tokens_per_s), "R",
     "prefill speed added to a step's time (0 = free)"},
    {"--ttft-overhead-ms", OPT_MS, F(ttft_overhead_ms), "MS",
     "fixed latency before a request reaches the scheduler (API server, tokenizer)"},
    {"--output-len", OPT_DIST, F(output_len), "SPEC",
     "reply length of requests without max_tokens, e.g. 256 or lognormal:mean=300,sigma=0.5 "
     "(default 256)"},
    {"--early-eos", OPT_FLAG, F(early_eos), NULL,
     "--output-len also ends replies that set max_tokens (unless ignore_eos)"},
    {"--reasoning-tokens", OPT_DIST, F(reasoning), "SPEC",
     "chat, messages, responses: stream this many reasoning tokens before the answer"},
    {"--max-body-bytes", OPT_SIZE, F(max_body_bytes), "N",
     "larger request bodies get HTTP 413 (default 67108864)"},
    {"--flat-errors", OPT_FLAG, F(flat_errors), NULL,
     "error bodies in older vLLM's flat {\"object\":\"error\",\"message\",...} shape instead of "
     "OpenAI's {\"error\": {\"message\",\"type\",\"param\",\"code\"}}"},
    {"--no-sent-ns", OPT_FLAG_OFF, F(sent_ns), NULL,
     "streamed chunks without the mock's own \"sent_ns\" field (their write time, which "
     "bench_engine reads for the client's delay), byte for byte as vLLM sends them"},
    {"--fail-rate", OPT_RATE, F(fail_rate), "P", "answer this fraction of requests with an error"},
    {"--fail-status", OPT_STATUS, F(fail_status), "CODE", "status of --fail-rate (default 500)"},
    {"--reset-after-tokens", OPT_U32_ANY, F(reset_after_tokens), "N",
     "reset the connection (TCP RST) after N streamed tokens"},
    {"--reset-rate", OPT_RATE, F(reset_rate), "P",
     "fraction of requests --reset-after-tokens hits (default 1)"},
    {"--stall-ms", OPT_MS, F(stall_ms), "MS", "pause the stream for MS mid-way"},
    {"--stall-after-tokens", OPT_U32_ANY, F(stall_after_tokens), "N",
     "where the pause starts (default 1: after the first token)"},
    {"--stall-rate", OPT_RATE, F(stall_rate), "P", "fraction of requests that stall (default 1)"},
    {"--malformed-rate", OPT_RATE, F(malformed_rate), "P",
     "fraction of streams with one chunk of broken JSON mid-way"},
    {"--faults", OPT_FAULTS, F(faults), "SPEC",
     "inject faults: a comma-separated list of KIND[:P] (probability per request, default 1) or "
     "KIND@N (every Nth request; refused counts connections), with /MS for stall and "
     "slow-headers, e.g. 500:0.02,429:0.01,reset-mid:0.01,not-sse@50. Kinds: 500, 503, 429, "
     "context-length, refused, reset-headers, reset-mid, stall, malformed, truncated, no-done, "
     "slow-headers, event-error, not-sse; each lands in its own error class of stampede's "
     "results (docs/mock.md)"},
    {"--help", OPT_HELP, 0, 0, NULL, "this text"},
};

#define N_OPTIONS (sizeof(mock_option_table) / sizeof(mock_option_table[0]))

/* Prints text from column indent, wrapped at 100 columns. */
static void mock_options_wrap(FILE *out, const char *text, int indent) {
    int col = indent;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, ' ');
        int len = end ? (int)(end - p) : (int)strlen(p);
        if (col > indent && col + 1 + len > 100) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", len, p);
        col += len;
        p += len;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

/* One cell of the fit table: reference, model, error; "-" where the reference has none, a "*"
 * before an error the profile's test does not hold (tolerance 0). */
static void mock_options_fit_cell(FILE *out, double ref, double model, double tolerance,
                                  int precision) {
    if (ref > 0)
        fprintf(out, " %7.*f %7.*f %c%+5.0f%%", precision, ref, precision, model,
                tolerance > 0 ? ' ' : '*', 100 * (model / ref - 1));
    else
        fprintf(out, " %7s %7.*f %7s", "-", precision, model, "-");
}

/* The profile's reference next to its model at every calibration point (ms). */
static void mock_options_fit_table(FILE *out, const mock_profile_t *p) {
    fprintf(out, "%17s%4s    %-24s%-24s%s\n", "", "", p->ttft_is_median ? "TTFT p50" : "TTFT mean",
            p->tpot_is_median ? "TPOT p50" : "TPOT mean", "TPOT p95");
    fprintf(out, "%17s%4s%s%s%s\n", "", "c", "     ref   model     err", "     ref   model     err",
            "     ref   model     err");
    for (uint32_t k = 0; k < p->n_points; k++) {
        const mock_profile_point_t *pt = &p->points[k];
        fprintf(out, "%17s%4u", "", pt->concurrency);
        mock_options_fit_cell(out, pt->ttft_ms, pt->fit_ttft_ms, pt->ttft_tolerance, 0);
        mock_options_fit_cell(out, pt->tpot_ms, pt->fit_tpot_ms, pt->tpot_tolerance, 1);
        mock_options_fit_cell(out, pt->tpot_p95_ms, pt->fit_tpot_p95_ms, pt->tpot_p95_tolerance, 1);
        fputc('\n', out);
    }
}

void mock_cli_usage(FILE *out) {
    fprintf(out, "usage: stampede mock [OPTIONS]\n\n"
                 "A simulated OpenAI-compatible inference server (vLLM-shaped): POST\n"
                 "/v1/chat/completions and /v1/completions (streaming or not), GET /v1/models,\n"
                 "/health and /metrics. Prints 'listening on ADDR:PORT' once it accepts.\n"
                 "Without --ttft-ms/--itl-ms it simulates an engine (continuous batching, KV\n"
                 "budget, chunked prefill, prefix cache) with the timings of --profile.\n"
                 "SIGTERM or SIGINT stop it (exit 0). Details: docs/mock.md.\n\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const mock_option_t *o = &mock_option_table[i];
        char left[64];
        snprintf(left, sizeof(left), "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(out, "  %-30s ", left);
        mock_options_wrap(out, o->help, 33);
    }
    fprintf(out, "  %-30s ", "--profile-file FILE");
    mock_options_wrap(out,
                      "the engine of a profile file (`stampede calibrate` writes one: its mock: "
                      "section, as a workload file's), under the flags given here",
                      33);
    fprintf(out, "\nprofiles (--profile NAME; the flags above override a profile's values):\n");
    for (size_t i = 0; mock_profile_at(i); i++) {
        const mock_profile_t *p = mock_profile_at(i);
        char text[768];
        int n = snprintf(text, sizeof(text),
                         "%s. max_num_seqs %u, max_model_len %u, KV %llu tokens, step %.4g ms + "
                         "%.4g ms x running^%.2f + prefill at %.0f tokens/s, overhead %.0f ms",
                         p->summary, p->max_num_seqs, p->max_model_len,
                         (unsigned long long)p->kv_cache_tokens, p->step_fixed_ms, p->tpot_base_ms,
                         p->alpha, p->prefill_tokens_per_s, p->ttft_overhead_ms);
        if (p->spec_tokens && n > 0 && (size_t)n < sizeof(text))
            n += snprintf(text + n, sizeof(text) - (size_t)n,
                          "; speculative decoding: %u drafts at %.4g ms, acceptance %.2f",
                          p->spec_tokens, p->spec_draft_ms, p->spec_acceptance);
        if (p->n_points && n > 0 && (size_t)n < sizeof(text))
            snprintf(text + n, sizeof(text) - (size_t)n, ". Fitted on %s:", p->source);
        else if (n > 0 && (size_t)n < sizeof(text))
            snprintf(text + n, sizeof(text) - (size_t)n, ".");
        if (strlen(p->name) > 14)
            fprintf(out, "  %s\n%17s", p->name, "");
        else
            fprintf(out, "  %-14s ", p->name);
        mock_options_wrap(out, text, 17);
        if (p->n_points)
            mock_options_fit_table(out, p);
    }
    fprintf(out, "\nFit tables: virtual-time replay of the reference's load (ms; * = shown, not "
                 "held by\ntests/unit/test_mock_profiles.c). docs/mock.md says how each was "
                 "derived.\n");
}

static const mock_option_t *mock_option_find(const char *arg, size_t len) {
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (strlen(mock_option_table[i].name) == len &&
            !strncmp(mock_option_table[i].name, arg, len))
            return &mock_option_table[i];
    return NULL;
}

/* What each numeric kind accepts. */
static const struct {
    double min, max;
    bool integer;
} mock_option_ranges[] = {
    [OPT_PORT] = {0, 65535, true},
    [OPT_U32] = {1, UINT32_MAX, true},
    [OPT_U32_ANY] = {0, UINT32_MAX, true},
    [OPT_U64] = {0, 9007199254740992.0, true}, /* 2^53: every integer up to it is exact */
    [OPT_SIZE] = {1, 1e15, true},
    [OPT_MS] = {0, 1e12, false},
    [OPT_RATE] = {0, 1, false},
    [OPT_STATUS] = {100, 599, true},
};

/* Parses value within o's kind's range and stores it in field as that kind's C type. */
static int mock_option_number(const mock_option_t *o, const char *value, char *field, char *err,
                              size_t errlen) {
    double min = mock_option_ranges[o->kind].min, max = mock_option_ranges[o->kind].max;
    bool integer = mock_option_ranges[o->kind].integer;
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || errno || !isfinite(v) || v < min || v > max ||
        (integer && v != floor(v))) {
        snprintf(err, errlen, "%s: expected %s in [%.15g, %.15g], got '%s'", o->name,
                 integer ? "an integer" : "a number", min, max, value);
        return -1;
    }
    if (o->kind == OPT_PORT || o->kind == OPT_STATUS)
        *(int *)field = (int)v;
    else if (o->kind == OPT_U32 || o->kind == OPT_U32_ANY)
        *(uint32_t *)field = (uint32_t)v;
    else if (o->kind == OPT_U64)
        *(uint64_t *)field = (uint64_t)v;
    else if (o->kind == OPT_SIZE)
        *(size_t *)field = (size_t)v;
    else
        *(double *)field = v;
    return 0;
}

static int mock_option_set(mock_options_t *self, const mock_option_t *o, const char *value,
                           char *err, size_t errlen) {
    char *field = (char *)self + o->offset;
    switch (o->kind) {
    case OPT_STRING:
        if (strlen(value) == 0 || strlen(value) >= o->size) {
            snprintf(err, errlen, "%s: expected 1 to %zu characters, got '%s'", o->name,
                     o->size - 1, value);
            return -1;
        }
        memcpy(field, value, strlen(value) + 1);
        return 0;
    case OPT_PORT:
    case OPT_U32:
    case OPT_U32_ANY:
    case OPT_U64:
    case OPT_SIZE:
    case OPT_MS:
    case OPT_RATE:
    case OPT_STATUS:
        return mock_option_number(o, value, field, err, errlen);
    case OPT_DIST: {
        dist_t parsed;
        char why[256];
        dist_init(&parsed);
        if (dist_parse_spec(value, &parsed, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "%s: %s", o->name, why);
            dist_clear(&parsed);
            return -1;
        }
        dist_clear((dist_t *)field);
        *(dist_t *)field = parsed;
        if (field == (char *)&self->reasoning)
            self->reasoning_set = true;
        return 0;
    }
    case OPT_FLAG:
    case OPT_FLAG_OFF:
        *(bool *)field = o->kind == OPT_FLAG;
        return 0;
    case OPT_HELP:
        return 0;
    case OPT_FAULTS:
        return mock_faults_parse((mock_faults_t *)field, value, err, errlen);
    }
    return 0;
}

/* Splits "--name=value" or "--name value"; *value is NULL when a value is missing. */
static const mock_option_t *mock_options_next(int argc, char **argv, int *i, const char **value,
                                              char *err, size_t errlen) {
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const mock_option_t *o = mock_option_find(arg, name_len);
    if (!o) {
        snprintf(err, errlen, "unknown option '%s' (stampede mock --help lists them)", arg);
        return NULL;
    }
    bool takes_value = o->arg != NULL;
    if (!takes_value && eq) {
        snprintf(err, errlen, "%s takes no value", o->name);
        return NULL;
    }
    *value = NULL;
    if (takes_value) {
        if (eq)
            *value = eq + 1;
        else if (*i + 1 < argc)
            *value = argv[++*i];
        else {
            snprintf(err, errlen, "%s needs a value (%s)", o->name, o->arg);
            return NULL;
        }
    }
    return o;
}

/* The index of --profile-file in argv (its value in *path), or 0. */
static int mock_cli_profile_file(int argc, char **argv, const char **path) {
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--profile-file=", 15)) {
            *path = argv[i] + 15;
            return i;
        }
        if (!strcmp(argv[i], "--profile-file")) {
            *path = i + 1 < argc ? argv[i + 1] : NULL;
            return i;
        }
    }
    return 0;
}

/* argv with the profile file's mock: section (`stampede calibrate`'s output) as flags in place
 * of --profile-file, before every other flag so that those override it. */
static int mock_cli_parse_with_file(mock_options_t *self, int argc, char **argv, int at,
                                    const char *path, FILE *out, char *err, size_t errlen) {
    if (!path) {
        snprintf(err, errlen, "--profile-file needs a value (FILE)");
        return -1;
    }
    config_mock_t file;
    config_error_t cerr;
    if (config_mock_load_file(&file, path, &cerr) != 0) {
        char msg[768];
        config_error_format(&cerr, msg, sizeof msg);
        snprintf(err, errlen, "--profile-file: %s", msg);
        return -1;
    }
    char **args = config_mock_args(&file);
    size_t n = 0;
    while (args && args[n])
        n++;
    char **all = args ? calloc(n + (size_t)argc + 1, sizeof *all) : NULL;
    int rc = -1;
    if (!all) {
        snprintf(err, errlen, "out of memory");
    } else {
        int k = 0, skip = strchr(argv[at], '=') ? 1 : 2;
        all[k++] = argv[0];
        for (size_t j = 0; j < n; j++)
            all[k++] = args[j];
        for (int j = 1; j < argc; j++)
            if (j < at || j >= at + skip)
                all[k++] = argv[j];
        rc = mock_cli_parse(self, k, all, out, err, errlen);
        if (rc < 0 && strncmp(err, "--profile-file", 14) != 0) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", err);
            snprintf(err, errlen, "%s (with --profile-file %s)", inner, path);
        }
    }
    free(all);
    free(args);
    config_mock_free(&file);
    return rc;
}

int mock_cli_parse(mock_options_t *self, int argc, char **argv, FILE *out, char *err,
                   size_t errlen) {
    const char *profile_file;
    int at = mock_cli_profile_file(argc, argv, &profile_file);
    if (at)
        return mock_cli_parse_with_file(self, argc, argv, at, profile_file, out, err, errlen);
    /* The profile goes first so that every explicit flag overrides it, in any order. */
    bool explicit_fixed = false, explicit_profile = false;
    for (int i = 1; i < argc; i++) {
        const char *value;
        const mock_option_t *o = mock_options_next(argc, argv, &i, &value, err, errlen);
        if (!o)
            return -1;
        if (o->kind == OPT_HELP) {
            mock_cli_usage(out);
            return 1;
        }
        if (!strcmp(o->name, "--profile")) {
            if (mock_option_set(self, o, value, err, errlen))
                return -1;
            explicit_profile = true;
        }
        if (!strcmp(o->name, "--ttft-ms") || !strcmp(o->name, "--itl-ms"))
            explicit_fixed = true;
    }
    const mock_profile_t *profile = mock_profile_find(self->profile);
    if (!profile) {
        int n = snprintf(err, errlen, "--profile: unknown profile '%s' (known:", self->profile);
        for (size_t i = 0; mock_profile_at(i) && n >= 0 && (size_t)n < errlen; i++)
            n += snprintf(err + n, errlen - (size_t)n, " %s", mock_profile_at(i)->name);
        if (n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        return -1;
    }
    if (explicit_fixed && explicit_profile) {
        snprintf(err, errlen,
                 "--profile and --ttft-ms/--itl-ms exclude each other: fixed mode "
                 "has no engine model");
        return -1;
    }
    mock_options_apply_profile(self, profile);
    self->fixed = explicit_fixed;
    for (int i = 1; i < argc; i++) {
        const char *value;
        const mock_option_t *o = mock_options_next(argc, argv, &i, &value, err, errlen);
        if (!o || mock_option_set(self, o, value, err, errlen))
            return -1;
    }
    if (self->max_model_len > self->kv_cache_tokens) {
        snprintf(err, errlen,
                 "--kv-cache-tokens %llu cannot hold one sequence of --max-model-len %u "
                 "(vLLM refuses to start in this case too)",
                 (unsigned long long)self->kv_cache_tokens, self->max_model_len);
        return -1;
    }
    if (self->kv_cache_tokens / 16 > UINT32_MAX) {
        snprintf(err, errlen, "--kv-cache-tokens: at most %llu",
                 (unsigned long long)UINT32_MAX * 16);
        return -1;
    }
    return 0;
}

int mock_main(int argc, char **argv) {
    mock_options_t options;
    char err[512];
    mock_options_init(&options);
    int rc = mock_cli_parse(&options, argc, argv, stdout, err, sizeof(err));
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "stampede mock: %s\n", err);
        mock_options_clear(&options);
        return rc < 0 ? 2 : 0;
    }
    /* The signals arrive through the loop's signalfd, so they must not be delivered otherwise. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    mock_server_t *server = mock_server_new(&options, err, sizeof(err));
    if (server) /* one flushed line that tests and `stampede run` wait for */
        printf("listening on %s:%u\n", options.bind, mock_server_port(server));
    fflush(stdout);
    mock_options_clear(&options);
    if (!server) {
        fprintf(stderr, "stampede mock: %s\n", err);
        return 1;
    }
    rc = mock_server_run(server);
    mock_server_destroy(&server);
    return rc == 0 ? 0 : 1;
}
