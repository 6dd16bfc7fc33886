#include "plan_report.h"

#include <math.h>

/* Concurrency levels suggested for a sweep at most. */
#define PLAN_REPORT_MAX_LEVELS 16

/* "3276800000 bytes (3.05 GiB, 3.28 GB)". */
static void plan_report_bytes(double bytes, char *buf, size_t len) {
    char human[64];
    kv_plan_format_bytes(bytes, human, sizeof human);
    snprintf(buf, len, "%.0f bytes (%s)", bytes, human);
}

/* The worked example's own arithmetic (reference/capacity-planning.md section 2.1): a token's
 * bytes per layer in KiB ("8192 bytes = 8 KB"), a sequence as context x layers x that, its
 * millions of KiB written as GB ("40,000 x 10 x 8 KB = 3.2 GB"), and the free figure as given (in
 * GiB or GB) over it, rounded down ("~40GB available ... approximately 12"). Printed beside the
 * exact bound, which counts bytes: the two differ by the units the document mixes. */
static void plan_report_document(FILE *out, const kv_plan_input_t *in, const kv_plan_t *p,
                                 bool free_binary) {
    double kib = p->token_layer_gpu_bytes / 1024;
    double million_kib = (double)in->context * p->layers_per_gpu * kib / 1e6;
    double free_g = in->free_bytes / (free_binary ? 1073741824.0 : 1e9);
    double count = million_kib > 0 ? floor(free_g / million_kib) : 0;
    fprintf(out,
            "%-25s %.3g KiB per token per layer, about %.3g GB per sequence, and about %.0f "
            "sequence%s\n",
            "as the document counts", kib, million_kib, count, count == 1 ? "" : "s");
    fprintf(out,
            "%-25s (reference/capacity-planning.md section 2.1: %llu x %u x %.3g KiB = %.15g KiB,\n"
            "%-25s written %.3g GB; %.3g / %.3g = %.3g, rounded down; in bytes a sequence is\n"
            "%-25s %.3g %s, and the memory bound above is exact)\n",
            "", (unsigned long long)in->context, p->layers_per_gpu, kib, million_kib * 1e6, "",
            million_kib, free_g, million_kib, free_g / million_kib, "",
            p->sequence_gpu_bytes / (free_binary ? 1073741824.0 : 1e9), free_binary ? "GiB" : "GB");
}

void plan_report_print(FILE *out, const kv_plan_input_t *in, const kv_plan_t *p, const char *source,
                       const char *context_from, bool free_binary) {
    char b1[128], b2[128];
    fprintf(out, "%-25s %u layers, %s, %g bytes per value\n", "model", in->layers, source,
            in->dtype_bytes);
    fprintf(out, "%-25s PP %u x TP %u = %u GPUs per replica, %u layers per GPU, %u replica%s\n",
            "parallelism", in->pp, in->tp, in->pp * in->tp, p->layers_per_gpu, in->replicas,
            in->replicas == 1 ? "" : "s");
    plan_report_bytes(p->token_layer_bytes, b1, sizeof b1);
    fprintf(out, "%-25s %s = %s%g x %g bytes", "KV per token per layer", b1,
            in->latent_width ? "" : "2 (K and V) x ", p->kv_width, in->dtype_bytes);
    if (p->token_layer_gpu_bytes != p->token_layer_bytes || in->tp > 1)
        fprintf(out, "; %g bytes per TP rank (TP %u)", p->token_layer_gpu_bytes, in->tp);
    fprintf(out, "\n");
    /* in the unit of a token's bytes, so the document's "40,000 x 10 x 8 KB = 3.2 GB" reads as
     * its digits: 3200000 KiB */
    const char *unit_name;
    double unit = kv_plan_exact_unit(p->token_layer_gpu_bytes, &unit_name);
    plan_report_bytes(p->sequence_gpu_bytes, b1, sizeof b1);
    fprintf(out, "%-25s %s = %llu tokens%s x %u layers x %g %s", "KV per sequence per GPU", b1,
            (unsigned long long)in->context, context_from, p->layers_per_gpu,
            p->token_layer_gpu_bytes / unit, unit == 1 ? "bytes" : unit_name);
    if (unit > 1)
        fprintf(out, " = %.15g %s", p->sequence_gpu_bytes / unit, unit_name);
    fprintf(out, "\n");
    plan_report_bytes(in->free_bytes, b2, sizeof b2);
    fprintf(out, "%-25s %s\n", "KV free per GPU", b2);
    fprintf(out,
            "%-25s %llu concurrent sequence%s per replica (free / per sequence = %.1f), %llu in "
            "all\n",
            "memory bound", (unsigned long long)p->sequences, p->sequences == 1 ? "" : "s",
            p->sequences_exact, (unsigned long long)p->sequences_total);
    plan_report_document(out, in, p, free_binary);
    fprintf(out, "%-25s concurrency %u (2R) most stable, %u (4R) exploratory, R = %u replica%s;\n",
            "guidance", p->stable, p->exploratory, in->replicas, in->replicas == 1 ? "" : "s");
    fprintf(out,
            "%-25s beyond 4R long contexts usually get slower, not faster: prefill, not memory,\n"
            "%-25s bounds the optimum (reference/capacity-planning.md section 2.2)\n",
            "", "");
}

void plan_report_print_workload(FILE *out, const char *workload, uint64_t context,
                                const kv_plan_input_t *in, const kv_plan_t *p,
                                const workload_context_t *w) {
    fprintf(out, "\n%-25s %s: %llu sessions sampled, %.1f requests each, %.2f in flight at once\n",
            "workload", workload, (unsigned long long)w->sessions,
            (double)w->requests / (double)w->sessions, w->mean_parallel);
    fprintf(out, "%-25s mean %.1f tokens (prompt %.1f + output %.1f), longest %llu%s\n",
            "context per request", w->mean_context, w->mean_prompt, w->mean_output,
            (unsigned long long)w->max_context, w->compaction_cap ? " (compaction caps it)" : "");
    char b[128];
    plan_report_bytes(w->session_tokens * p->token_gpu_bytes, b, sizeof b);
    fprintf(out, "%-25s %.1f tokens, %s per GPU\n", "KV per session in flight", w->session_tokens,
            b);
    double fill = kv_plan_sessions_at(p, in, w->session_tokens);
    fprintf(out, "%-25s %.0f sessions in flight (%.1f), with %.0f KV tokens per replica\n",
            "KV cache fills at", floor(fill), fill, floor(p->tokens_per_gpu));
    uint32_t levels[PLAN_REPORT_MAX_LEVELS];
    size_t n = kv_plan_sweep_levels(in->replicas, fill, levels, PLAN_REPORT_MAX_LEVELS);
    fprintf(out, "%-25s sweep: {concurrency: [", "sweep levels");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%u", i ? ", " : "", levels[i]);
    fprintf(out,
            "]}\n%-25s R doubling up to the fill point and past it: for long contexts the knee is\n"
            "%-25s usually at 2R-4R, and latency climbs once KV fills (preemption, queueing)\n",
            "", "");
    if (w->file_concurrency)
        fprintf(out, "%-25s the file runs concurrency %u: %.2g x the fill point\n", "",
                w->file_concurrency, w->file_concurrency / fill);
    if (context && w->max_context > context)
        fprintf(out,
                "%-25s the workload's longest request (%llu tokens) is longer than --context "
                "(%llu): a server with max_model_len %llu rejects it\n",
                "note", (unsigned long long)w->max_context, (unsigned long long)context,
                (unsigned long long)context);
}
