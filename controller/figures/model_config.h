/* A Hugging Face model's config.json, read for `stampede plan --model-config` (docs/plan.md): the
 * numbers the KV arithmetic needs, from the top level or, in a multimodal model's config, from
 * text_config. */
#ifndef STAMPEDE_MODEL_CONFIG_H
#define STAMPEDE_MODEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef struct model_config {
    uint32_t layers;       /* num_hidden_layers */
    uint32_t hidden;       /* hidden_size (0 when absent and head_dim is given) */
    uint32_t heads;        /* num_attention_heads */
    uint32_t kv_heads;     /* num_key_value_heads (absent: heads, multi-head attention) */
    uint32_t head_dim;     /* head_dim, else hidden / heads */
    uint32_t latent_width; /* MLA: kv_lora_rank + qk_rope_head_dim; 0 otherwise */
    double dtype_bytes;    /* from torch_dtype (or dtype); 0 when absent */
    char dtype[32];        /* its name, "" when absent */
} model_config_t;

/* Reads path into *out. 0 ok; -1 with why filled as "PATH:LINE:COLUMN: invalid JSON: ..." or
 * "PATH: KEY: what is wrong" (missing, wrong type, not a positive whole number, heads that do not
 * divide). */
int model_config_read(const char *path, model_config_t *out, char *why, size_t len);

#endif
