/* The network keys of target: `path`, `tls` (ca_file, insecure, client_cert, client_key) and
 * `proxy`. Internal to common/config*.c; the public side (config_tls_t, config_proxy_t,
 * config_request_url) is in config_target.h; config_write.c writes them back. */
#ifndef STAMPEDE_CONFIG_NET_H
#define STAMPEDE_CONFIG_NET_H

#include "config_target.h"
#include "config_yaml.h"

/* RFC 9110 token characters, at least one. */
bool config_header_name_valid(const char *name);
/* Reads path, tls, proxy, preflight, session_header and replica_header of the target mapping (may
 * be NULL) into *t. 0 ok; -1 with r->err filled at the offending key. */
int config_net_parse(config_yaml_t *r, yaml_node_t *target, config_target_t *t);
/* Deep copy of src's network keys into dst (whose other fields are already copied); 0 ok, -1 on
 * allocation failure. */
int config_net_copy(config_target_t *dst, const config_target_t *src);
/* Frees the network keys of *t. */
void config_net_free(config_target_t *t);

#endif
