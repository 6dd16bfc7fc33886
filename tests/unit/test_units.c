#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "units.h"

static void test_units_parse_duration_accepts_every_unit_and_form(void **state) {
    static const struct {
        const char *text;
        int64_t ns;
    } cases[] = {
        {"500ms", 500000000LL},
        {"2m", 120000000000LL},
        {"1.5s", 1500000000LL},
        {"250us", 250000LL},
        {"250\xc2\xb5s", 250000LL},
        {"1h", 3600000000000LL},
        {"10ns", 10LL},
        {"3min", 180000000000LL},
        {"1m30s", 90000000000LL},
        {"1h2m3s4ms", 3723004000000LL},
        {"2", 2000000000LL},
        {"0.25", 250000000LL},
        {".5s", 500000000LL},
        {"0", 0},
        {"0s", 0},
        {"1.1s", 1100000000LL},
        {"500 ms", 500000000LL},
        {"0.0000000015s", 2}, /* 1.5 ns rounds to nearest */
        {"9223372036s", 9223372036000000000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ns = -7;
        int rc = units_parse_duration(cases[i].text, &ns);
        if (rc != 0 || ns != cases[i].ns)
            fail_msg("'%s': rc %d ns %lld, expected %lld", cases[i].text, rc, (long long)ns,
                     (long long)cases[i].ns);
    }
}

static void test_units_parse_duration_refuses_bad_input_and_writes_nothing(void **state) {
    static const char *const bad[] = {
        "",      "s",     "-1s", "+1s",         "1x",
        "1 s s", "1m30",  "ms",  "1e3s",        "abc",
        "1..5s", "10sec", "1d",  "9223372037s", "99999999999999999999s",
        "1s ms", "nan",   "inf",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns = -7;
        int rc = units_parse_duration(bad[i], &ns);
        if (rc != -1 || ns != -7)
            fail_msg("'%s' accepted: rc %d ns %lld", bad[i], rc, (long long)ns);
    }
}

static void test_units_parse_rate_table(void **state) {
    static const struct {
        const char *text;
        double per_s;
    } cases[] = {
        {"5/s", 5.0},   {"300/m", 5.0}, {"10/h", 10.0 / 3600}, {"2.5", 2.5}, {"120/min", 2},
        {"7 / sec", 7}, {"0", 0},       {"3600/hour", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double r = -1;
        int rc = units_parse_rate(cases[i].text, &r);
        if (rc != 0 || fabs(r - cases[i].per_s) > 1e-12 * cases[i].per_s)
            fail_msg("'%s': rc %d rate %.17g, expected %.17g (relative 1e-12)", cases[i].text, rc,
                     r, cases[i].per_s);
    }
    static const char *const bad[] = {"",        "/s",  "-5/s",  "5/x", "5/",
                                      "5 per s", "abc", "5/s/s", "1e3", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double r = -1;
        if (units_parse_rate(bad[i], &r) != -1 || r != -1)
            fail_msg("'%s' accepted as a rate (%g)", bad[i], r);
    }
}

static void test_units_parse_size_table(void **state) {
    static const char *const bad[] = {"",
                                      "KiB",
                                      "-1",
                                      "1.5B",
                                      "1.0001KB",
                                      "4Kib",
                                      "1 PB",
                                      "1MBx",
                                      "1e3",
                                      "18446744073709551616",
                                      "17179869184GiB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t b = 7;
        if (units_parse_size(bad[i], &b) != -1 || b != 7)
            fail_msg("'%s' accepted as a size (%llu)", bad[i], (unsigned long long)b);
    }
    static const struct {
        const char *text;
        uint64_t bytes;
    } cases[] = {
        {"4KiB", 4 * 1024},
        {"1MB", 1000 * 1000},
        {"512", 512},
        {"512B", 512},
        {"1.5KiB", 1536},
        {"2GiB", 2ULL << 30},
        {"1TB", 1000000000000ULL},
        {"3 MiB", 3 << 20},
        {"1kB", 1000},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t b = 7;
        int rc = units_parse_size(cases[i].text, &b);
        if (rc != 0 || b != cases[i].bytes)
            fail_msg("'%s': rc %d bytes %llu, expected %llu", cases[i].text, rc,
                     (unsigned long long)b, (unsigned long long)cases[i].bytes);
    }
}

static void test_units_format_duration_shortest_exact_form(void **state) {
    static const struct {
        int64_t ns;
        const char *text;
    } table[] = {
        {1500000000LL, "1500ms"},
        {120000000000LL, "2m"},
        {0, "0s"},
        {90000000000LL, "90s"},
        {7200000000000LL, "2h"},
        {250000, "250us"},
        {10, "10ns"},
        {1000000001LL, "1000000001ns"},
        {-2000000000LL, "-2s"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char buf[32];
        assert_int_equal(units_format_duration(table[i].ns, buf, sizeof buf),
                         (int)strlen(table[i].text));
        assert_string_equal(buf, table[i].text);
    }
}

static void test_units_format_human_two_largest_units_rounded(void **state) {
    static const struct {
        int64_t ns;
        const char *text;
    } table[] = {
        {-5, "0 s"},
        {0, "0 s"},
        {499999999LL, "0 s"},
        {500000000LL, "1 s"},
        {35 * 1000000000LL, "35 s"},
        {(4 * 60 + 20) * 1000000000LL, "4 min 20 s"},
        {3599 * 1000000000LL, "59 min 59 s"},
        {3600 * 1000000000LL, "1 h 0 min"},
        {(2 * 3600 + 10 * 60 + 29) * 1000000000LL, "2 h 10 min"},
        {(2 * 3600 + 10 * 60 + 30) * 1000000000LL, "2 h 11 min"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        units_format_human(table[i].ns, buf, sizeof buf);
        assert_string_equal(buf, table[i].text);
    }
}

static void test_units_format_duration_round_trips_through_parse(void **state) {
    static const int64_t values[] = {1,
                                     999,
                                     1000,
                                     1500000,
                                     59000000000LL,
                                     61000000000LL,
                                     3600000000000LL,
                                     123456789012345LL,
                                     INT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char buf[32];
        int64_t back = -1;
        assert_true(units_format_duration(values[i], buf, sizeof buf) > 0);
        assert_int_equal(units_parse_duration(buf, &back), 0);
        assert_int_equal(back, values[i]);
    }
}

static void test_units_format_duration_refuses_a_small_buffer(void **state) {
    char buf[4] = "xyz";
    assert_int_equal(units_format_duration(1500000000LL, buf, sizeof buf), -1);
    assert_string_equal(buf, "xyz");
    assert_int_equal(units_format_duration(2000000000LL, buf, 3), 2);
    assert_string_equal(buf, "2s");
}

UNIT_MAIN(cmocka_unit_test(test_units_parse_duration_accepts_every_unit_and_form),
          cmocka_unit_test(test_units_parse_duration_refuses_bad_input_and_writes_nothing),
          cmocka_unit_test(test_units_parse_rate_table),
          cmocka_unit_test(test_units_parse_size_table),
          cmocka_unit_test(test_units_format_duration_shortest_exact_form),
          cmocka_unit_test(test_units_format_human_two_largest_units_rounded),
          cmocka_unit_test(test_units_format_duration_round_trips_through_parse),
          cmocka_unit_test(test_units_format_duration_refuses_a_small_buffer))
