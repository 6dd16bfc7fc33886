/* HTTP/1.1 for the simulated server: an incremental, pipelining-safe request parser over a
 * connection's input bytes (Content-Length or chunked bodies) and the response heads it writes. */
#ifndef STAMPEDE_MOCK_HTTP_H
#define STAMPEDE_MOCK_HTTP_H

#include <stdbool.h>
#include <stddef.h>

typedef enum mock_http_method {
    MOCK_HTTP_GET,
    MOCK_HTTP_HEAD,
    MOCK_HTTP_POST,
    MOCK_HTTP_OTHER,
} mock_http_method_t;

/* One parsed request; pointers point into the buffer given to mock_http_parse. */
typedef struct mock_http_request {
    mock_http_method_t method;
    const char *path; /* without the query string */
    size_t path_len;
    int minor_version; /* HTTP/1.x */
    bool keep_alive;
    bool expect_continue;  /* "Expect: 100-continue" */
    bool preflight;        /* "X-Stampede-Preflight": stampede's check before a run */
    size_t header_bytes;   /* request line and headers, with the blank line */
    size_t content_length; /* a chunked body: its decoded length */
    bool chunked_body;     /* Transfer-Encoding: chunked; body is still framed until
                              mock_http_dechunk */
    const char *body;
    size_t total_bytes; /* header_bytes + content_length */
} mock_http_request_t;

enum {
    MOCK_HTTP_INCOMPLETE = 0, /* need more bytes (header_bytes > 0 once the head is complete) */
    MOCK_HTTP_COMPLETE = 1,   /* *out describes a whole request of total_bytes */
};

/* Parses the request at the start of buf[0..len). Returns MOCK_HTTP_COMPLETE,
 * MOCK_HTTP_INCOMPLETE, or the HTTP status to answer with before closing: 400 malformed,
 * 411 POST without Content-Length or chunked body, 413 body over max_body, 431 head over
 * max_header, 501 a Transfer-Encoding other than chunked, 505 not HTTP/1.x. A chunked request is
 * complete once its last chunk and trailers are in. */
int mock_http_parse(const char *buf, size_t len, size_t max_header, size_t max_body,
                    mock_http_request_t *out);
/* Decodes the chunked body of a complete request in place (body: its body pointer, in the
 * caller's writable buffer; framed_len: total_bytes - header_bytes): the data bytes move to the
 * front; returns their count (content_length). */
size_t mock_http_dechunk(char *body, size_t framed_len);
/* Writes a response head into buf: status line, Content-Type, then Content-Length when
 * content_length >= 0, Transfer-Encoding: chunked when -1, neither when -2 (an HTTP/1.0 body
 * that ends with the connection), Connection: close when closing, an
 * optional extra header line (without CRLF), and the blank line. Returns its length, or -1 when
 * cap is too small. */
int mock_http_format_head(char *buf, size_t cap, int status, const char *content_type,
                          long long content_length, bool closing, const char *extra);

#endif
