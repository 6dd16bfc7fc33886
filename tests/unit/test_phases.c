/* worker/phases: k6's HTTP phases from curl's times (from its own start) and our stamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include "phases.h"

#define US 1000LL
#define MS 1000000LL
#define SEND (50 * 1000 * MS)

/* A request handed to curl at SEND that ended 300 ms later. */
static request_record_t finished(void) {
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.send_ns = SEND;
    rec.end_ns = SEND + 300 * MS;
    return rec;
}

/* Fails naming the first phase of `rec` that is not as expected (in record_phase_t order). */
static void assert_phases(const request_record_t *rec,
                          const int64_t expected[RECORD_PHASE__COUNT]) {
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        if (rec->phase_ns[p] != expected[p])
            fail_msg("phase %s: %lld ns, expected %lld", record_phase_name((record_phase_t)p),
                     (long long)rec->phase_ns[p], (long long)expected[p]);
}

/* A cold connection: curl started 2 ms after the send, looked the name up in 10 us, connected in
 * 150 us more, TLS 3 ms; the body's last byte left 1 ms after PRETRANSFER, the first header line
 * came 100 ms later. The phases add up to E2E. */
static void test_phases_of_a_cold_tls_request_add_up_to_e2e(void **state) {
    request_record_t rec = finished();
    phases_curl_t curl = {.lookup_ns = 10 * US,
                          .connect_ns = 160 * US,
                          .appconnect_ns = 3160 * US,
                          .pretransfer_ns = 3200 * US,
                          .total_ns = 298 * MS,
                          .connects = 1};
    int64_t origin = SEND + 2 * MS;
    int64_t upload_done = origin + 3200 * US + 1 * MS;
    int64_t first_header = upload_done + 100 * MS;
    phases_compute(&curl, upload_done, first_header, &rec);
    assert_true(rec.has_phases);
    assert_false(rec.connection_reused);
    /* blocked, dns, connecting, tls, sending, waiting, receiving */
    assert_phases(&rec, (const int64_t[]){2 * MS, 10 * US, 150 * US, 3 * MS, 1 * MS, 100 * MS,
                                          rec.end_ns - first_header});
    int64_t sum = 0;
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        sum += rec.phase_ns[p];
    /* all but the 40 us between APPCONNECT and PRETRANSFER */
    assert_int_equal(sum, rec.end_ns - rec.send_ns - 40 * US);
}

/* A reused connection: curl's tiny lookup/connect times are not a connect; plain http has no
 * TLS; a body handed over before PRETRANSFER (it fit the buffer) took no sending time. */
static void test_phases_of_a_reused_connection_have_no_connect(void **state) {
    request_record_t rec = finished();
    phases_curl_t curl = {.lookup_ns = 3 * US,
                          .connect_ns = 5 * US,
                          .pretransfer_ns = 20 * US,
                          .total_ns = 300 * MS,
                          .connects = 0};
    phases_compute(&curl, SEND + 10 * US, SEND + 120 * MS, &rec);
    assert_true(rec.connection_reused);
    assert_phases(&rec, (const int64_t[]){0, 0, 0, 0, 0, 120 * MS - 20 * US, 180 * MS});
}

/* No response byte (refused, timed out before the headers): no phases, nothing guessed. */
static void test_phases_need_a_response(void **state) {
    request_record_t rec = finished();
    rec.connection_reused = true;
    rec.phase_ns[RECORD_PHASE_WAITING] = 7;
    phases_curl_t curl = {.total_ns = 300 * MS, .connects = 0};
    phases_compute(&curl, 0, 0, &rec);
    assert_false(rec.has_phases);
    assert_false(rec.connection_reused);
    assert_int_equal(rec.phase_ns[RECORD_PHASE_WAITING], 0);
}

/* Stamps that disagree by a few microseconds with curl's clock never make a phase negative. */
static void test_phases_are_never_negative(void **state) {
    request_record_t rec = finished();
    phases_curl_t curl = {.lookup_ns = 50 * US, /* after CONNECT: impossible, clamped */
                          .connect_ns = 40 * US,
                          .pretransfer_ns = 60 * US,
                          .total_ns = 300 * MS + 5 * US, /* curl started "before" the send */
                          .connects = 1};
    phases_compute(&curl, SEND + 500 * MS, SEND + 100 * MS, &rec); /* upload after the reply */
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        assert_true(rec.phase_ns[p] >= 0);
    assert_int_equal(rec.phase_ns[RECORD_PHASE_BLOCKED], 0);
    assert_int_equal(rec.phase_ns[RECORD_PHASE_CONNECTING], 0);
    assert_int_equal(rec.phase_ns[RECORD_PHASE_WAITING], 0);
}

static void test_phases_names_are_k6s(void **state) {
    static const char *const names[] = {"blocked", "dns",     "connecting", "tls",
                                        "sending", "waiting", "receiving"};
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        assert_string_equal(record_phase_name((record_phase_t)p), names[p]);
    assert_string_equal(record_phase_name(RECORD_PHASE__COUNT), "unknown");
}

UNIT_MAIN(cmocka_unit_test(test_phases_of_a_cold_tls_request_add_up_to_e2e),
          cmocka_unit_test(test_phases_of_a_reused_connection_have_no_connect),
          cmocka_unit_test(test_phases_need_a_response),
          cmocka_unit_test(test_phases_are_never_negative),
          cmocka_unit_test(test_phases_names_are_k6s))
