/* common/memtrim: a loop thread allocates as a worker's does, 64 KiB blocks written through, each
 * followed by a small block still in use (so no free reaches the arena's top, the one place free()
 * itself returns pages from), then frees the big blocks. On the heap their pages stay resident
 * until memtrim_release; once memtrim_map_large covers them they leave at free(). The second test
 * changes the process's allocator settings, so it runs last. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "memtrim.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMTRIM_OWN_ALLOCATOR 1 /* the sanitizer's malloc, which malloc_trim does not manage */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEMTRIM_OWN_ALLOCATOR 1
#endif
#endif

#define MEMTRIM_BLOCKS 256
#define MEMTRIM_BLOCK ((size_t)64 << 10)

/* The resident set of this process in KiB. */
static long resident_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

typedef struct {
    bool trim; /* call memtrim_release after the frees */
    long before_free, after_free, after_trim;
    bool released;
} memtrim_result_t;

static void *churn_then_trim(void *arg) {
    memtrim_result_t *r = arg;
    static char *blocks[MEMTRIM_BLOCKS], *pins[MEMTRIM_BLOCKS];
    for (int i = 0; i < MEMTRIM_BLOCKS; i++) {
        blocks[i] = malloc(MEMTRIM_BLOCK);
        pins[i] = malloc(64);
        if (!blocks[i] || !pins[i])
            return NULL;
        memset(blocks[i], 0x5a, MEMTRIM_BLOCK);
        pins[i][0] = (char)i;
    }
    r->before_free = resident_kib();
    for (int i = 0; i < MEMTRIM_BLOCKS; i++)
        free(blocks[i]);
    r->after_free = resident_kib();
    if (r->trim) {
        r->released = memtrim_release();
        r->after_trim = resident_kib();
    }
    for (int i = 0; i < MEMTRIM_BLOCKS; i++)
        free(pins[i]);
    return r;
}

/* Runs churn_then_trim on a thread of its own (an arena of its own, as a worker loop has). */
static void churn_on_a_thread(memtrim_result_t *r) {
#ifdef MEMTRIM_OWN_ALLOCATOR
    skip();
#endif
#ifndef __GLIBC__
    skip();
#endif
    pthread_t tid;
    void *ret = NULL;
    assert_int_equal(pthread_create(&tid, NULL, churn_then_trim, r), 0);
    assert_int_equal(pthread_join(tid, &ret), 0);
    assert_non_null(ret);
}

static void test_memtrim_release_returns_free_pages_inside_an_arena(void **state) {
    memtrim_result_t r = {.trim = true};
    churn_on_a_thread(&r);
    long freed_kib = (long)(MEMTRIM_BLOCKS * MEMTRIM_BLOCK / 1024);
    print_message("resident KiB: %ld written, %ld freed, %ld trimmed\n", r.before_free,
                  r.after_free, r.after_trim);
    /* free() kept the pages (this is what the worker's soak saw grow) ... */
    assert_true(r.after_free > r.before_free - freed_kib / 4);
    /* ... and the trim gave back most of them */
    assert_true(r.released);
    assert_true(r.after_trim < r.after_free - freed_kib / 2);
}

static void test_memtrim_map_large_returns_pages_at_free(void **state) {
#if !defined(MEMTRIM_OWN_ALLOCATOR) && defined(__GLIBC__)
    assert_true(memtrim_map_large(MEMTRIM_BLOCK));
#endif
    memtrim_result_t r = {.trim = false};
    churn_on_a_thread(&r);
    long freed_kib = (long)(MEMTRIM_BLOCKS * MEMTRIM_BLOCK / 1024);
    print_message("resident KiB: %ld written, %ld freed\n", r.before_free, r.after_free);
    assert_true(r.after_free < r.before_free - freed_kib / 2);
}

UNIT_MAIN(cmocka_unit_test(test_memtrim_release_returns_free_pages_inside_an_arena),
          cmocka_unit_test(test_memtrim_map_large_returns_pages_at_free))
