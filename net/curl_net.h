/* How a curl easy handle reaches the target: whom it trusts (target.tls, else $SSL_CERT_FILE,
 * $CURL_CA_BUNDLE, $SSL_CERT_DIR, else the system store), what it presents (mTLS), and which proxy
 * it uses (none unless target.proxy asks: the proxy environment is ignored by default). */
#ifndef STAMPEDE_CURL_NET_H
#define STAMPEDE_CURL_NET_H

#include <curl/curl.h>
#include <stddef.h>

#include "config.h"

typedef struct curl_net {
    char *ca_file;     /* CURLOPT_CAINFO, or NULL: curl's default bundle */
    char *ca_dir;      /* CURLOPT_CAPATH ($SSL_CERT_DIR without a ca_file), or NULL */
    const char *trust; /* where ca_file came from: "target.tls.ca_file", "SSL_CERT_FILE", ... */
    bool insecure;     /* no peer or host name verification */
    char *client_cert; /* CURLOPT_SSLCERT (PEM), or NULL */
    char *client_key;  /* CURLOPT_SSLKEY (PEM), or NULL */
    config_proxy_t proxy;
    char *proxy_url;
} curl_net_t;

/* Fills *self from target and this process's environment, and checks that every file it names
 * can be read here (the paths are read on the host that sends the requests). 0 ok; -1 with why
 * naming the key or variable, the file and the reason (*self then holds nothing). */
int curl_net_init(curl_net_t *self, const config_target_t *target, char *why, size_t len);
/* Frees what *self holds and zeroes it. */
void curl_net_free(curl_net_t *self);
/* Sets the TLS and proxy options of easy. self NULL: the system store, no proxy. The strings stay
 * *self's: it must outlive the handle's transfers. */
void curl_net_apply(const curl_net_t *self, CURL *easy);

#endif
