/* The mock's HTTP/1.1 request parser (mock/mock_http.c) on arbitrary connection bytes, parsed as
 * the server does: request after pipelined request until one is incomplete or refused. A
 * complete request lies inside the bytes (head, then a body of Content-Length bytes, or a chunked
 * body that decodes to content_length bytes), a refusal
 * is one of the documented statuses, and every proper prefix of a complete request is merely
 * incomplete (the server waits for more bytes rather than refusing a request split by TCP). */
#include <string.h>

#include "fuzz.h"
#include "http_reason.h"
#include "mock_http.h"

#define FUZZ_HTTP_MAX_HEADER 4096
#define FUZZ_HTTP_MAX_BODY 65536

static int fuzz_http_parse(const char *buf, size_t len, mock_http_request_t *out) {
    return mock_http_parse(buf, len, FUZZ_HTTP_MAX_HEADER, FUZZ_HTTP_MAX_BODY, out);
}

static void fuzz_http_check_complete(const char *buf, size_t len, const mock_http_request_t *r) {
    FUZZ_CHECK(r->header_bytes > 0 && r->header_bytes <= FUZZ_HTTP_MAX_HEADER);
    FUZZ_CHECK(r->content_length <= FUZZ_HTTP_MAX_BODY);
    FUZZ_CHECK(r->total_bytes <= len);
    if (r->chunked_body) { /* the framing is longer than the data, which decodes to its length */
        size_t framed = r->total_bytes - r->header_bytes;
        FUZZ_CHECK(framed >= r->content_length + 5); /* at least "0\r\n\r\n" */
        char *copy = malloc(framed);
        FUZZ_CHECK(copy != NULL);
        memcpy(copy, buf + r->header_bytes, framed);
        FUZZ_CHECK(mock_http_dechunk(copy, framed) == r->content_length);
        free(copy);
    } else {
        FUZZ_CHECK(r->total_bytes == r->header_bytes + r->content_length);
    }
    FUZZ_CHECK(r->body == buf + r->header_bytes);
    FUZZ_CHECK(r->path != NULL && r->path >= buf);
    FUZZ_CHECK(r->path + r->path_len <= buf + r->header_bytes);
    FUZZ_CHECK(r->minor_version >= 0 && r->minor_version <= 9); /* HTTP/1.x, one digit */
    FUZZ_CHECK(r->method >= MOCK_HTTP_GET && r->method <= MOCK_HTTP_OTHER);
}

static void fuzz_http_check_status(int status) {
    FUZZ_CHECK(status == 400 || status == 411 || status == 413 || status == 431 || status == 501 ||
               status == 505);
    FUZZ_CHECK(strcmp(http_reason(status), "") != 0);
    char head[512];
    FUZZ_CHECK(mock_http_format_head(head, sizeof head, status, "text/plain", 0, true, NULL) > 0);
}

/* A proper prefix of the complete request at buf, cut where the input's length says. */
static void fuzz_http_check_prefix(const char *buf, const mock_http_request_t *r, size_t cut) {
    mock_http_request_t prefix;
    size_t n = cut % r->total_bytes;
    char *copy = malloc(n ? n : 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, buf, n);
    FUZZ_CHECK(fuzz_http_parse(copy, n, &prefix) == MOCK_HTTP_INCOMPLETE);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *buf = (const char *)data;
    size_t at = 0;
    for (int requests = 0; requests < 64 && at < size; requests++) {
        mock_http_request_t r;
        int rc = fuzz_http_parse(buf + at, size - at, &r);
        if (rc == MOCK_HTTP_INCOMPLETE)
            break;
        if (rc != MOCK_HTTP_COMPLETE) {
            fuzz_http_check_status(rc);
            break;
        }
        fuzz_http_check_complete(buf + at, size - at, &r);
        fuzz_http_check_prefix(buf + at, &r, size + (size_t)requests);
        at += r.total_bytes;
    }
    return 0;
}
