#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <string.h>

#include "plan.h"
#include "support.h"

static config_t concurrent_config(uint32_t concurrency) {
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.scheduler.kind = SCHEDULER_CONCURRENT;
    cfg.scheduler.concurrency = concurrency;
    return cfg;
}

/* Every part is floor or ceil, parts are contiguous from 0, and they sum to total. */
static void check_partition(uint64_t total, uint32_t n) {
    uint64_t next = 0, lo = total / n, hi = lo + (total % n != 0);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t first = 99999, count = 99999;
        plan_partition(total, n, i, &first, &count);
        if (first != next)
            fail_msg("total %lu n %u part %u: first %lu, expected %lu", total, n, i, first, next);
        if (count != lo && count != hi)
            fail_msg("total %lu n %u part %u: count %lu, expected %lu or %lu", total, n, i, count,
                     lo, hi);
        next += count;
    }
    assert_int_equal(next, total);
}

static void test_plan_partition_32_over_3_is_11_11_10(void **state) {
    uint64_t counts[3], firsts[3];
    for (uint32_t i = 0; i < 3; i++)
        plan_partition(32, 3, i, &firsts[i], &counts[i]);
    assert_int_equal(counts[0], 11);
    assert_int_equal(counts[1], 11);
    assert_int_equal(counts[2], 10);
    assert_int_equal(firsts[1], 11);
    assert_int_equal(firsts[2], 22);
    check_partition(32, 3);
}

static void test_plan_partition_160_over_7_sums_exactly(void **state) {
    uint64_t first, count, big = 0;
    for (uint32_t i = 0; i < 7; i++) {
        plan_partition(160, 7, i, &first, &count);
        big += count == 23; /* 160 = 6*23 + 22 */
    }
    assert_int_equal(big, 6);
    check_partition(160, 7);
}

static void test_plan_partition_5_over_8_leaves_three_idle(void **state) {
    int idle = 0;
    for (uint32_t i = 0; i < 8; i++) {
        plan_share_t share;
        config_t cfg = concurrent_config(5);
        assert_int_equal(plan_share_for(&cfg, 8, i, &share), 0);
        assert_int_equal(share.slot_count, i < 5 ? 1 : 0);
        idle += share.slot_count == 0;
    }
    assert_int_equal(idle, 3);
    check_partition(5, 8);
}

static void test_plan_partition_sums_for_many_shapes(void **state) {
    for (uint64_t total = 0; total < 200; total++)
        for (uint32_t n = 1; n < 20; n++)
            check_partition(total, n);
    check_partition(UINT64_MAX - 3, 7);
}

/* Owner agrees with the share ranges, and exactly one worker owns each session. */
static void check_every_session_owned_once(const config_t *cfg, uint32_t workers,
                                           uint64_t sessions) {
    plan_share_t shares[16];
    assert_true(workers <= 16);
    uint64_t slots = 0;
    for (uint32_t w = 0; w < workers; w++) {
        assert_int_equal(plan_share_for(cfg, workers, w, &shares[w]), 0);
        slots += shares[w].slot_count;
    }
    if (cfg->scheduler.kind == SCHEDULER_CONCURRENT)
        assert_int_equal(slots, cfg->scheduler.concurrency);
    for (uint64_t i = 0; i < sessions; i++) {
        int owners = 0;
        uint32_t owner = plan_session_owner(cfg, workers, i);
        for (uint32_t w = 0; w < workers; w++)
            if (plan_share_owns(&shares[w], i)) {
                owners++;
                if (w != owner)
                    fail_msg("session %lu: owned by %u, plan_session_owner says %u", i, w, owner);
            }
        if (owners != 1)
            fail_msg("session %lu: %d owners, expected 1", i, owners);
    }
}

static void test_plan_every_concurrent_session_owned_by_exactly_one_worker(void **state) {
    config_t a = concurrent_config(32), b = concurrent_config(160), c = concurrent_config(5);
    check_every_session_owned_once(&a, 3, 1000);
    check_every_session_owned_once(&b, 7, 2000);
    check_every_session_owned_once(&c, 8, 100);
    check_every_session_owned_once(&c, 1, 100);
}

static void test_plan_concurrent_session_runs_on_its_slot(void **state) {
    config_t cfg = concurrent_config(32);
    plan_share_t share;
    assert_int_equal(plan_share_for(&cfg, 3, 2, &share), 0);
    assert_int_equal(share.slot_first, 22);
    assert_int_equal(share.slot_count, 10);
    /* slot 22 runs sessions 22, 54, 86: worker 2; slot 21 (session 53) is worker 1's */
    assert_int_equal(plan_session_owner(&cfg, 3, 86), 2);
    assert_int_equal(plan_session_owner(&cfg, 3, 53), 1);
    assert_int_equal(plan_session_owner(&cfg, 3, 31), 2);
    assert_int_equal(plan_session_owner(&cfg, 3, 32), 0);
}

static void test_plan_rate_sessions_go_round_robin_over_workers(void **state) {
    config_t cfg = concurrent_config(0);
    cfg.scheduler.kind = SCHEDULER_RATE;
    for (uint64_t i = 0; i < 100; i++)
        assert_int_equal(plan_session_owner(&cfg, 4, i), i % 4);
    check_every_session_owned_once(&cfg, 4, 500);
    plan_share_t share;
    assert_int_equal(plan_share_for(&cfg, 4, 3, &share), 0);
    assert_int_equal(share.kind, PLAN_RATE);
    assert_int_equal(share.rate_cap, 0);
}

static void test_plan_rate_cap_is_split_over_workers(void **state) {
    config_t cfg = concurrent_config(10);
    cfg.scheduler.kind = SCHEDULER_RATE;
    uint32_t caps[4], sum = 0;
    for (uint32_t w = 0; w < 4; w++) {
        plan_share_t share;
        assert_int_equal(plan_share_for(&cfg, 4, w, &share), 0);
        caps[w] = share.rate_cap;
        sum += caps[w];
    }
    assert_int_equal(sum, 10);
    assert_int_equal(caps[0], 3);
    assert_int_equal(caps[3], 2);
    check_every_session_owned_once(&cfg, 4, 500);
}

/* A cap below the worker count stays the cap: only `cap` workers take arrivals, one slot each. */
static void test_plan_rate_cap_below_workers_sums_to_the_cap(void **state) {
    config_t cfg = concurrent_config(1);
    cfg.scheduler.kind = SCHEDULER_RATE;
    uint32_t sum = 0;
    for (uint32_t w = 0; w < 2; w++) {
        plan_share_t share;
        assert_int_equal(plan_share_for(&cfg, 2, w, &share), 0);
        assert_int_equal(share.arrival_workers, 1);
        assert_int_equal(share.rate_cap, w == 0 ? 1 : 0);
        sum += share.rate_cap;
    }
    assert_int_equal(sum, 1);
    for (uint64_t i = 0; i < 50; i++)
        assert_int_equal(plan_session_owner(&cfg, 2, i), 0);
    check_every_session_owned_once(&cfg, 2, 200);
    cfg.scheduler.concurrency = 3;
    sum = 0;
    for (uint32_t w = 0; w < 7; w++) {
        plan_share_t share;
        assert_int_equal(plan_share_for(&cfg, 7, w, &share), 0);
        assert_int_equal(share.rate_cap, w < 3 ? 1 : 0);
        sum += share.rate_cap;
    }
    assert_int_equal(sum, 3);
    for (uint64_t i = 0; i < 50; i++)
        assert_int_equal(plan_session_owner(&cfg, 7, i), i % 3);
    check_every_session_owned_once(&cfg, 7, 300);
}

/* sequential: one slot for the fleet, whatever concurrency says: every session on worker 0, in
 * order, and the other workers idle. */
static void test_plan_sequential_runs_every_session_on_worker_0(void **state) {
    config_t cfg = concurrent_config(1);
    cfg.scheduler.kind = SCHEDULER_SEQUENTIAL;
    assert_int_equal(plan_slots(&cfg), 1);
    for (uint32_t workers = 1; workers <= 5; workers++) {
        for (uint32_t w = 0; w < workers; w++) {
            plan_share_t share;
            assert_int_equal(plan_share_for(&cfg, workers, w, &share), 0);
            assert_int_equal(share.kind, PLAN_CONCURRENT);
            assert_int_equal(share.total_slots, 1);
            assert_int_equal(share.slot_count, w == 0 ? 1 : 0);
            if (w == 0)
                assert_int_equal(share.slot_first, 0);
        }
        for (uint64_t i = 0; i < 50; i++)
            assert_int_equal(plan_session_owner(&cfg, workers, i), 0);
        check_every_session_owned_once(&cfg, workers, 200);
    }
    cfg.scheduler.concurrency = 8; /* a copy built by hand: the kind still wins */
    assert_int_equal(plan_slots(&cfg), 1);
    assert_int_equal(plan_session_owner(&cfg, 4, 3), 0);
    cfg.scheduler.kind = SCHEDULER_RATE;
    assert_int_equal(plan_slots(&cfg), 0);
    cfg.scheduler.kind = SCHEDULER_CONCURRENT;
    assert_int_equal(plan_slots(&cfg), 8);
}

static void test_plan_share_refuses_bad_index(void **state) {
    config_t cfg = concurrent_config(4);
    plan_share_t share;
    assert_int_equal(plan_share_for(&cfg, 0, 0, &share), -1);
    assert_int_equal(plan_share_for(&cfg, 3, 3, &share), -1);
}

/* A lost worker's 3 slots of 8 over 2 survivors: +1 to the first, and no slot given twice. */
static void test_plan_lost_slots_split_exactly_over_survivors(void **state) {
    uint64_t first, count, given = 0;
    plan_partition(3, 2, 0, &first, &count);
    assert_int_equal(first, 0);
    assert_int_equal(count, 2);
    given += count;
    plan_partition(3, 2, 1, &first, &count);
    assert_int_equal(first, 2);
    assert_int_equal(count, 1);
    given += count;
    assert_int_equal(given, 3);
    for (uint32_t survivors = 1; survivors <= 9; survivors++)
        for (uint64_t lost = 0; lost <= 20; lost++)
            check_partition(lost, survivors);
}

static void test_plan_first_in_class_is_the_least_at_or_past_the_floor(void **state) {
    assert_int_equal(plan_first_in_class(3, 8, 0), 3);
    assert_int_equal(plan_first_in_class(3, 8, 3), 3);
    assert_int_equal(plan_first_in_class(3, 8, 4), 11);
    assert_int_equal(plan_first_in_class(3, 8, 100), 107);
    assert_int_equal(plan_first_in_class(0, 8, 96), 96);
    assert_int_equal(plan_first_in_class(11, 8, 0), 3); /* the residue is taken mod modulus */
    for (uint64_t floor = 0; floor < 50; floor++)
        for (uint64_t r = 0; r < 7; r++) {
            uint64_t f = plan_first_in_class(r, 7, floor);
            assert_true(f >= floor && f < floor + 7 && f % 7 == r);
        }
}

/* A rate-mode class split n ways: the parts hold every index of the class exactly once. */
static void test_plan_split_class_covers_the_class_exactly_once(void **state) {
    for (uint32_t n = 1; n <= 5; n++) {
        uint64_t residue[5], modulus[5];
        for (uint32_t j = 0; j < n; j++) {
            plan_split_class(2, 4, n, j, &residue[j], &modulus[j]);
            assert_int_equal(modulus[j], 4 * n);
        }
        for (uint64_t i = 0; i < 400; i++) {
            int owners = 0;
            for (uint32_t j = 0; j < n; j++)
                owners += i % modulus[j] == residue[j];
            assert_int_equal(owners, i % 4 == 2 ? 1 : 0);
        }
    }
}

/* Ownership after a handover: worker 1 of 3 (slots 3..5 of 8) is lost with the grant at 40; the
 * survivors run its slots from the first index >= 40. Every session index then has exactly one
 * runner: the original owner below the grant (or nobody, for the lost one's sessions it never
 * reached), the adopter at or past it, and the lost worker never at or past it. */
static void test_plan_handover_never_gives_a_session_twice(void **state) {
    config_t cfg = concurrent_config(8);
    const uint64_t grant = 40;
    uint32_t adopter[8] = {0};
    uint64_t first, count;
    for (uint32_t j = 0; j < 2; j++) { /* survivors 0 and 2 take slots 3..5 */
        plan_partition(3, 2, j, &first, &count);
        for (uint64_t k = first; k < first + count; k++)
            adopter[3 + k] = j == 0 ? 0 : 2;
    }
    for (uint64_t i = 0; i < 200; i++) {
        uint32_t owner = plan_session_owner(&cfg, 3, i);
        int runners = 0;
        if (owner != 1)
            runners++;
        else if (i < grant)
            runners++; /* the lost worker, before it was lost (or never) */
        if (owner == 1 && i >= plan_first_in_class(i % 8, 8, grant))
            runners++, assert_true(adopter[i % 8] != 1);
        if (owner == 1 && i >= grant)
            assert_true(i >= plan_first_in_class(i % 8, 8, grant));
        assert_int_equal(runners, 1);
    }
}

UNIT_MAIN(cmocka_unit_test(test_plan_lost_slots_split_exactly_over_survivors),
          cmocka_unit_test(test_plan_first_in_class_is_the_least_at_or_past_the_floor),
          cmocka_unit_test(test_plan_split_class_covers_the_class_exactly_once),
          cmocka_unit_test(test_plan_handover_never_gives_a_session_twice),
          cmocka_unit_test(test_plan_partition_32_over_3_is_11_11_10),
          cmocka_unit_test(test_plan_partition_160_over_7_sums_exactly),
          cmocka_unit_test(test_plan_partition_5_over_8_leaves_three_idle),
          cmocka_unit_test(test_plan_partition_sums_for_many_shapes),
          cmocka_unit_test(test_plan_every_concurrent_session_owned_by_exactly_one_worker),
          cmocka_unit_test(test_plan_concurrent_session_runs_on_its_slot),
          cmocka_unit_test(test_plan_rate_sessions_go_round_robin_over_workers),
          cmocka_unit_test(test_plan_rate_cap_is_split_over_workers),
          cmocka_unit_test(test_plan_rate_cap_below_workers_sums_to_the_cap),
          cmocka_unit_test(test_plan_sequential_runs_every_session_on_worker_0),
          cmocka_unit_test(test_plan_share_refuses_bad_index))
