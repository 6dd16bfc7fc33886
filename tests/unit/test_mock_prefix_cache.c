/* The simulated engine's prefix cache: chained block hashes, pinning, LRU eviction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include "mock_prefix_cache.h"

static void test_mock_prefix_cache_hash_chains_cover_every_earlier_token(void **state) {
    uint64_t a[48], b[48], ha[3], hb[3];
    for (int i = 0; i < 48; i++)
        a[i] = b[i] = (uint64_t)i;
    b[3] = 999; /* differs in block 0 only */
    assert_int_equal(mock_prefix_cache_hash_blocks(a, 48, ha), 3);
    assert_int_equal(mock_prefix_cache_hash_blocks(b, 47, hb), 2); /* only full blocks */
    mock_prefix_cache_hash_blocks(b, 48, hb);
    for (int i = 0; i < 3; i++) /* same tokens in blocks 1 and 2, different prefix */
        assert_true(ha[i] != hb[i]);
    uint64_t again[3];
    mock_prefix_cache_hash_blocks(a, 48, again);
    assert_memory_equal(ha, again, sizeof(ha));
}

static void test_mock_prefix_cache_match_pins_the_leading_run(void **state) {
    mock_prefix_cache_t *c = mock_prefix_cache_new(8);
    uint64_t hashes[4] = {11, 22, 33, 44};
    for (int i = 0; i < 2; i++)
        mock_prefix_cache_unpin(c, (uint32_t)mock_prefix_cache_insert_pinned(c, hashes[i]));
    mock_prefix_cache_unpin(c, (uint32_t)mock_prefix_cache_insert_pinned(c, 44));
    uint32_t ids[4];
    assert_int_equal(mock_prefix_cache_match(c, hashes, 4, ids), 2); /* 33 missing stops it */
    assert_int_equal(mock_prefix_cache_pinned_blocks(c), 2);
    assert_int_equal(mock_prefix_cache_evict_one(c), 0);  /* 44, the one block not pinned */
    assert_int_equal(mock_prefix_cache_evict_one(c), -1); /* the pinned two stay */
    mock_prefix_cache_unpin(c, ids[0]);
    mock_prefix_cache_unpin(c, ids[1]);
    assert_int_equal(mock_prefix_cache_pinned_blocks(c), 0);
    assert_int_equal(mock_prefix_cache_blocks(c), 2);
    mock_prefix_cache_destroy(&c);
    assert_null(c);
}

static void test_mock_prefix_cache_evicts_least_recently_used_first(void **state) {
    mock_prefix_cache_t *c = mock_prefix_cache_new(3);
    for (uint64_t h = 1; h <= 3; h++)
        mock_prefix_cache_unpin(c, (uint32_t)mock_prefix_cache_insert_pinned(c, h));
    uint32_t id;
    uint64_t one = 1;
    assert_int_equal(mock_prefix_cache_match(c, &one, 1, &id), 1); /* 1 becomes most recent */
    mock_prefix_cache_unpin(c, id);
    mock_prefix_cache_unpin(c, (uint32_t)mock_prefix_cache_insert_pinned(c, 4)); /* evicts 2 */
    uint64_t probe[4] = {1, 2, 3, 4};
    uint32_t ids[4];
    for (int i = 0; i < 4; i++) {
        uint32_t got = mock_prefix_cache_match(c, &probe[i], 1, &ids[i]);
        assert_int_equal(got, i == 1 ? 0 : 1);
        if (got)
            mock_prefix_cache_unpin(c, ids[i]);
    }
    assert_int_equal(mock_prefix_cache_blocks(c), 3);
    mock_prefix_cache_destroy(&c);
}

static void test_mock_prefix_cache_never_evicts_pinned_blocks(void **state) {
    mock_prefix_cache_t *c = mock_prefix_cache_new(2);
    int64_t a = mock_prefix_cache_insert_pinned(c, 1);
    int64_t b = mock_prefix_cache_insert_pinned(c, 2);
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(mock_prefix_cache_insert_pinned(c, 3), -1);
    assert_int_equal(mock_prefix_cache_evict_one(c), -1);
    assert_int_equal(mock_prefix_cache_insert_pinned(c, 1), a); /* a second pin, same block */
    mock_prefix_cache_unpin(c, (uint32_t)a);
    assert_int_equal(mock_prefix_cache_evict_one(c), -1); /* still pinned once */
    mock_prefix_cache_unpin(c, (uint32_t)a);
    assert_int_equal(mock_prefix_cache_evict_one(c), 0);
    assert_int_equal(mock_prefix_cache_blocks(c), 1);
    mock_prefix_cache_unpin(c, (uint32_t)b);
    mock_prefix_cache_destroy(&c);
}

static void test_mock_prefix_cache_holds_many_blocks_exactly(void **state) {
    enum { N = 20000 };
    mock_prefix_cache_t *c = mock_prefix_cache_new(N);
    for (uint64_t h = 0; h < 2 * N; h++)
        mock_prefix_cache_unpin(c, (uint32_t)mock_prefix_cache_insert_pinned(c, h * 7919 + 1));
    assert_int_equal(mock_prefix_cache_blocks(c), N);
    uint32_t id, found = 0;
    for (uint64_t h = 0; h < 2 * N; h++) {
        uint64_t hash = h * 7919 + 1;
        if (mock_prefix_cache_match(c, &hash, 1, &id)) {
            assert_true(h >= N); /* only the newest half survived */
            found++;
            mock_prefix_cache_unpin(c, id);
        }
    }
    assert_int_equal(found, N);
    mock_prefix_cache_destroy(&c);
}

UNIT_MAIN(cmocka_unit_test(test_mock_prefix_cache_hash_chains_cover_every_earlier_token),
          cmocka_unit_test(test_mock_prefix_cache_match_pins_the_leading_run),
          cmocka_unit_test(test_mock_prefix_cache_evicts_least_recently_used_first),
          cmocka_unit_test(test_mock_prefix_cache_never_evicts_pinned_blocks),
          cmocka_unit_test(test_mock_prefix_cache_holds_many_blocks_exactly))
