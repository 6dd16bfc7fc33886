/* KV-cache capacity arithmetic (docs/plan.md, after reference/capacity-planning.md §2): the bytes a
 * token keeps per layer, what one sequence holds on one GPU of a pipeline x tensor parallel
 * replica, how many such sequences fit in the memory left for KV, and the 2R-4R concurrency
 * guidance. Pure arithmetic: no I/O, no allocation. */
#ifndef STAMPEDE_KV_PLAN_H
#define STAMPEDE_KV_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The model and deployment. The KV width of a layer (values per token for K, and again for V) is
 * kv_heads x head_dim when kv_heads is given, else hidden x kv_ratio; latent (MLA, DeepSeek) keeps
 * one vector of latent_width values per token and layer instead, whole on every TP rank. */
typedef struct kv_plan_input {
    uint32_t layers;       /* L */
    double hidden;         /* H (with kv_ratio) */
    double kv_ratio;       /* r = KV heads / attention heads */
    uint32_t kv_heads;     /* 0: unknown (the width comes from hidden x kv_ratio) */
    uint32_t head_dim;     /* with kv_heads */
    uint32_t latent_width; /* MLA: kv_lora_rank + qk_rope_head_dim; 0: not MLA */
    double dtype_bytes;    /* b */
    uint32_t pp, tp;       /* pipeline stages, tensor parallel ranks (>= 1) */
    uint32_t replicas;     /* R: complete PP x TP sets (>= 1) */
    uint64_t context;      /* S: tokens of one sequence */
    double free_bytes;     /* memory free for KV on each GPU */
} kv_plan_input_t;

typedef struct kv_plan {
    double kv_width;              /* values per token per layer, for K (and again for V) */
    double token_layer_bytes;     /* one token, one whole layer: 2 x width x b (MLA: width x b) */
    double token_layer_gpu_bytes; /* the share of it one TP rank keeps */
    uint32_t layers_per_gpu;      /* ceil(L / PP): the fullest stage fills first */
    double token_gpu_bytes;       /* one token on one GPU: layers_per_gpu x token_layer_gpu_bytes */
    double sequence_gpu_bytes;    /* S tokens on one GPU */
    double tokens_per_gpu;        /* free_bytes / token_gpu_bytes: the KV tokens a replica holds */
    double sequences_exact;       /* free_bytes / sequence_gpu_bytes */
    uint64_t sequences;           /* per replica: floor(sequences_exact) */
    uint64_t sequences_total;     /* x replicas */
    uint32_t stable;              /* 2R: the most stable concurrency for long contexts */
    uint32_t exploratory;         /* 4R: beyond it long contexts usually get slower */
} kv_plan_t;

/* Computes *out from *in. 0 ok; -1 with why filled (which input, and what it must be) when an
 * input is out of range (a zero, PP above the layer count, a KV width below one value). */
int kv_plan_compute(const kv_plan_input_t *in, kv_plan_t *out, char *why, size_t len);

/* Sessions in flight at which KV fills when each holds tokens_per_session tokens (all replicas). */
double kv_plan_sessions_at(const kv_plan_t *self, const kv_plan_input_t *in,
                           double tokens_per_session);

/* Concurrency levels for a sweep that finds the knee: R, 2R, 4R, ... doubling below fill, then fill
 * and 1.25 x fill (rounded), at most max levels, increasing. Returns how many were written. */
size_t kv_plan_sweep_levels(uint32_t replicas, double fill, uint32_t *levels, size_t max);

/* "8 KiB, 8.19 kB": bytes in binary then decimal units, 3 significant digits. */
void kv_plan_format_bytes(double bytes, char *buf, size_t len);

/* The largest binary unit (1, 1024, 1024^2, 1024^3) that divides bytes exactly, and its name
 * ("B", "KiB", "MiB", "GiB"); 1 and "B" when bytes is not whole. */
double kv_plan_exact_unit(double bytes, const char **name);

/* Bytes per value of a Hugging Face torch_dtype ("bfloat16" 2, "float32" 4, "float8_e4m3fn" 1);
 * 0 when unknown. */
double kv_plan_dtype_bytes(const char *dtype);

#endif
