/* The reason phrase of an HTTP status code, as the mock and the controller's metrics server write
 * it in their status lines (RFC 9110's names). */
#ifndef STAMPEDE_HTTP_REASON_H
#define STAMPEDE_HTTP_REASON_H

/* "OK", "Not Found", ...; "Client Error" or "Server Error" for a code it does not name. Static. */
const char *http_reason(int status);

#endif
