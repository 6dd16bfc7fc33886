/* A small HTTP/1.x GET server on a common/loop of its own, for the live Prometheus endpoint: every
 * socket is non-blocking, each connection answers one request and closes, and a connection that
 * does not finish within LIVE_HTTP_TIMEOUT_NS is dropped, so a slow or stuck scraper never holds
 * the controller. Its loop's descriptor is polled by the controller beside the ZeroMQ sockets. */
#ifndef STAMPEDE_LIVE_HTTP_H
#define STAMPEDE_LIVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "buffer.h"

#define LIVE_HTTP_TIMEOUT_NS 10000000000LL /* one request, read and answered */
#define LIVE_HTTP_MAX_CONNECTIONS 32       /* more at once are closed on accept */
#define LIVE_HTTP_MAX_HEAD 8192            /* a longer request head is answered 431 */
#define LIVE_HTTP_MAX_FILE (512LL << 20)   /* a larger file is answered 413 */
#define LIVE_HTTP_MAX_TOKEN 512            /* --metrics-token-file's token, characters */

typedef struct live_http live_http_t;

/* Who may ask. A listener that other machines can reach needs a token or an explicit insecure:
 * the port serves the run's figures and, with --linger, its whole results directory. */
typedef struct {
    const char *token_file; /* every request must carry "Authorization: Bearer T", T the file's
                               first line; NULL: no token */
    bool insecure;          /* allow an address beyond loopback without a token */
} live_http_access_t;

/* Writes the body for a GET (or HEAD) of path[0..len) into out; returns the HTTP status. path
 * points into the request line: when a query string follows, path[len] is '?' and the query runs
 * to the next space (live_http_query reads it).
 * *content_type starts as the Prometheus text type; the function may point it elsewhere. */
typedef int (*live_http_render_fn)(void *arg, const char *path, size_t len, buffer_t *out,
                                   const char **content_type);

/* The query string of a render_fn's path[0..len) (after the '?', up to the space that ends the
 * request target) and its length into *query_len; "" and 0 when there is none. */
const char *live_http_query(const char *path, size_t len, size_t *query_len);

/* Listens on listen ("HOST:PORT", "[V6]:PORT"; port 0 picks a free one) under access (NULL: no
 * token, loopback only). NULL with the reason in why when the address is malformed or cannot be
 * bound, when it reaches beyond loopback with neither a token nor insecure, or when the token file
 * cannot be read or is empty. A request without the token is answered 401. The caller destroys
 * it. */
live_http_t *live_http_new(const char *listen, const live_http_access_t *access,
                           live_http_render_fn render, void *arg, char *why, size_t len);
/* Whether the listener is open beyond loopback without a token (the caller warns). */
bool live_http_open_to_all(const live_http_t *self);
/* Closes the listener and every connection, frees, sets *self_p to NULL (NULL is fine). */
void live_http_destroy(live_http_t **self_p);
/* The bound address with its real port, e.g. "127.0.0.1:40123" or "[::1]:40123". */
const char *live_http_address(const live_http_t *self);
/* A descriptor readable while the server has work (to poll from outside). */
int live_http_fd(const live_http_t *self);
/* Does the work that is ready (accepts, reads, answers, timeouts) without waiting. */
void live_http_poll(live_http_t *self);
/* Serves rel[0..len) (the request path after a prefix, e.g. "run-1/results.json") read-only from
 * the directory root into out: a regular file's bytes with its content type, or a directory's
 * listing (one name a line, directories with a trailing '/'). 404 for anything that is not there
 * or not beneath root: a component that is empty, starts with '.' (no "..", no hidden files),
 * holds '%' or '\\', or a symbolic link leading out of root; 413 past LIVE_HTTP_MAX_FILE. */
int live_http_file(const char *root, const char *rel, size_t len, buffer_t *out,
                   const char **content_type);

#endif
