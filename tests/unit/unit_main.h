/* The main() every cmocka unit test file would otherwise spell out again: it runs the tests
 * given (cmocka_unit_test(...) entries) as one group with no setup, and returns cmocka's
 * count of failures. Include it after <cmocka.h>. */
#ifndef STAMPEDE_TEST_UNIT_MAIN_H
#define STAMPEDE_TEST_UNIT_MAIN_H

#define UNIT_MAIN(...)                                                                             \
    int main(void) {                                                                               \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return cmocka_run_group_tests(tests, NULL, NULL);                                          \
    }

#endif
