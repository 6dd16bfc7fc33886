/* How the requests reached the server, for the table and results.json: the proxy they went
 * through (target.proxy) and whether TLS verified the server (target.tls). A benchmark through a
 * proxy measures the proxy too, and one without verification trusts whoever answered: both are
 * said where the figures are. */
#ifndef STAMPEDE_REPORT_NETWORK_H
#define STAMPEDE_REPORT_NETWORK_H

#include <jansson.h>
#include <stdio.h>

#include "config.h"

/* {"proxy": "none" | "env" | URL, "tls": {"insecure", "ca_file", "client_cert"}}: a new
 * reference (NULL on no memory). */
json_t *report_network_json(const config_target_t *target);
/* The table's lines: "proxy: ..." when one was used, and a WARNING when verification was off;
 * nothing for a direct, verified (or plain HTTP) run. */
void report_network_print(FILE *out, const config_target_t *target);

#endif
