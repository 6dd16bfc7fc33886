/* common/rlimit: the soft open-file limit is raised to the hard one (lowered first here, so
 * the raise has something to do). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

UNIT_MAIN(cmocka_unit_test(test_rlimit_raise_nofile_reaches_the_hard_limit))
