#include "plan_cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_yaml.h"
#include "kv_plan.h"
#include "model_config.h"
#include "units.h"
#include "workload_context.h"

/* Sessions the workload estimate generates unless --sample says otherwise. */
#define PLAN_CMD_SAMPLE 1000
/* The workload sample stops once it holds this many requests. */
#define PLAN_CMD_MAX_REQUESTS 1000000u
/* Bound on --pp, --tp, --replicas and --gpus, so their products stay far inside 32 bits. */
#define PLAN_CMD_MAX_GPUS 65536
/* Concurrency levels suggested for a sweep at most. */
#define PLAN_CMD_MAX_LEVELS 16

/* The command line; 0 (or NULL) is "not given". */
typedef struct plan_cmd_args {
    uint32_t layers, heads, kv_heads, head_dim, pp, tp, replicas, gpus, sample;
    double hidden, kv_ratio, dtype_bytes, free_bytes;
    bool free_binary; /* the free memory was given in GiB (--free-gib, a KiB..TiB size) */
    uint64_t context;
    const char *model_config, *workload;
} plan_cmd_args_t;

static void plan_cmd_usage(FILE *out) {
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
            PLAN_CMD_SAMPLE);
}

/* A flag's number: finite, and above 0 (whole when integer). 0 ok, -1 after a message. */
static int plan_cmd_number(const char *flag, const char *text, bool integer, double max,
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
static int plan_cmd_count(const char *flag, const char *text, double max, uint32_t *out) {
    double v;
    if (plan_cmd_number(flag, text, true, max, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One option into *a. 0 ok, -1 after a message. */
static int plan_cmd_option(int c, const char *flag, const char *arg, plan_cmd_args_t *a) {
    double v;
    uint64_t bytes;
    switch (c) {
    case 'L':
        return plan_cmd_count(flag, arg, UINT32_MAX, &a->layers);
    case 'H':
        return plan_cmd_number(flag, arg, true, 1e12, &a->hidden);
    case 'r':
        return plan_cmd_number(flag, arg, false, 1, &a->kv_ratio);
    case 'a':
        return plan_cmd_count(flag, arg, UINT32_MAX, &a->heads);
    case 'k':
        return plan_cmd_count(flag, arg, UINT32_MAX, &a->kv_heads);
    case 'd':
        return plan_cmd_count(flag, arg, UINT32_MAX, &a->head_dim);
    case 'b':
        return plan_cmd_number(flag, arg, false, 64, &a->dtype_bytes);
    case 'p':
        return plan_cmd_count(flag, arg, PLAN_CMD_MAX_GPUS, &a->pp);
    case 't':
        return plan_cmd_count(flag, arg, PLAN_CMD_MAX_GPUS, &a->tp);
    case 'R':
        return plan_cmd_count(flag, arg, PLAN_CMD_MAX_GPUS, &a->replicas);
    case 'g':
        return plan_cmd_count(flag, arg, PLAN_CMD_MAX_GPUS, &a->gpus);
    case 's':
        return plan_cmd_count(flag, arg, 1e6, &a->sample);
    case 'c':
        if (plan_cmd_number(flag, arg, true, 1e15, &v) != 0)
            return -1;
        a->context = (uint64_t)v;
        return 0;
    case 'G':
        if (plan_cmd_number(flag, arg, false, 1e9, &v) != 0)
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
static int plan_cmd_args(int argc, char **argv, plan_cmd_args_t *a) {
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
            plan_cmd_usage(stdout);
            return -1;
        }
        if (c == '?') {
            fprintf(stderr, "plan: unknown option or missing value: '%s'\n", argv[optind - 1]);
            plan_cmd_usage(stderr);
            return 2;
        }
        char flag[32];
        snprintf(flag, sizeof flag, "--%s", longopts[index].name);
        if (plan_cmd_option(c, flag, optarg, a) != 0)
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
static int plan_cmd_model(const plan_cmd_args_t *a, kv_plan_input_t *in, char *source, size_t len) {
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

/* "3276800000 bytes (3.05 GiB, 3.28 GB)". */
static void plan_cmd_bytes(double bytes, char *buf, size_t len) {
    char human[64];
    kv_plan_format_bytes(bytes, human, sizeof human);
    snprintf(buf, len, "%.0f bytes (%s)", bytes, human);
}

/* The worked example's own arithmetic (reference/capacity-planning.md section 2.1): a token's
 * bytes per layer in KiB ("8192 bytes = 8 KB"), a sequence as context x layers x that, its
 * millions of KiB written as GB ("40,000 x 10 x 8 KB = 3.2 GB"), and the free figure as given (in
 * GiB or GB) over it, rounded down ("~40GB available ... approximately 12"). Printed beside the
 * exact bound, which counts bytes: the two differ by the units the document mixes. */
static void plan_cmd_print_document(const kv_plan_input_t *in, const kv_plan_t *p,
                                    bool free_binary) {
    double kib = p->token_layer_gpu_bytes / 1024;
    double million_kib = (double)in->context * p->layers_per_gpu * kib / 1e6;
    double free_g = in->free_bytes / (free_binary ? 1073741824.0 : 1e9);
    double count = million_kib > 0 ? floor(free_g / million_kib) : 0;
    printf("%-25s %.3g KiB per token per layer, about %.3g GB per sequence, and about %.0f "
           "sequence%s\n",
           "as the document counts", kib, million_kib, count, count == 1 ? "" : "s");
    printf("%-25s (reference/capacity-planning.md section 2.1: %llu x %u x %.3g KiB = %.15g KiB,\n"
           "%-25s written %.3g GB; %.3g / %.3g = %.3g, rounded down; in bytes a sequence is\n"
           "%-25s %.3g %s, and the memory bound above is exact)\n",
           "", (unsigned long long)in->context, p->layers_per_gpu, kib, million_kib * 1e6, "",
           million_kib, free_g, million_kib, free_g / million_kib, "",
           p->sequence_gpu_bytes / (free_binary ? 1073741824.0 : 1e9), free_binary ? "GiB" : "GB");
}

static void plan_cmd_print(const kv_plan_input_t *in, const kv_plan_t *p, const char *source,
                           const char *context_from, bool free_binary) {
    char b1[128], b2[128];
    printf("%-25s %u layers, %s, %g bytes per value\n", "model", in->layers, source,
           in->dtype_bytes);
    printf("%-25s PP %u x TP %u = %u GPUs per replica, %u layers per GPU, %u replica%s\n",
           "parallelism", in->pp, in->tp, in->pp * in->tp, p->layers_per_gpu, in->replicas,
           in->replicas == 1 ? "" : "s");
    plan_cmd_bytes(p->token_layer_bytes, b1, sizeof b1);
    printf("%-25s %s = %s%g x %g bytes", "KV per token per layer", b1,
           in->latent_width ? "" : "2 (K and V) x ", p->kv_width, in->dtype_bytes);
    if (p->token_layer_gpu_bytes != p->token_layer_bytes || in->tp > 1)
        printf("; %g bytes per TP rank (TP %u)", p->token_layer_gpu_bytes, in->tp);
    printf("\n");
    /* in the unit of a token's bytes, so the document's "40,000 x 10 x 8 KB = 3.2 GB" reads as
     * its digits: 3200000 KiB */
    const char *unit_name;
    double unit = kv_plan_exact_unit(p->token_layer_gpu_bytes, &unit_name);
    plan_cmd_bytes(p->sequence_gpu_bytes, b1, sizeof b1);
    printf("%-25s %s = %llu tokens%s x %u layers x %g %s", "KV per sequence per GPU", b1,
           (unsigned long long)in->context, context_from, p->layers_per_gpu,
           p->token_layer_gpu_bytes / unit, unit == 1 ? "bytes" : unit_name);
    if (unit > 1)
        printf(" = %.15g %s", p->sequence_gpu_bytes / unit, unit_name);
    printf("\n");
    plan_cmd_bytes(in->free_bytes, b2, sizeof b2);
    printf("%-25s %s\n", "KV free per GPU", b2);
    printf("%-25s %llu concurrent sequence%s per replica (free / per sequence = %.1f), %llu in "
           "all\n",
           "memory bound", (unsigned long long)p->sequences, p->sequences == 1 ? "" : "s",
           p->sequences_exact, (unsigned long long)p->sequences_total);
    plan_cmd_print_document(in, p, free_binary);
    printf("%-25s concurrency %u (2R) most stable, %u (4R) exploratory, R = %u replica%s;\n",
           "guidance", p->stable, p->exploratory, in->replicas, in->replicas == 1 ? "" : "s");
    printf("%-25s beyond 4R long contexts usually get slower, not faster: prefill, not memory,\n"
           "%-25s bounds the optimum (reference/capacity-planning.md section 2.2)\n",
           "", "");
}

/* The workload's context and where a sweep should look. */
static void plan_cmd_print_workload(const plan_cmd_args_t *a, const kv_plan_input_t *in,
                                    const kv_plan_t *p, const workload_context_t *w) {
    printf("\n%-25s %s: %llu sessions sampled, %.1f requests each, %.2f in flight at once\n",
           "workload", a->workload, (unsigned long long)w->sessions,
           (double)w->requests / (double)w->sessions, w->mean_parallel);
    printf("%-25s mean %.1f tokens (prompt %.1f + output %.1f), longest %llu%s\n",
           "context per request", w->mean_context, w->mean_prompt, w->mean_output,
           (unsigned long long)w->max_context, w->compaction_cap ? " (compaction caps it)" : "");
    char b[128];
    plan_cmd_bytes(w->session_tokens * p->token_gpu_bytes, b, sizeof b);
    printf("%-25s %.1f tokens, %s per GPU\n", "KV per session in flight", w->session_tokens, b);
    double fill = kv_plan_sessions_at(p, in, w->session_tokens);
    printf("%-25s %.0f sessions in flight (%.1f), with %.0f KV tokens per replica\n",
           "KV cache fills at", floor(fill), fill, floor(p->tokens_per_gpu));
    uint32_t levels[PLAN_CMD_MAX_LEVELS];
    size_t n = kv_plan_sweep_levels(in->replicas, fill, levels, PLAN_CMD_MAX_LEVELS);
    printf("%-25s sweep: {concurrency: [", "sweep levels");
    for (size_t i = 0; i < n; i++)
        printf("%s%u", i ? ", " : "", levels[i]);
    printf("]}\n%-25s R doubling up to the fill point and past it: for long contexts the knee is\n"
           "%-25s usually at 2R-4R, and latency climbs once KV fills (preemption, queueing)\n",
           "", "");
    if (w->file_concurrency)
        printf("%-25s the file runs concurrency %u: %.2g x the fill point\n", "",
               w->file_concurrency, w->file_concurrency / fill);
    if (a->context && w->max_context > a->context)
        printf("%-25s the workload's longest request (%llu tokens) is longer than --context "
               "(%llu): a server with max_model_len %llu rejects it\n",
               "note", (unsigned long long)w->max_context, (unsigned long long)a->context,
               (unsigned long long)a->context);
}

/* Loads the workload and estimates its context. 0 ok, 1 after a message. */
static int plan_cmd_workload(const plan_cmd_args_t *a, workload_context_t *w) {
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, a->workload, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "plan: %s\n", msg);
        return 1;
    }
    int rc = workload_context_estimate(&cfg, a->sample ? a->sample : PLAN_CMD_SAMPLE,
                                       PLAN_CMD_MAX_REQUESTS, w);
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
    plan_cmd_args_t a;
    int rc = plan_cmd_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    kv_plan_input_t in = {.pp = a.pp ? a.pp : 1, .tp = a.tp ? a.tp : 1};
    char source[160];
    if ((rc = plan_cmd_model(&a, &in, source, sizeof source)) != 0)
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
    if (a.workload && plan_cmd_workload(&a, &w) != 0)
        return 1;
    in.context = a.context ? a.context : w.max_context;
    in.free_bytes = a.free_bytes;
    kv_plan_t p;
    char why[256];
    if (kv_plan_compute(&in, &p, why, sizeof why) != 0) {
        fprintf(stderr, "plan: %s\n", why);
        return 2;
    }
    plan_cmd_print(&in, &p, source, a.context ? "" : " (the workload's longest request)",
                   a.free_binary);
    if (a.workload)
        plan_cmd_print_workload(&a, &in, &p, &w);
    return 0;
}
