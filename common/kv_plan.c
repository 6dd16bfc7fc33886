#include "kv_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int kv_plan_compute(const kv_plan_input_t *in, kv_plan_t *out, char *why, size_t len) {
    memset(out, 0, sizeof *out);
    const char *bad = NULL;
    if (in->layers < 1)
        bad = "layers: must be at least 1";
    else if (in->pp < 1 || in->tp < 1)
        bad = "pp and tp: must be at least 1";
    else if (in->pp > in->layers)
        bad = "pp: more pipeline stages than layers";
    else if (in->replicas < 1)
        bad = "replicas: must be at least 1";
    else if (!(in->dtype_bytes > 0))
        bad = "dtype bytes: must be above 0";
    else if (in->context < 1)
        bad = "context: must be at least 1 token";
    else if (!(in->free_bytes > 0))
        bad = "free memory: must be above 0";
    if (bad) {
        snprintf(why, len, "%s", bad);
        return -1;
    }
    bool latent = in->latent_width > 0;
    if (latent)
        out->kv_width = in->latent_width;
    else if (in->kv_heads)
        out->kv_width = (double)in->kv_heads * in->head_dim;
    else
        out->kv_width = in->hidden * in->kv_ratio;
    if (!(out->kv_width >= 1)) {
        snprintf(why, len,
                 "KV width %g (hidden x KV ratio, or KV heads x head_dim): must be at "
                 "least 1 value",
                 out->kv_width);
        return -1;
    }
    out->token_layer_bytes = (latent ? 1 : 2) * out->kv_width * in->dtype_bytes;
    if (latent) /* every TP rank keeps the whole latent vector */
        out->token_layer_gpu_bytes = out->token_layer_bytes;
    else if (in->kv_heads) /* a rank keeps whole heads: replicated when TP exceeds them */
        out->token_layer_gpu_bytes =
            2.0 * ceil((double)in->kv_heads / in->tp) * in->head_dim * in->dtype_bytes;
    else
        out->token_layer_gpu_bytes = out->token_layer_bytes / in->tp;
    out->layers_per_gpu = (uint32_t)(((uint64_t)in->layers + in->pp - 1) / in->pp);
    out->token_gpu_bytes = out->layers_per_gpu * out->token_layer_gpu_bytes;
    out->sequence_gpu_bytes = (double)in->context * out->token_gpu_bytes;
    out->tokens_per_gpu = in->free_bytes / out->token_gpu_bytes;
    out->sequences_exact = in->free_bytes / out->sequence_gpu_bytes;
    out->sequences = (uint64_t)floor(out->sequences_exact);
    out->sequences_total = out->sequences * in->replicas;
    out->stable = 2 * in->replicas;
    out->exploratory = 4 * in->replicas;
    return 0;
}

double kv_plan_sessions_at(const kv_plan_t *self, const kv_plan_input_t *in,
                           double tokens_per_session) {
    return self->tokens_per_gpu / tokens_per_session * in->replicas;
}

size_t kv_plan_sweep_levels(uint32_t replicas, double fill, uint32_t *levels, size_t max) {
    size_t n = 0;
    /* 1 when not one session fits; bounded so 1.25 x top stays a uint32 */
    uint32_t top = fill >= 1 ? (uint32_t)fmin(floor(fill), UINT32_MAX / 2) : 1;
    for (double level = replicas; level < top && n < max; level *= 2)
        levels[n++] = (uint32_t)level;
    if (n < max && (n == 0 || levels[n - 1] < top))
        levels[n++] = top;
    uint32_t beyond = (uint32_t)llround(1.25 * top);
    if (n < max && beyond > levels[n - 1])
        levels[n++] = beyond;
    return n;
}

void kv_plan_format_bytes(double bytes, char *buf, size_t len) {
    static const char *const binary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    static const char *const decimal[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    double b = bytes, d = bytes;
    size_t i = 0, j = 0;
    for (; b >= 1024 && i + 1 < sizeof binary / sizeof binary[0]; i++)
        b /= 1024;
    for (; d >= 1000 && j + 1 < sizeof decimal / sizeof decimal[0]; j++)
        d /= 1000;
    /* %.3g would write 1020 as 1.02e+03 */
    snprintf(buf, len, b < 100 ? "%.3g %s, " : "%.0f %s, ", b, binary[i]);
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, d < 100 ? "%.3g %s" : "%.0f %s", d, decimal[j]);
}

double kv_plan_exact_unit(double bytes, const char **name) {
    static const char *const names[] = {"B", "KiB", "MiB", "GiB"};
    double unit = 1;
    size_t i = 0;
    while (i + 1 < sizeof names / sizeof names[0] && bytes >= unit * 1024 &&
           fmod(bytes, unit * 1024) == 0) {
        unit *= 1024;
        i++;
    }
    *name = names[i];
    return unit;
}

double kv_plan_dtype_bytes(const char *dtype) {
    static const struct {
        const char *name;
        double bytes;
    } known[] = {
        {"float16", 2}, {"half", 2},    {"bfloat16", 2}, {"float32", 4},
        {"float", 4},   {"float64", 8}, {"double", 8},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(dtype, known[i].name))
            return known[i].bytes;
    if (!strncmp(dtype, "float8", 6) || !strcmp(dtype, "int8") || !strcmp(dtype, "uint8"))
        return 1;
    return 0;
}
