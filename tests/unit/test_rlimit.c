/* common/rlimit: the soft open-file limit is raised to the hard one (lowered first here, so
 * the raise has something to do), and a need above the hard limit is refused with the numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include <sys/resource.h>

#include "rlimit.h"

/* Lowers the soft limit to 64 so that a raise has something to do; the hard limit (the test is
 * skipped when it is below `at_least`). */
static uint64_t lower_soft_limit(uint64_t at_least) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < at_least)
        skip();
    struct rlimit lowered = {.rlim_cur = 64, .rlim_max = rl.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lowered), 0);
    return (uint64_t)rl.rlim_max;
}

/* The soft limit now in force. */
static uint64_t soft_limit(void) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    return (uint64_t)rl.rlim_cur;
}

static void test_rlimit_raise_nofile_reaches_the_hard_limit(void **state) {
    uint64_t hard = lower_soft_limit(64);
    uint64_t now = rlimit_raise_nofile();
    assert_int_equal(soft_limit(), hard);
    assert_int_equal(now, hard);
    assert_int_equal(rlimit_raise_nofile(), now); /* again: nothing changes */
}

static void test_rlimit_fit_nofile_raises_the_soft_limit_to_fit(void **state) {
    uint64_t hard = lower_soft_limit(128);
    char err[256] = "";
    assert_int_equal(rlimit_fit_nofile(128, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(soft_limit(), hard);
}

static void test_rlimit_fit_nofile_refuses_a_need_above_the_hard_limit(void **state) {
    uint64_t hard = lower_soft_limit(64);
    if (hard == (uint64_t)RLIM_INFINITY)
        skip();
    char err[256] = "", expected[256];
    assert_int_equal(rlimit_fit_nofile(hard + 1, err, sizeof err), -1);
    snprintf(expected, sizeof expected,
             "the open-file limit is %llu (hard limit %llu), below the %llu descriptors needed",
             (unsigned long long)hard, (unsigned long long)hard, (unsigned long long)hard + 1);
    assert_non_null(strstr(err, expected));
    assert_int_equal(soft_limit(), hard); /* raised as far as it goes all the same */
}

UNIT_MAIN(cmocka_unit_test(test_rlimit_raise_nofile_reaches_the_hard_limit),
          cmocka_unit_test(test_rlimit_fit_nofile_raises_the_soft_limit_to_fit),
          cmocka_unit_test(test_rlimit_fit_nofile_refuses_a_need_above_the_hard_limit))
