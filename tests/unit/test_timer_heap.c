/* common/timer_heap: deadline order with first-armed-first ties, cancellation by id, ids never
 * reused, and the table recycled without growing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include "timer_heap.h"

static void test_timer_heap_pops_in_deadline_then_arming_order(void **state) {
    enum { N = 1000 };
    timer_heap_t heap;
    timer_heap_init(&heap);
    static uint64_t ids[N];
    static int tags[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tags[i] = i;
        ids[i] = timer_heap_add(&heap, (int64_t)(x >> 54), NULL, &tags[i]); /* many ties */
        assert_true(ids[i] > 0);
    }
    int cancelled = 0;
    for (int i = 1; i < N; i += 7, cancelled++)
        assert_true(timer_heap_cancel(&heap, ids[i]));
    assert_int_equal(timer_heap_len(&heap), N - cancelled);
    timer_heap_entry_t e, prev = {.when_ns = -1};
    int popped = 0;
    while (timer_heap_pop(&heap, &e)) {
        assert_true(e.when_ns > prev.when_ns || (e.when_ns == prev.when_ns && e.seq > prev.seq));
        int i = *(int *)e.arg;
        assert_int_equal(e.id, ids[i]);
        assert_true(i % 7 != 1);
        prev = e;
        popped++;
    }
    assert_int_equal(popped, N - cancelled);
    assert_null(timer_heap_peek(&heap));
    timer_heap_clear(&heap);
    assert_int_equal(timer_heap_len(&heap), 0);
}

static void test_timer_heap_stale_ids_never_match_a_reused_slot(void **state) {
    timer_heap_t heap;
    timer_heap_init(&heap);
    uint64_t first = timer_heap_add(&heap, 10, NULL, NULL);
    assert_true(timer_heap_cancel(&heap, first));
    assert_false(timer_heap_cancel(&heap, first)); /* twice: ignored */
    uint64_t second = timer_heap_add(&heap, 20, NULL, NULL);
    assert_true(second != first); /* the same slot, another generation */
    assert_false(timer_heap_cancel(&heap, first));
    assert_int_equal(timer_heap_len(&heap), 1);
    assert_false(timer_heap_cancel(&heap, 0));
    assert_false(timer_heap_cancel(&heap, UINT64_C(0xffffffff00000000) | 999));
    assert_int_equal(timer_heap_peek(&heap)->id, second);
    timer_heap_clear(&heap);
}

static void test_timer_heap_last_seq_tells_entries_armed_after_a_reading(void **state) {
    timer_heap_t heap;
    timer_heap_init(&heap);
    assert_int_equal(timer_heap_last_seq(&heap), 0);
    timer_heap_add(&heap, 50, NULL, NULL);
    uint64_t mark = timer_heap_last_seq(&heap);
    timer_heap_add(&heap, 5, NULL, NULL);
    const timer_heap_entry_t *top = timer_heap_peek(&heap);
    assert_int_equal(top->when_ns, 5);
    assert_true(top->seq > mark);
    timer_heap_clear(&heap);
}

static void test_timer_heap_steady_arm_and_cancel_reuses_the_table(void **state) {
    timer_heap_t heap;
    timer_heap_init(&heap);
    uint64_t live[64];
    for (int i = 0; i < 64; i++)
        live[i] = timer_heap_add(&heap, i, NULL, NULL);
    /* A million re-arms of 64 live timers: every id new, never more than 64 armed. */
    for (int round = 0; round < 1000000; round++) {
        int k = round % 64;
        assert_true(timer_heap_cancel(&heap, live[k]));
        uint64_t id = timer_heap_add(&heap, round, NULL, NULL);
        assert_true(id > live[k] || (id & 0xffffffffu) != (live[k] & 0xffffffffu));
        live[k] = id;
    }
    assert_int_equal(timer_heap_len(&heap), 64);
    timer_heap_clear(&heap);
}

UNIT_MAIN(cmocka_unit_test(test_timer_heap_pops_in_deadline_then_arming_order),
          cmocka_unit_test(test_timer_heap_stale_ids_never_match_a_reused_slot),
          cmocka_unit_test(test_timer_heap_last_seq_tells_entries_armed_after_a_reading),
          cmocka_unit_test(test_timer_heap_steady_arm_and_cancel_reuses_the_table))
