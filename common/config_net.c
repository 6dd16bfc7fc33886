/* target.path, target.tls and target.proxy; and where a request to an endpoint goes. */
#include "config_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redact.h"

static const char *const tls_keys[] = {"ca_file", "insecure", "client_cert", "client_key", NULL};

/* A path key of target.tls, made absolute against the file's directory. */
static int config_net_file(config_yaml_t *r, yaml_node_t *tls, const char *name, char **out) {
    char key[CONFIG_YAML_KEY_MAX], *path = NULL;
    yaml_node_t *v = config_yaml_get(r, tls, name, NULL);
    if (v == NULL)
        return 0;
    config_yaml_path(key, sizeof key, "target.tls", name);
    if (config_yaml_string(r, v, key, &path) < 0)
        return -1;
    if (path[0] == '\0') {
        free(path);
        return config_yaml_fail(r, v, key, "expected the path of a PEM file, got an empty string");
    }
    *out = config_yaml_resolve_path(r, path);
    free(path);
    return *out ? 0 : config_yaml_fail(r, v, key, "out of memory");
}

static int config_net_tls(config_yaml_t *r, yaml_node_t *tls, config_tls_t *self) {
    if (config_yaml_check_keys(r, tls, "target.tls", tls_keys) < 0)
        return -1;
    yaml_node_t *v;
    if ((v = config_yaml_get(r, tls, "insecure", NULL)) &&
        config_yaml_bool(r, v, "target.tls.insecure", &self->insecure) < 0)
        return -1;
    if (config_net_file(r, tls, "ca_file", &self->ca_file) < 0 ||
        config_net_file(r, tls, "client_cert", &self->client_cert) < 0 ||
        config_net_file(r, tls, "client_key", &self->client_key) < 0)
        return -1;
    if (self->insecure && self->ca_file)
        return config_yaml_fail(r, config_yaml_get(r, tls, "ca_file", NULL), "target.tls.ca_file",
                                "insecure: true skips verification, so ca_file would be unused; "
                                "keep one");
    if ((self->client_cert == NULL) != (self->client_key == NULL)) {
        const char *given = self->client_cert ? "client_cert" : "client_key";
        const char *missing = self->client_cert ? "client_key" : "client_cert";
        char key[CONFIG_YAML_KEY_MAX];
        config_yaml_path(key, sizeof key, "target.tls", given);
        return config_yaml_fail(r, config_yaml_get(r, tls, given, NULL), key,
                                "%s is given without %s; mTLS needs both", given, missing);
    }
    return 0;
}

/* proxy: none, env or an http(s):// or socks URL. */
static int config_net_proxy(config_yaml_t *r, yaml_node_t *v, config_target_t *t) {
    const char *text = config_yaml_scalar(r, v, "target.proxy", "none, env or a proxy URL");
    if (text == NULL)
        return -1;
    if (strcmp(text, "none") == 0) {
        t->proxy = CONFIG_PROXY_NONE;
        return 0;
    }
    if (strcmp(text, "env") == 0) {
        t->proxy = CONFIG_PROXY_ENV;
        return 0;
    }
    static const char *const schemes[] = {"http://",   "https://",   "socks4://", "socks4a://",
                                          "socks5://", "socks5h://", NULL};
    bool known = false;
    for (size_t i = 0; schemes[i] && !known; i++)
        known = strncasecmp(text, schemes[i], strlen(schemes[i])) == 0;
    if (!known || strpbrk(text, " \t\r\n"))
        return config_yaml_fail(r, v, "target.proxy",
                                "expected none, env or a proxy URL (http://, https://, socks5://, "
                                "...), got \"%s\"",
                                text);
    t->proxy_url = strdup(text);
    t->proxy = CONFIG_PROXY_URL;
    return t->proxy_url ? 0 : config_yaml_fail(r, v, "target.proxy", "out of memory");
}

/* path: "/..." with no spaces; a query (?api-version=...) may follow. */
static int config_net_path(config_yaml_t *r, yaml_node_t *v, config_target_t *t) {
    char *path = NULL;
    if (config_yaml_string(r, v, "target.path", &path) < 0)
        return -1;
    if (path[0] != '/' || strpbrk(path, " \t\r\n#")) {
        int rc =
            config_yaml_fail(r, v, "target.path",
                             "expected a path from the host's root, e.g. "
                             "/openai/deployments/NAME/chat/completions?api-version=2024-06-01,"
                             " got \"%s\"",
                             path);
        free(path);
        return rc;
    }
    t->path = path;
    return 0;
}

int config_net_parse(config_yaml_t *r, yaml_node_t *target, config_target_t *t) {
    yaml_node_t *v;
    if (target == NULL)
        return 0;
    if ((v = config_yaml_get(r, target, "tls", NULL)) && config_net_tls(r, v, &t->tls) < 0)
        return -1;
    if ((v = config_yaml_get(r, target, "proxy", NULL)) && config_net_proxy(r, v, t) < 0)
        return -1;
    if ((v = config_yaml_get(r, target, "path", NULL)) && config_net_path(r, v, t) < 0)
        return -1;
    if ((v = config_yaml_get(r, target, "preflight", NULL)) &&
        config_yaml_bool(r, v, "target.preflight", &t->preflight) < 0)
        return -1;
    return 0;
}

static char *config_net_dup(const char *s, bool *ok) {
    char *copy = s ? strdup(s) : NULL;
    if (s && !copy)
        *ok = false;
    return copy;
}

int config_net_copy(config_target_t *dst, const config_target_t *src) {
    bool ok = true;
    dst->path = config_net_dup(src->path, &ok);
    dst->proxy_url = config_net_dup(src->proxy_url, &ok);
    dst->tls.ca_file = config_net_dup(src->tls.ca_file, &ok);
    dst->tls.client_cert = config_net_dup(src->tls.client_cert, &ok);
    dst->tls.client_key = config_net_dup(src->tls.client_key, &ok);
    return ok ? 0 : -1;
}

void config_net_free(config_target_t *t) {
    free(t->path);
    free(t->proxy_url);
    free(t->tls.ca_file);
    free(t->tls.client_cert);
    free(t->tls.client_key);
    t->path = t->proxy_url = NULL;
    memset(&t->tls, 0, sizeof t->tls);
    t->proxy = CONFIG_PROXY_NONE;
}
