/* HTTP phases of a finished request from curl's timings and our own stamps. */
#include "phases.h"

#include <openssl/ssl.h>
#include <string.h>

static int64_t phases_info_ns(CURL *easy, CURLINFO info) {
    curl_off_t us = 0;
    if (curl_easy_getinfo(easy, info, &us) != CURLE_OK || us < 0)
        return 0;
    return (int64_t)us * 1000;
}

static int64_t phases_positive(int64_t value) {
    return value < 0 ? 0 : value;
}

void phases_compute(const phases_curl_t *curl, int64_t upload_done_ns, int64_t first_header_ns,
                    request_record_t *rec) {
    memset(rec->phase_ns, 0, sizeof rec->phase_ns);
    rec->has_phases = false;
    rec->connection_reused = false;
    if (!first_header_ns || !rec->end_ns)
        return;                                    /* no response byte: nothing to split */
    int64_t origin = rec->end_ns - curl->total_ns; /* curl's start on our clock */
    int64_t ready = origin + curl->pretransfer_ns; /* connected, request about to be written */
    int64_t sent = upload_done_ns > ready ? upload_done_ns : ready;
    if (sent > first_header_ns)
        sent = first_header_ns;
    int64_t *p = rec->phase_ns;
    rec->has_phases = true;
    rec->connection_reused = curl->connects == 0;
    p[RECORD_PHASE_BLOCKED] = rec->send_ns ? phases_positive(origin - rec->send_ns) : 0;
    if (!rec->connection_reused) { /* curl reports a reused connection's times as tiny, not 0 */
        p[RECORD_PHASE_DNS] = phases_positive(curl->lookup_ns);
        p[RECORD_PHASE_CONNECTING] = phases_positive(curl->connect_ns - curl->lookup_ns);
        p[RECORD_PHASE_TLS] =
            curl->appconnect_ns > 0 ? phases_positive(curl->appconnect_ns - curl->connect_ns) : 0;
    }
    p[RECORD_PHASE_SENDING] = phases_positive(sent - ready);
    p[RECORD_PHASE_WAITING] = phases_positive(first_header_ns - sent);
    p[RECORD_PHASE_RECEIVING] = phases_positive(rec->end_ns - first_header_ns);
}

void phases_read_tls(CURL *easy, request_record_t *rec) {
    struct curl_tlssessioninfo *info = NULL;
    rec->tls_version = 0;
    rec->tls_resumed = false;
    if (curl_easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || !info ||
        info->backend != CURLSSLBACKEND_OPENSSL || !info->internals)
        return;
    SSL *ssl = info->internals;
    switch (SSL_version(ssl)) {
    case TLS1_VERSION:
        rec->tls_version = 10;
        break;
    case TLS1_1_VERSION:
        rec->tls_version = 11;
        break;
    case TLS1_2_VERSION:
        rec->tls_version = 12;
        break;
    case TLS1_3_VERSION:
        rec->tls_version = 13;
        break;
    default:
        return;
    }
    rec->tls_resumed = SSL_session_reused(ssl) == 1;
}

void phases_read(CURL *easy, int64_t upload_done_ns, int64_t first_header_ns,
                 request_record_t *rec) {
    phases_curl_t curl = {
        .lookup_ns = phases_info_ns(easy, CURLINFO_NAMELOOKUP_TIME_T),
        .connect_ns = phases_info_ns(easy, CURLINFO_CONNECT_TIME_T),
        .appconnect_ns = phases_info_ns(easy, CURLINFO_APPCONNECT_TIME_T),
        .pretransfer_ns = phases_info_ns(easy, CURLINFO_PRETRANSFER_TIME_T),
        .total_ns = phases_info_ns(easy, CURLINFO_TOTAL_TIME_T),
    };
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &curl.connects);
    phases_compute(&curl, upload_done_ns, first_header_ns, rec);
}
