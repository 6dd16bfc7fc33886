/* `stampede plan`: its flags, the model from flags over a config.json, and the workload to
 * sample; the printing is controller/report/plan_report.c (docs/plan.md). */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_yaml.h"
#include "kv_plan.h"
#include "model_config.h"
#include "plan_report.h"
#include "units.h"
#include "workload_context.h"

/* Sessions the workload estimate generates unless --sample says otherwise. */
#define PLAN_CLI_SAMPLE 1000
/* The workload sample stops once it holds this many requests. */
#define PLAN_CLI_MAX_REQUESTS 1000000u
/* Bound on --pp, --tp, --replicas and --gpus, so their products stay far inside 32 bits. */
#define PLAN_CLI_MAX_GPUS 65536

/* The command line; 0 (or NULL) is "not given". */
typedef struct plan_cli_args {
    uint32_t layers, heads, kv_heads, head_dim, pp, tp, replicas, gpus, sample;
    double hidden, kv_ratio, dtype_bytes, free_bytes;
    bool free_binary; /* the free memory was given in GiB (--free-gib, a KiB..TiB size) */
    uint64_t context;
    const char *model_config, *workload;
} plan_cli_args_t;

static void plan_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede plan [--model-config config.json] [--layers N] [--hidden N]\n"
            "                     [--kv-ratio R | --heads N --kv-heads N] [--head-dim N]\n"
            "                     [--dtype-bytes B] [--pp N] [--tp N] [--replicas R | --gpus N]\n"
            "                     --context TOKENS (--free-gib G | --free SIZE)\n"
            "                     [--workload FILE [--sample SESSIONS]]\n"
            "  KV-cache arithmetic (reference/capacity-planning.md section 2): KV bytes per\n"
            "  token per layer (2 x KV width x dtype bytes; KV width = hidden x KV ratio, or\n"
            "  KV heads x head_dim), per sequence on one GPU of a PP x TP replica (context x\n"
            "  ceil(layers / PP) layers, a TP rank keeping its share of the KV heads), the\n"
            "  memory bound on concurrent sequences (free memory per GPU / that), and the 2R-4R\n"
            "  concurrency guidance (R replicas, default 1; --gpus N gives R = N / (PP x TP)).\n"
            "  --model-config reads num_hidden_layers, hidden_size, num_attention_heads,\n"
            "  num_key_value_heads, head_dim, torch_dtype (and an MLA model's kv_lora_rank +\n"
            "  qk_rope_head_dim) from a Hugging Face config.json; flags override it.\n"
            "  --free-gib is GiB (2^30 bytes); --free takes any size (40GB, 40GiB, 38000MiB).\n"
            "  --workload FILE samples SESSIONS of the file's sessions (default %d) for the mean\n"
            "  context a session holds in flight, the concurrency at which that fills the KV\n"
            "  cache, and the levels a sweep should cover; without --context the workload's\n"
            "  longest request is the sequence. Exit 0 ok, 1 a bad file, 2 a usage error.\n"
            "  See docs/plan.md.\n",
            PLAN_CLI_SAMPLE);
}

/* A flag's number: finite, and above 0 (whole when integer). 0 ok, -1 after a message. */
static int plan_cli_number(const char *flag, const char *text, bool integer, double max,
                           double *out) {
    double v;
    if (!config_yaml_parse_number(text, &v) || !(v > 0) || v > max || (integer && v != floor(v))) {
        if (integer)
            fprintf(stderr, "plan: %s: expected a whole number from 1 to %.0f, got '%s'\n", flag,
                    max, text);
        else
            fprintf(stderr, "plan: %s: expected a number above 0 (at most %g), got '%s'\n", flag,
                    max, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* A whole number in [1, max]. */
static int plan_cli_count(const char *flag, const char *text, double max, uint32_t *out) {
    double v;
    if (plan_cli_number(flag, text, true, max, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One option into *a. 0 ok, -1 after a message. */
static int plan_cli_option(int c, const char *flag, const char *arg, plan_cli_args_t *a) {
    double v;
    uint64_t bytes;
    switch (c) {
    case 'L':
        return plan_cli_count(flag, arg, UINT32_MAX, &a->layers);
    case 'H':
        return plan_cli_number(flag, arg, true, 1e12, &a->hidden);
    case 'r':
        return plan_cli_number(flag, arg, false, 1, &a->kv_ratio);
    case 'a':
        return plan_cli_count(flag, arg, UINT32_MAX, &a->heads);
    case 'k':
        return plan_cli_count(flag, arg, UINT32_MAX, &a->kv_heads);
    case 'd':
        return plan_cli_count(flag, arg, UINT32_MAX, &a->head_dim);
    case 'b':
        return plan_cli_number(flag, arg, false, 64, &a->dtype_bytes);
    case 'p':
        return plan_cli_count(flag, arg, PLAN_CLI_MAX_GPUS, &a->pp);
    case 't':
        return plan_cli_count(flag, arg, PLAN_CLI_MAX_GPUS, &a->tp);
    case 'R':
        return plan_cli_count(flag, arg, PLAN_CLI_MAX_GPUS, &a->replicas);
    case 'g':
        return plan_cli_count(flag, arg, PLAN_CLI_MAX_GPUS, &a->gpus);
    case 's':
        return plan_cli_count(flag, arg, 1e6, &a->sample);
    case 'c':
        if (plan_cli_number(flag, arg, true, 1e15, &v) != 0)
            return -1;
        a->context = (uint64_t)v;
        return 0;
    case 'G':
        if (plan_cli_number(flag, arg, false, 1e9, &v) != 0)
            return -1;
        a->free_bytes = v * 1073741824.0;
        a->free_binary = true;
        return 0;
    case 'F':
        if (units_parse_size(arg, &bytes) != 0 || bytes == 0) {
            fprintf(stderr, "plan: %s: expected a size above 0 %s, got '%s'\n", flag,
                    units_size_help(), arg);
            return -1;
        }
        a->free_bytes = (double)bytes;
        a->free_binary = strchr(arg, 'i') || strchr(arg, 'I'); /* KiB, MiB, GiB, TiB */
        return 0;
    case 'm':
        a->model_config = arg;
        return 0;
    case 'w':
        a->workload = arg;
        return 0;
    }
    return -1;
}

/* 0 ok, 2 usage error, -1 help printed. */
static int plan_cli_args(int argc, char **argv, plan_cli_args_t *a) {
    static const struct option longopts[] = {
        {"layers", required_argument, NULL, 'L'},
        {"hidden", required_argument, NULL, 'H'},
        {"kv-ratio", required_argument, NULL, 'r'},
        {"heads", required_argument, NULL, 'a'},
        {"kv-heads", required_argument, NULL, 'k'},
        {"head-dim", required_argument, NULL, 'd'},
        {"dtype-bytes", required_argument, NULL, 'b'},
        {"pp", required_argument, NULL, 'p'},
        {"tp", required_argument, NULL, 't'},
        {"replicas", required_argument, NULL, 'R'},
        {"gpus", required_argument, NULL, 'g'},
        {"context", required_argument, NULL, 'c'},
        {"free-gib", required_argument, NULL, 'G'},
        {"free", required_argument, NULL, 'F'},
        {"model-config", required_argument, NULL, 'm'},
        {"workload", required_argument, NULL, 'w'},
        {"sample", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c, index;
    while ((c = getopt_long(argc, argv, "h", longopts, &index)) != -1) {
        if (c == 'h') {
            plan_cli_usage(stdout);
            return -1;
        }
        if (c == '?') {
            fprintf(stderr, "plan: unknown option or missing value: '%s'\n", argv[optind - 1]);
            plan_cli_usage(stderr);
            return 2;
        }
        char flag[32];
        snprintf(flag, sizeof flag, "--%s", longopts[index].name);
        if (plan_cli_option(c, flag, optarg, a) != 0)
            return 2;
    }
    opterr = 1;
    if (optind != argc) {
        fprintf(stderr, "plan: unexpected argument '%s' (every input is a flag)\n", argv[optind]);
        return 2;
    }
    if (a->kv_ratio && (a->kv_heads || a->heads)) {
        fprintf(stderr, "plan: give --kv-ratio or --heads and --kv-heads, not both\n");
        return 2;
    }
    if (a->replicas && a->gpus) {
        fprintf(stderr, "plan: give --replicas or --gpus, not both\n");
        return 2;
    }
    return 0;
}

/* The model: flags over config.json. 0 ok, 1 a bad file, 2 a missing input (after a message). */
static int plan_cli_model(const plan_cli_args_t *a, kv_plan_input_t *in, char *source, size_t len) {
    model_config_t m = {0};
    char why[1024];
    if (a->model_config && model_config_read(a->model_config, &m, why, sizeof why) != 0) {
        fprintf(stderr, "plan: %s\n", why);
        return 1;
    }
    in->layers = a->layers ? a->layers : m.layers;
    in->dtype_bytes = a->dtype_bytes ? a->dtype_bytes : m.dtype_bytes;
    in->hidden = a->hidden ? a->hidden : m.hidden;
    uint32_t heads = a->heads ? a->heads : m.heads;
    const char *missing = !in->layers ? "--layers (or --model-config)"
                          : !in->dtype_bytes && a->model_config
                              ? "--dtype-bytes (the file has no torch_dtype)"
                          : !in->dtype_bytes ? "--dtype-bytes"
                                             : NULL;
    if (a->kv_ratio) {
        in->kv_ratio = a->kv_ratio;
        if (!in->hidden && !missing)
            missing = "--hidden (with --kv-ratio)";
        snprintf(source, len, "KV width = hidden %g x KV ratio %g", in->hidden, in->kv_ratio);
    } else if (m.latent_width && !a->kv_heads && !a->head_dim) {
        in->latent_width = m.latent_width;
        snprintf(source, len, "MLA latent width %u = kv_lora_rank + qk_rope_head_dim",
                 m.latent_width);
    } else {
        in->kv_heads = a->kv_heads ? a->kv_heads : m.kv_heads;
        in->head_dim = a->head_dim ? a->head_dim : m.head_dim;
        if (!in->head_dim && heads && in->hidden) {
            if (fmod(in->hidden, heads) != 0) {
                fprintf(stderr,
                        "plan: --hidden %g is not a multiple of --heads %u; give --head-dim\n",
                        in->hidden, heads);
                return 2;
            }
            in->head_dim = (uint32_t)(in->hidden / heads);
        }
        if (!missing && !in->kv_heads)
            missing = "--kv-ratio with --hidden, or --kv-heads (or --model-config)";
        else if (!missing && !in->head_dim)
            missing = "--head-dim, or --hidden and --heads (with --kv-heads)";
        snprintf(source, len, "KV width = %u KV heads x head_dim %u", in->kv_heads, in->head_dim);
        if (heads)
            snprintf(source + strlen(source), len - strlen(source), " (of %u heads)", heads);
    }
    if (missing) {
        fprintf(stderr, "plan: missing %s; stampede plan --help lists the inputs\n", missing);
        return 2;
    }
    return 0;
}

/* Loads the workload and estimates its context. 0 ok, 1 after a message. */
static int plan_cli_workload(const plan_cli_args_t *a, workload_context_t *w) {
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, a->workload, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "plan: %s\n", msg);
        return 1;
    }
    int rc = workload_context_estimate(&cfg, a->sample ? a->sample : PLAN_CLI_SAMPLE,
                                       PLAN_CLI_MAX_REQUESTS, w);
    w->file_concurrency =
        cfg.scheduler.kind == SCHEDULER_CONCURRENT ? cfg.scheduler.concurrency : 0;
    config_free(&cfg);
    if (rc != 0 || w->requests == 0) {
        fprintf(stderr, "plan: %s: could not generate its sessions (out of memory)\n", a->workload);
        return 1;
    }
    return 0;
}

int plan_main(int argc, char **argv) {
    plan_cli_args_t a;
    int rc = plan_cli_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    kv_plan_input_t in = {.pp = a.pp ? a.pp : 1, .tp = a.tp ? a.tp : 1};
    char source[160];
    if ((rc = plan_cli_model(&a, &in, source, sizeof source)) != 0)
        return rc;
    in.replicas = a.replicas ? a.replicas : a.gpus ? a.gpus / (in.pp * in.tp) : 1;
    if (a.gpus && in.replicas == 0) {
        fprintf(stderr, "plan: --gpus %u is fewer than one replica (PP %u x TP %u)\n", a.gpus,
                in.pp, in.tp);
        return 2;
    }
    if (!a.free_bytes || (!a.context && !a.workload)) {
        fprintf(stderr, "plan: missing %s; stampede plan --help lists the inputs\n",
                !a.free_bytes ? "--free-gib or --free (GPU memory free for KV on each GPU)"
                              : "--context (tokens per sequence) or --workload");
        return 2;
    }
    workload_context_t w;
    if (a.workload && plan_cli_workload(&a, &w) != 0)
        return 1;
    in.context = a.context ? a.context : w.max_context;
    in.free_bytes = a.free_bytes;
    kv_plan_t p;
    char why[256];
    if (kv_plan_compute(&in, &p, why, sizeof why) != 0) {
        fprintf(stderr, "plan: %s\n", why);
        return 2;
    }
    plan_report_print(stdout, &in, &p, source, a.context ? "" : " (the workload's longest request)",
                      a.free_binary);
    if (a.workload)
        plan_report_print_workload(stdout, a.workload, a.context, &in, &p, &w);
    return 0;
}
