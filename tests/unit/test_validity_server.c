/* controller/validity: the servers' causes (the shared-rig guard) make a run invalid, each with
 * its sentence, next to the client's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include "validity.h"

static void test_validity_server_shared_and_restarted_are_two_reasons(void **state) {
    validity_t v = {.valid = true};
    validity_server_t in = {.shared = true,
                            .shared_why = "someone else is using this server: x",
                            .restarted = true,
                            .restarted_why = "the server restarted during the run: y"};
    validity_judge_server(&in, &v);
    assert_false(v.valid);
    assert_int_equal(v.n_reasons, 2);
    assert_string_equal(v.reasons[0], "someone else is using this server: x");
    assert_string_equal(v.reasons[1], "the server restarted during the run: y");
}

static void test_validity_server_quiet_servers_leave_the_verdict_alone(void **state) {
    validity_t v = {.valid = true};
    validity_server_t in = {0};
    validity_judge_server(&in, &v);
    assert_true(v.valid);
    assert_int_equal(v.n_reasons, 0);
}

UNIT_MAIN(cmocka_unit_test(test_validity_server_shared_and_restarted_are_two_reasons),
          cmocka_unit_test(test_validity_server_quiet_servers_leave_the_verdict_alone))
