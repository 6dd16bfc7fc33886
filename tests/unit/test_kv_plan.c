#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "kv_plan.h"
#include "message_case.h"

#define GIB 1073741824.0

/* model's KV shape (layers, width, dtype) placed on replicas of pp x tp GPUs, each with free_bytes
 * for KV, serving sequences of context tokens. */
static kv_plan_input_t on_gpus(kv_plan_input_t model, uint32_t pp, uint32_t tp, uint32_t replicas,
                               uint64_t context, double free_bytes) {
    model.pp = pp;
    model.tp = tp;
    model.replicas = replicas;
    model.context = context;
    model.free_bytes = free_bytes;
    return model;
}

/* reference/capacity-planning.md §2.1: S = 40000, L = 80, H = 16384, r = 1/8, b = 2, PP = 8. */
static kv_plan_input_t worked_example(void) {
    kv_plan_input_t model = {.layers = 80, .hidden = 16384, .kv_ratio = 0.125, .dtype_bytes = 2};
    return on_gpus(model, 8, 1, 1, 40000, 40 * GIB);
}

/* The plan of in, which must be computed. */
static kv_plan_t plan_ok(const kv_plan_input_t *in) {
    kv_plan_t p;
    char why[256] = "";
    if (kv_plan_compute(in, &p, why, sizeof why) != 0)
        fail_msg("refused: %s", why);
    return p;
}

static void
test_kv_plan_worked_example_8_kib_per_token_layer_3_2_million_kib_per_sequence(void **state) {
    kv_plan_input_t in = worked_example();
    kv_plan_t p = plan_ok(&in);
    assert_true(p.kv_width == 2048);
    assert_true(p.token_layer_bytes == 8192);        /* 2 x (16384 x 1/8) x 2: 8 KiB */
    assert_int_equal(p.layers_per_gpu, 10);          /* 80 / 8 */
    assert_true(p.sequence_gpu_bytes == 3276800000); /* 40000 x 10 x 8 KiB = 3200000 KiB */
    /* 40 GiB / 3.05 GiB = 13.1: the document's "~12" is 40 GB / 3.2 GB (docs/plan.md) */
    assert_true(fabs(p.sequences_exact - 13.1072) < 1e-9);
    assert_int_equal(p.sequences, 13);
    assert_int_equal(p.sequences_total, 13);
    assert_int_equal(p.stable, 2);
    assert_int_equal(p.exploratory, 4);
}

static void test_kv_plan_worked_example_in_decimal_gigabytes_gives_the_documents_12(void **state) {
    kv_plan_input_t in = worked_example();
    in.free_bytes = 40e9;
    kv_plan_t p = plan_ok(&in);
    assert_true(fabs(p.sequences_exact - 40e9 / 3276800000.0) < 1e-9); /* 12.2 */
    assert_int_equal(p.sequences, 12);
}

static void test_kv_plan_tensor_parallel_splits_kv_heads_and_replicates_past_them(void **state) {
    /* Llama-3-70B: 80 layers, 8 KV heads x 128, bf16: 320 KiB a token over the whole model */
    kv_plan_input_t model = {.layers = 80, .kv_heads = 8, .head_dim = 128, .dtype_bytes = 2};
    kv_plan_input_t in = on_gpus(model, 1, 8, 2, 8192, 40 * GIB);
    kv_plan_t p = plan_ok(&in);
    assert_true(p.token_layer_bytes == 4096);
    assert_true(p.token_layer_gpu_bytes == 512); /* one KV head per rank */
    assert_true(p.sequence_gpu_bytes == 8192.0 * 80 * 512);
    assert_int_equal(p.sequences, 128); /* 40 GiB / 320 MiB exactly */
    assert_int_equal(p.sequences_total, 256);
    assert_int_equal(p.stable, 4);
    assert_int_equal(p.exploratory, 8);
    in.tp = 16; /* more ranks than KV heads: each still keeps a whole head */
    p = plan_ok(&in);
    assert_true(p.token_layer_gpu_bytes == 512);
    in.kv_heads = 0; /* from the ratio alone the share is a plain division */
    in.hidden = 8192;
    in.kv_ratio = 0.125;
    in.tp = 4;
    p = plan_ok(&in);
    assert_true(p.token_layer_gpu_bytes == 1024);
}

static void test_kv_plan_uneven_pipeline_counts_the_fullest_stage(void **state) {
    kv_plan_input_t in = worked_example();
    in.layers = 61;
    in.pp = 4; /* 16 + 15 + 15 + 15 */
    kv_plan_t p = plan_ok(&in);
    assert_int_equal(p.layers_per_gpu, 16);
    assert_true(p.sequence_gpu_bytes == 40000.0 * 16 * 8192);
    in.layers = UINT32_MAX; /* no overflow rounding up */
    in.pp = 2;
    p = plan_ok(&in);
    assert_int_equal(p.layers_per_gpu, 2147483648u);
}

static void test_kv_plan_mla_keeps_one_latent_vector_whole_on_every_rank(void **state) {
    /* DeepSeek-V3: kv_lora_rank 512 + qk_rope_head_dim 64, bf16, 61 layers */
    kv_plan_input_t model = {.layers = 61, .latent_width = 576, .dtype_bytes = 2};
    kv_plan_input_t in = on_gpus(model, 1, 8, 1, 1000, GIB);
    kv_plan_t p = plan_ok(&in);
    assert_true(p.token_layer_bytes == 1152);
    assert_true(p.token_layer_gpu_bytes == 1152);
    assert_true(p.token_gpu_bytes == 61 * 1152); /* 68.6 KiB a token */
}

/* Each case names the input worked_example() gets wrong and the refusal that must name it. */
static void test_kv_plan_refuses_inputs_out_of_range_naming_them(void **state) {
    static const message_case_t cases[] = {
        {"layers", "layers: must be at least 1"},
        {"pp", "pp: more pipeline stages than layers"},
        {"tp", "pp and tp: must be at least 1"},
        {"dtype", "dtype bytes: must be above 0"},
        {"context", "context: must be at least 1 token"},
        {"free", "free memory: must be above 0"},
        {"ratio", "KV width 0.5 (hidden x KV ratio, or KV heads x head_dim): must be at least 1 "
                  "value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kv_plan_input_t in = worked_example();
        const char *f = cases[i].input;
        if (!strcmp(f, "layers"))
            in.layers = 0;
        else if (!strcmp(f, "pp"))
            in.pp = 81;
        else if (!strcmp(f, "tp"))
            in.tp = 0;
        else if (!strcmp(f, "dtype"))
            in.dtype_bytes = 0;
        else if (!strcmp(f, "context"))
            in.context = 0;
        else if (!strcmp(f, "free"))
            in.free_bytes = 0;
        else
            in.hidden = 4, in.kv_ratio = 0.125;
        kv_plan_t p;
        char why[256] = "";
        assert_int_equal(kv_plan_compute(&in, &p, why, sizeof why), -1);
        if (strcmp(why, cases[i].message) != 0)
            fail_msg("%s: refused with \"%s\", expected \"%s\"", f, why, cases[i].message);
    }
}

static void test_kv_plan_sessions_at_scales_with_replicas(void **state) {
    kv_plan_input_t in = worked_example();
    kv_plan_t p = plan_ok(&in);
    /* 40 GiB / (10 x 8 KiB) = 524288 tokens a replica */
    assert_true(p.tokens_per_gpu == 524288);
    assert_true(kv_plan_sessions_at(&p, &in, 4096) == 128);
    in.replicas = 3;
    assert_true(kv_plan_sessions_at(&p, &in, 4096) == 384);
}

static void test_kv_plan_sweep_levels_double_from_r_to_the_fill_and_past_it(void **state) {
    uint32_t levels[16];
    size_t n = kv_plan_sweep_levels(1, 40.2, levels, 16);
    static const uint32_t want[] = {1, 2, 4, 8, 16, 32, 40, 50};
    assert_int_equal(n, 8);
    assert_memory_equal(levels, want, sizeof want);
    n = kv_plan_sweep_levels(2, 16, levels, 16); /* the fill is a doubling: not listed twice */
    static const uint32_t want2[] = {2, 4, 8, 16, 20};
    assert_int_equal(n, 5);
    assert_memory_equal(levels, want2, sizeof want2);
    n = kv_plan_sweep_levels(4, 0.4, levels, 16); /* not one session fits: still one level */
    assert_int_equal(n, 1);
    assert_int_equal(levels[0], 1);
    n = kv_plan_sweep_levels(1 << 30, 1e15, levels, 16); /* a fill past 32 bits is bounded */
    assert_int_equal(n, 3);
    assert_int_equal(levels[1], UINT32_MAX / 2);
    assert_true(levels[2] > levels[1]);
    n = kv_plan_sweep_levels(1, 1e6, levels, 4); /* capped */
    assert_int_equal(n, 4);
    assert_int_equal(levels[3], 8);
}

static void test_kv_plan_format_bytes_binary_then_decimal_three_digits(void **state) {
    char buf[64];
    kv_plan_format_bytes(8192, buf, sizeof buf);
    assert_string_equal(buf, "8 KiB, 8.19 kB");
    kv_plan_format_bytes(3276800000.0, buf, sizeof buf);
    assert_string_equal(buf, "3.05 GiB, 3.28 GB");
    kv_plan_format_bytes(40 * GIB, buf, sizeof buf);
    assert_string_equal(buf, "40 GiB, 42.9 GB");
    kv_plan_format_bytes(1020 * 1024.0, buf, sizeof buf);
    assert_string_equal(buf, "1020 KiB, 1.04 MB");
    kv_plan_format_bytes(512, buf, sizeof buf);
    assert_string_equal(buf, "512 B, 512 B");
    const char *unit;
    assert_true(kv_plan_exact_unit(8192, &unit) == 1024);
    assert_string_equal(unit, "KiB");
    assert_true(kv_plan_exact_unit(1152, &unit) == 1);
    assert_string_equal(unit, "B");
    assert_true(kv_plan_exact_unit(2.5, &unit) == 1);
}

static void test_kv_plan_dtype_bytes_of_hugging_face_names(void **state) {
    assert_true(kv_plan_dtype_bytes("bfloat16") == 2);
    assert_true(kv_plan_dtype_bytes("float16") == 2);
    assert_true(kv_plan_dtype_bytes("float32") == 4);
    assert_true(kv_plan_dtype_bytes("float8_e4m3fn") == 1);
    assert_true(kv_plan_dtype_bytes("complex64") == 0);
}

UNIT_MAIN(cmocka_unit_test(
              test_kv_plan_worked_example_8_kib_per_token_layer_3_2_million_kib_per_sequence),
          cmocka_unit_test(test_kv_plan_worked_example_in_decimal_gigabytes_gives_the_documents_12),
          cmocka_unit_test(test_kv_plan_tensor_parallel_splits_kv_heads_and_replicates_past_them),
          cmocka_unit_test(test_kv_plan_uneven_pipeline_counts_the_fullest_stage),
          cmocka_unit_test(test_kv_plan_mla_keeps_one_latent_vector_whole_on_every_rank),
          cmocka_unit_test(test_kv_plan_refuses_inputs_out_of_range_naming_them),
          cmocka_unit_test(test_kv_plan_sessions_at_scales_with_replicas),
          cmocka_unit_test(test_kv_plan_sweep_levels_double_from_r_to_the_fill_and_past_it),
          cmocka_unit_test(test_kv_plan_format_bytes_binary_then_decimal_three_digits),
          cmocka_unit_test(test_kv_plan_dtype_bytes_of_hugging_face_names))
