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

static void test_rlimit_raise_nofile_reaches_the_hard_limit(void **state) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < 64)
        skip();
    struct rlimit lowered = {.rlim_cur = 64, .rlim_max = rl.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lowered), 0);
    uint64_t now = rlimit_raise_nofile();
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_int_equal(rl.rlim_cur, rl.rlim_max);
    assert_int_equal(now, (uint64_t)rl.rlim_cur);
    assert_int_equal(rlimit_raise_nofile(), now); /* again: nothing changes */
}

static void test_rlimit_fit_nofile_raises_the_soft_limit_to_fit(void **state) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < 128)
        skip();
    struct rlimit lowered = {.rlim_cur = 64, .rlim_max = rl.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lowered), 0);
    char err[256] = "";
    assert_int_equal(rlimit_fit_nofile(128, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_int_equal(rl.rlim_cur, rl.rlim_max);
}

static void test_rlimit_fit_nofile_refuses_a_need_above_the_hard_limit(void **state) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max == RLIM_INFINITY)
        skip();
    uint64_t need = (uint64_t)rl.rlim_max + 1;
    char err[256] = "";
    assert_int_equal(rlimit_fit_nofile(need, err, sizeof err), -1);
    char expected[256];
    snprintf(expected, sizeof expected,
             "the open-file limit is %llu (hard limit %llu), below the %llu descriptors needed",
             (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max,
             (unsigned long long)need);
    assert_non_null(strstr(err, expected));
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_int_equal(rl.rlim_cur, rl.rlim_max); /* raised as far as it goes all the same */
}

UNIT_MAIN(cmocka_unit_test(test_rlimit_raise_nofile_reaches_the_hard_limit),
          cmocka_unit_test(test_rlimit_fit_nofile_raises_the_soft_limit_to_fit),
          cmocka_unit_test(test_rlimit_fit_nofile_refuses_a_need_above_the_hard_limit))
