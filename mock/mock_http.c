#include "mock_http.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_reason.h"

static bool mock_http_token_char(unsigned char c) {
    return c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* Finds the end of the head (after the blank line), accepting bare LF line ends. 0 if absent. */
static size_t mock_http_head_end(const char *buf, size_t len) {
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (buf[i + 1] == '\n')
            return i + 2;
        if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Next line of buf[*pos..end) without its CR LF; returns its length and advances *pos. */
static size_t mock_http_line(const char *buf, size_t end, size_t *pos, const char **line) {
    size_t start = *pos, i = start;
    while (i < end && buf[i] != '\n')
        i++;
    *line = buf + start;
    *pos = i < end ? i + 1 : end;
    size_t n = i - start;
    if (n > 0 && buf[start + n - 1] == '\r')
        n--;
    return n;
}

static bool mock_http_header_is(const char *name, size_t len, const char *want) {
    return strlen(want) == len && strncasecmp(name, want, len) == 0;
}

/* True when the comma-separated value contains the token want (case-insensitive). */
static bool mock_http_value_has(const char *value, size_t len, const char *want) {
    size_t wlen = strlen(want), i = 0;
    while (i < len) {
        while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
            i++;
        size_t start = i;
        while (i < len && value[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
            end--;
        if (end - start == wlen && strncasecmp(value + start, want, wlen) == 0)
            return true;
    }
    return false;
}

static int mock_http_parse_request_line(const char *line, size_t n, mock_http_request_t *out) {
    const char *sp1 = memchr(line, ' ', n);
    if (!sp1 || sp1 == line)
        return 400;
    for (const char *c = line; c < sp1; c++)
        if (!mock_http_token_char((unsigned char)*c))
            return 400;
    size_t mlen = (size_t)(sp1 - line);
    out->method = mlen == 3 && !memcmp(line, "GET", 3)    ? MOCK_HTTP_GET
                  : mlen == 4 && !memcmp(line, "HEAD", 4) ? MOCK_HTTP_HEAD
                  : mlen == 4 && !memcmp(line, "POST", 4) ? MOCK_HTTP_POST
                                                          : MOCK_HTTP_OTHER;
    const char *target = sp1 + 1, *end = line + n;
    const char *sp2 = memchr(target, ' ', (size_t)(end - target));
    if (!sp2 || sp2 == target || *target != '/')
        return 400;
    for (const char *c = target; c < sp2; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c == 0x7f)
            return 400;
    const char *query = memchr(target, '?', (size_t)(sp2 - target));
    out->path = target;
    out->path_len = (size_t)((query ? query : sp2) - target);
    const char *version = sp2 + 1;
    size_t vlen = (size_t)(end - version);
    if (vlen != 8 || memcmp(version, "HTTP/", 5) != 0 || version[6] != '.' || version[5] < '0' ||
        version[5] > '9' || version[7] < '0' || version[7] > '9')
        return 400;
    if (version[5] != '1')
        return 505;
    out->minor_version = version[7] - '0';
    return 0;
}

static int mock_http_parse_length(const char *value, size_t len, size_t *out) {
    if (len == 0 || len > 18)
        return -1;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (value[i] < '0' || value[i] > '9')
            return -1;
        v = v * 10 + (size_t)(value[i] - '0');
    }
    *out = v;
    return 0;
}

/* The hex chunk size at buf[*pos..end) ending in CRLF (chunk extensions after ';' ignored), *pos
 * moved past the CRLF. 1 read; 0 the line is not complete yet; -1 malformed or too large. */
static int mock_http_chunk_size(const char *buf, size_t end, size_t *pos, size_t *size) {
    const char *lf = memchr(buf + *pos, '\n', end - *pos);
    if (!lf) /* a line that long is refused whether or not its end has come */
        return end - *pos > 1024 ? -1 : 0;
    if (lf - (buf + *pos) > 1024)
        return -1;
    size_t v = 0, digits = 0, i = *pos;
    for (; buf + i < lf && isxdigit((unsigned char)buf[i]); i++, digits++) {
        if (v > (SIZE_MAX >> 4))
            return -1;
        int c = tolower((unsigned char)buf[i]);
        v = v * 16 + (size_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (digits == 0 || (buf[i] != ';' && buf[i] != '\r' && buf + i != lf))
        return -1;
    *pos = (size_t)(lf - buf) + 1;
    *size = v;
    return 1;
}

/* Walks a chunked body from buf[start] (RFC 9112 7.1): *end is just past its last trailer line,
 * *decoded the data bytes. MOCK_HTTP_COMPLETE, MOCK_HTTP_INCOMPLETE, 400 or 413. */
static int mock_http_chunked_scan(const char *buf, size_t len, size_t start, size_t max_body,
                                  size_t *end, size_t *decoded) {
    size_t pos = start, size = 0;
    *decoded = 0;
    for (;;) {
        int r = mock_http_chunk_size(buf, len, &pos, &size);
        if (r <= 0)
            return r < 0 ? 400 : MOCK_HTTP_INCOMPLETE;
        if (size == 0)
            break;
        if (size > max_body - *decoded)
            return 413;
        *decoded += size;
        if (len - pos < size + 2)
            return MOCK_HTTP_INCOMPLETE;
        if (buf[pos + size] != '\r' || buf[pos + size + 1] != '\n')
            return 400;
        pos += size + 2;
    }
    for (;;) { /* trailer lines, then the empty line */
        const char *lf = memchr(buf + pos, '\n', len - pos);
        if (!lf)
            return MOCK_HTTP_INCOMPLETE;
        size_t n = (size_t)(lf - (buf + pos));
        pos += n + 1;
        if (n == 0 || (n == 1 && buf[pos - 2] == '\r')) {
            *end = pos;
            return MOCK_HTTP_COMPLETE;
        }
    }
}

size_t mock_http_dechunk(char *body, size_t framed_len) {
    size_t in = 0, out = 0, size = 0;
    while (mock_http_chunk_size(body, framed_len, &in, &size) == 1 && size > 0) {
        memmove(body + out, body + in, size);
        out += size;
        in += size + 2;
    }
    return out;
}

int mock_http_parse(const char *buf, size_t len, size_t max_header, size_t max_body,
                    mock_http_request_t *out) {
    memset(out, 0, sizeof(*out));
    size_t head = mock_http_head_end(buf, len);
    if (!head)
        return len > max_header ? 431 : MOCK_HTTP_INCOMPLETE;
    if (head > max_header)
        return 431;
    size_t pos = 0;
    const char *line;
    size_t n = mock_http_line(buf, head, &pos, &line);
    while (n == 0 && pos < head) /* RFC 9112 2.2: ignore empty lines before the request line */
        n = mock_http_line(buf, head, &pos, &line);
    int status = mock_http_parse_request_line(line, n, out);
    if (status)
        return status;
    bool close = false, keep_alive = false, has_length = false;
    for (;;) {
        n = mock_http_line(buf, head, &pos, &line);
        if (n == 0)
            break;
        if (line[0] == ' ' || line[0] == '\t')
            return 400; /* obsolete line folding */
        const char *colon = memchr(line, ':', n);
        if (!colon || colon == line)
            return 400;
        size_t name_len = (size_t)(colon - line);
        for (size_t i = 0; i < name_len; i++)
            if (!mock_http_token_char((unsigned char)line[i]))
                return 400;
        const char *value = colon + 1, *vend = line + n;
        while (value < vend && (*value == ' ' || *value == '\t'))
            value++;
        while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t'))
            vend--;
        size_t vlen = (size_t)(vend - value);
        if (mock_http_header_is(line, name_len, "content-length")) {
            size_t length;
            if (mock_http_parse_length(value, vlen, &length) < 0)
                return 400;
            if (has_length && length != out->content_length)
                return 400;
            has_length = true;
            out->content_length = length;
        } else if (mock_http_header_is(line, name_len, "transfer-encoding")) {
            /* chunked alone is served; gzip and the rest are not */
            if (out->chunked_body || vlen != 7 || strncasecmp(value, "chunked", 7) != 0)
                return 501;
            out->chunked_body = true;
        } else if (mock_http_header_is(line, name_len, "connection")) {
            if (mock_http_value_has(value, vlen, "close"))
                close = true;
            if (mock_http_value_has(value, vlen, "keep-alive"))
                keep_alive = true;
        } else if (mock_http_header_is(line, name_len, "expect")) {
            if (vlen == 12 && strncasecmp(value, "100-continue", 12) == 0)
                out->expect_continue = true;
        } else if (mock_http_header_is(line, name_len, "x-stampede-preflight")) {
            out->preflight = true;
        }
    }
    /* HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when asked to. */
    out->keep_alive = out->minor_version == 0 ? keep_alive && !close : !close;
    if (out->chunked_body && has_length)
        return 400; /* both framings: a smuggling attempt (RFC 9112 6.3) */
    if (out->method == MOCK_HTTP_POST && !has_length && !out->chunked_body)
        return 411;
    if (out->content_length > max_body)
        return 413;
    out->header_bytes = head;
    out->body = buf + head;
    if (out->chunked_body) {
        size_t end = 0;
        int r = mock_http_chunked_scan(buf, len, head, max_body, &end, &out->content_length);
        out->total_bytes = end;
        return r;
    }
    out->total_bytes = head + out->content_length;
    return len >= out->total_bytes ? MOCK_HTTP_COMPLETE : MOCK_HTTP_INCOMPLETE;
}

int mock_http_format_head(char *buf, size_t cap, int status, const char *content_type,
                          long long content_length, bool closing, const char *extra) {
    char length[64];
    if (content_length >= 0)
        snprintf(length, sizeof(length), "content-length: %lld\r\n", content_length);
    else if (content_length == -1)
        snprintf(length, sizeof(length), "transfer-encoding: chunked\r\n");
    else
        length[0] = '\0'; /* HTTP/1.0: the body ends when the connection closes */
    int n = snprintf(
        buf, cap, "HTTP/1.1 %d %s\r\nserver: stampede-mock\r\ncontent-type: %s\r\n%s%s%s%s\r\n",
        status, http_reason(status), content_type, length, closing ? "connection: close\r\n" : "",
        extra ? extra : "", extra ? "\r\n" : "");
    return n < 0 || (size_t)n >= cap ? -1 : n;
}
