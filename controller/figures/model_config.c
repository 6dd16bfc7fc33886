#include "model_config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kv_plan.h"

/* Where the numbers are, for messages: "" or "text_config.". */
typedef struct model_config_reader {
    const char *path;
    const char *prefix;
    json_t *root;
    char *why;
    size_t len;
} model_config_reader_t;

/* A short description of a JSON value, for "got ...". */
static void model_config_describe(const json_t *v, char *buf, size_t len) {
    if (json_is_string(v))
        snprintf(buf, len, "\"%.40s\"", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%g", json_real_value(v));
    else
        snprintf(buf, len, "%s",
                 json_is_object(v)    ? "an object"
                 : json_is_array(v)   ? "an array"
                 : json_is_boolean(v) ? "a boolean"
                                      : "null");
}

/* The positive whole number at key into *out. Absent (or null): 0 when optional, an error
 * otherwise. 0 ok, -1 with the reader's why filled. */
static int model_config_count(model_config_reader_t *r, const char *key, bool required,
                              uint32_t *out) {
    json_t *v = json_object_get(r->root, key);
    *out = 0;
    if (!v || json_is_null(v)) {
        if (!required)
            return 0;
        snprintf(r->why, r->len, "%s: %s%s: missing", r->path, r->prefix, key);
        return -1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > UINT32_MAX) {
        char got[64];
        model_config_describe(v, got, sizeof got);
        snprintf(r->why, r->len, "%s: %s%s: expected a whole number of at least 1, got %s", r->path,
                 r->prefix, key, got);
        return -1;
    }
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

/* torch_dtype (or dtype, transformers >= 4.56) into out->dtype_bytes, when present. */
static int model_config_dtype(model_config_reader_t *r, model_config_t *out) {
    const char *key = "torch_dtype";
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v))
        v = json_object_get(r->root, key = "dtype");
    if (!v || json_is_null(v))
        return 0;
    double bytes = json_is_string(v) ? kv_plan_dtype_bytes(json_string_value(v)) : 0;
    if (!(bytes > 0)) {
        char got[64];
        model_config_describe(v, got, sizeof got);
        snprintf(r->why, r->len,
                 "%s: %s%s: expected a dtype such as \"bfloat16\", \"float16\", \"float32\" or "
                 "\"float8_e4m3fn\", got %s",
                 r->path, r->prefix, key, got);
        return -1;
    }
    out->dtype_bytes = bytes;
    snprintf(out->dtype, sizeof out->dtype, "%s", json_string_value(v));
    return 0;
}

/* The attention shape: heads, KV heads, head_dim (given or hidden / heads), or MLA's latent. */
static int model_config_attention(model_config_reader_t *r, model_config_t *out) {
    if (model_config_count(r, "num_attention_heads", true, &out->heads) != 0 ||
        model_config_count(r, "num_key_value_heads", false, &out->kv_heads) != 0 ||
        model_config_count(r, "head_dim", false, &out->head_dim) != 0 ||
        model_config_count(r, "hidden_size", out->head_dim == 0, &out->hidden) != 0)
        return -1;
    if (!out->kv_heads)
        out->kv_heads = out->heads;
    if (out->kv_heads > out->heads || out->heads % out->kv_heads) {
        snprintf(r->why, r->len,
                 "%s: %snum_key_value_heads: %u does not divide num_attention_heads (%u)", r->path,
                 r->prefix, out->kv_heads, out->heads);
        return -1;
    }
    if (!out->head_dim) {
        if (out->hidden % out->heads) {
            snprintf(r->why, r->len,
                     "%s: %shidden_size: %u is not a multiple of num_attention_heads (%u); give "
                     "head_dim",
                     r->path, r->prefix, out->hidden, out->heads);
            return -1;
        }
        out->head_dim = out->hidden / out->heads;
    }
    uint32_t rank, rope;
    if (model_config_count(r, "kv_lora_rank", false, &rank) != 0)
        return -1;
    if (rank) {
        if (model_config_count(r, "qk_rope_head_dim", true, &rope) != 0)
            return -1;
        out->latent_width = rank + rope;
    }
    return 0;
}

int model_config_read(const char *path, model_config_t *out, char *why, size_t len) {
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        if (err.line > 0)
            snprintf(why, len, "%s:%d:%d: invalid JSON: %s", path, err.line, err.column, err.text);
        else
            snprintf(why, len, "%s: %s", path, err.text);
        return -1;
    }
    model_config_reader_t r = {.path = path, .prefix = "", .root = root, .why = why, .len = len};
    int rc = -1;
    if (!json_is_object(root)) {
        snprintf(why, len, "%s: expected a JSON object (a model's config.json)", path);
        goto out;
    }
    json_t *text = json_object_get(root, "text_config");
    if (!json_object_get(root, "num_hidden_layers") && json_is_object(text)) {
        r.root = text;
        r.prefix = "text_config.";
    }
    if (model_config_count(&r, "num_hidden_layers", true, &out->layers) != 0 ||
        model_config_attention(&r, out) != 0)
        goto out;
    if (model_config_dtype(&r, out) != 0)
        goto out;
    if (!out->dtype_bytes && r.root != root) { /* a multimodal model may give it at the top only */
        r.root = root;
        r.prefix = "";
        if (model_config_dtype(&r, out) != 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}
