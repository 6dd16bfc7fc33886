/* common/buffer: the byte buffer (append, printf, consume, compaction) and the array grower
 * (doubling, zeroed tail, unchanged on failure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"

static void test_buffer_appends_formats_and_consumes_in_order(void **state) {
    buffer_t b;
    buffer_init(&b);
    assert_int_equal(buffer_pending(&b), 0);
    assert_int_equal(buffer_append(&b, "abc", 3), 0);
    assert_int_equal(buffer_appendf(&b, "-%d-%s", 42, "x"), 0);
    assert_int_equal(buffer_pending(&b), 8);
    assert_memory_equal(buffer_head(&b), "abc-42-x", 8);
    buffer_consume(&b, 4);
    assert_memory_equal(buffer_head(&b), "42-x", 4);
    buffer_consume(&b, 4); /* all of it: back to empty, storage kept */
    assert_int_equal(b.off, 0);
    assert_int_equal(b.len, 0);
    assert_non_null(b.data);
    buffer_clear(&b);
    assert_null(b.data);
}

static void test_buffer_reserve_compacts_before_it_grows(void **state) {
    buffer_t b;
    buffer_init(&b);
    assert_int_equal(buffer_reserve(&b, 1000), 0);
    size_t cap = b.cap;
    char block[1000];
    memset(block, 'x', sizeof(block));
    assert_int_equal(buffer_append(&b, block, sizeof(block)), 0);
    buffer_consume(&b, 900);
    /* 100 pending + 900 more fits in the same storage once the consumed bytes are dropped. */
    assert_int_equal(buffer_reserve(&b, cap - 100), 0);
    assert_int_equal(b.cap, cap);
    assert_int_equal(b.off, 0);
    assert_int_equal(buffer_pending(&b), 100);
    assert_int_equal(buffer_reserve(&b, cap), 0); /* now it must grow */
    assert_true(b.cap >= cap + 100);
    assert_int_equal(buffer_pending(&b), 100);
    buffer_clear(&b);
}

static void test_buffer_grow_array_doubles_and_zeroes_the_new_tail(void **state) {
    uint64_t *items = NULL;
    size_t cap = 0;
    assert_int_equal(buffer_grow_array(&items, &cap, 3, sizeof(*items)), 0);
    assert_int_equal(cap, 16);
    for (size_t i = 0; i < cap; i++) {
        assert_int_equal(items[i], 0);
        items[i] = i + 1;
    }
    assert_int_equal(buffer_grow_array(&items, &cap, 16, sizeof(*items)), 0); /* fits */
    assert_int_equal(cap, 16);
    assert_int_equal(buffer_grow_array(&items, &cap, 40, sizeof(*items)), 0);
    assert_int_equal(cap, 64);
    assert_int_equal(items[15], 16); /* kept */
    for (size_t i = 16; i < cap; i++)
        assert_int_equal(items[i], 0);
    free(items);
}

static void test_buffer_grow_array_leaves_the_array_alone_on_overflow(void **state) {
    uint32_t *items = NULL;
    size_t cap = 0;
    assert_int_equal(buffer_grow_array(&items, &cap, 4, sizeof(*items)), 0);
    uint32_t *before = items;
    assert_int_equal(buffer_grow_array(&items, &cap, SIZE_MAX / 2, sizeof(*items)), -1);
    assert_ptr_equal(items, before);
    assert_int_equal(cap, 16);
    free(items);
}

static void test_buffer_grow_pair_grows_both_arrays_to_one_capacity(void **state) {
    int64_t *stamps = NULL;
    uint16_t *counts = NULL;
    size_t cap = 0;
    assert_int_equal(buffer_grow_pair(&stamps, sizeof(*stamps), &counts, sizeof(*counts), &cap, 20),
                     0);
    assert_int_equal(cap, 32);
    for (size_t i = 0; i < cap; i++) {
        assert_int_equal(stamps[i], 0);
        assert_int_equal(counts[i], 0);
        stamps[i] = -(int64_t)i;
        counts[i] = (uint16_t)i;
    }
    assert_int_equal(buffer_grow_pair(&stamps, sizeof(*stamps), &counts, sizeof(*counts), &cap, 33),
                     0);
    assert_int_equal(cap, 64);
    assert_int_equal(stamps[31], -31); /* kept */
    assert_int_equal(counts[31], 31);
    assert_int_equal(stamps[63], 0);
    assert_int_equal(counts[63], 0);
    assert_int_equal(
        buffer_grow_pair(&stamps, sizeof(*stamps), &counts, sizeof(*counts), &cap, SIZE_MAX / 2),
        -1);
    assert_int_equal(cap, 64);
    free(stamps);
    free(counts);
}

UNIT_MAIN(cmocka_unit_test(test_buffer_appends_formats_and_consumes_in_order),
          cmocka_unit_test(test_buffer_reserve_compacts_before_it_grows),
          cmocka_unit_test(test_buffer_grow_array_doubles_and_zeroes_the_new_tail),
          cmocka_unit_test(test_buffer_grow_array_leaves_the_array_alone_on_overflow),
          cmocka_unit_test(test_buffer_grow_pair_grows_both_arrays_to_one_capacity))
