#include "curl_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks that path can be opened for reading; -1 with why naming key. */
static int curl_net_readable(const char *key, const char *path, char *why, size_t len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, len, "%s: cannot read %s: %s", key, path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

static int curl_net_copy(char **dst, const char *src, char *why, size_t len) {
    if (!src)
        return 0;
    if (!(*dst = strdup(src))) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    return 0;
}

/* The first of the variables that is set and not empty, and its name in *name. */
static const char *curl_net_env(const char *const *names, const char **name) {
    for (size_t i = 0; names[i]; i++) {
        const char *value = getenv(names[i]);
        if (value && value[0]) {
            *name = names[i];
            return value;
        }
    }
    return NULL;
}

int curl_net_init(curl_net_t *self, const config_target_t *target, char *why, size_t len) {
    static const char *const bundle_vars[] = {"SSL_CERT_FILE", "CURL_CA_BUNDLE", NULL};
    static const char *const dir_vars[] = {"SSL_CERT_DIR", NULL};
    memset(self, 0, sizeof *self);
    self->insecure = target->tls.insecure;
    self->proxy = target->proxy;
    const char *ca = target->tls.ca_file, *dir = NULL, *dir_var = NULL;
    self->trust = "target.tls.ca_file";
    if (!ca && !self->insecure) {
        ca = curl_net_env(bundle_vars, &self->trust);
        dir = curl_net_env(dir_vars, &dir_var);
    }
    if (curl_net_copy(&self->ca_file, ca, why, len) < 0 ||
        curl_net_copy(&self->ca_dir, dir, why, len) < 0 ||
        curl_net_copy(&self->client_cert, target->tls.client_cert, why, len) < 0 ||
        curl_net_copy(&self->client_key, target->tls.client_key, why, len) < 0 ||
        curl_net_copy(&self->proxy_url, target->proxy_url, why, len) < 0 ||
        (self->ca_file && curl_net_readable(self->trust, self->ca_file, why, len) < 0) ||
        (self->client_cert &&
         curl_net_readable("target.tls.client_cert", self->client_cert, why, len) < 0) ||
        (self->client_key &&
         curl_net_readable("target.tls.client_key", self->client_key, why, len) < 0)) {
        curl_net_free(self);
        return -1;
    }
    if (!self->ca_file)
        self->trust = NULL;
    return 0;
}

void curl_net_free(curl_net_t *self) {
    free(self->ca_file);
    free(self->ca_dir);
    free(self->client_cert);
    free(self->client_key);
    free(self->proxy_url);
    memset(self, 0, sizeof *self);
}

void curl_net_apply(const curl_net_t *self, CURL *easy) {
    if (self && self->ca_file)
        curl_easy_setopt(easy, CURLOPT_CAINFO, self->ca_file);
    if (self && self->ca_dir)
        curl_easy_setopt(easy, CURLOPT_CAPATH, self->ca_dir);
    if (self && self->insecure) {
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (self && self->client_cert) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, self->client_cert);
        curl_easy_setopt(easy, CURLOPT_SSLKEY, self->client_key);
    }
    config_proxy_t proxy = self ? self->proxy : CONFIG_PROXY_NONE;
    if (proxy == CONFIG_PROXY_URL) {
        curl_easy_setopt(easy, CURLOPT_PROXY, self->proxy_url);
        curl_easy_setopt(easy, CURLOPT_NOPROXY, ""); /* $no_proxy does not override the file */
    } else if (proxy == CONFIG_PROXY_NONE) {
        /* "" turns off the proxy environment (http_proxy, all_proxy, ...) as well */
        curl_easy_setopt(easy, CURLOPT_PROXY, "");
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
    }
}
