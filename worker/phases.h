/* The HTTP phases of one finished request (k6's blocked, dns, connecting, tls, sending, waiting,
 * receiving; docs/metrics.md section 2), from libcurl's timings and the stream's own
 * CLOCK_MONOTONIC stamps. curl's times run from its own start of the transfer; that start is
 * placed on our clock as the end of the transfer (rec->end_ns) minus curl's total. The response's
 * first byte is our stamp of its first header line: libcurl 7.88 sets STARTTRANSFER for a POST
 * when the request is sent, not when the response begins. */
#ifndef STAMPEDE_PHASES_H
#define STAMPEDE_PHASES_H

#include <curl/curl.h>
#include <stdint.h>

#include "record.h"

/* What curl says about a finished transfer, in ns from its start. */
typedef struct phases_curl {
    int64_t lookup_ns;      /* CURLINFO_NAMELOOKUP_TIME_T */
    int64_t connect_ns;     /* CURLINFO_CONNECT_TIME_T */
    int64_t appconnect_ns;  /* CURLINFO_APPCONNECT_TIME_T (0 without TLS) */
    int64_t pretransfer_ns; /* CURLINFO_PRETRANSFER_TIME_T */
    int64_t total_ns;       /* CURLINFO_TOTAL_TIME_T */
    long connects;          /* CURLINFO_NUM_CONNECTS: 0 on a reused connection */
} phases_curl_t;

/* Sets rec's phase_ns, has_phases and connection_reused from curl's times, upload_done_ns (the
 * last body byte handed to curl; 0 when unknown) and first_header_ns (the first response header
 * line; 0 when none came: then rec gets no phases). Needs rec->send_ns and rec->end_ns. */
void phases_compute(const phases_curl_t *curl, int64_t upload_done_ns, int64_t first_header_ns,
                    request_record_t *rec);
/* Sets rec's tls_version and tls_resumed from the TLS session of easy's connection (OpenSSL's:
 * the version agreed and whether a session ticket spared the full handshake); plain HTTP, or a
 * TLS library other than OpenSSL, leaves both 0. Called while the response arrives, since curl
 * lets go of the connection when the transfer ends. */
void phases_read_tls(CURL *easy, request_record_t *rec);
/* The same with curl's times read from easy (once, at the end of its transfer). */
void phases_read(CURL *easy, int64_t upload_done_ns, int64_t first_header_ns,
                 request_record_t *rec);

#endif
