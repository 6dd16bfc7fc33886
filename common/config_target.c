/* The target section's names, its endpoint URLs (checked, normalised, and where a request goes) and
 * which headers are secrets. */
#include "config_target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redact.h"

const char *const config_api_names[] = {"chat", "completions", "messages", "responses", NULL};
const char *const config_routing_names[] = {"round_robin", "sticky", "random", "least_inflight",
                                            NULL};

const char *config_api_name(config_api_t api) {
    return (unsigned)api < CONFIG_API_COUNT ? config_api_names[api] : "?";
}

const char *config_routing_name(config_routing_t routing) {
    return (unsigned)routing < 4 ? config_routing_names[routing] : "?";
}

bool config_header_is_secret(const char *name) {
    static const char *const secret_parts[] = {"auth",   "key",   "token",      "cookie",
                                               "secret", "passw", "credential", NULL};
    char lower[128];
    size_t n = 0;
    for (; name[n] != '\0' && n + 1 < sizeof lower; n++)
        lower[n] = (char)tolower((unsigned char)name[n]);
    lower[n] = '\0';
    for (size_t i = 0; secret_parts[i] != NULL; i++)
        if (strstr(lower, secret_parts[i]) != NULL)
            return true;
    return false;
}

/* The port after the host of a URL's authority (host begins it), when it names one: a whole
 * number from 1 to 65535. 0 ok; -1 with why filled. */
static int endpoint_port_check(const char *url, const char *host, char *why, size_t len) {
    const char *end = host + strcspn(host, "/");
    for (const char *p = host; p < end; p++) /* user:password@ before the host */
        if (*p == '@')
            host = p + 1;
    const char *colon = NULL;
    if (*host == '[') { /* an IPv6 literal: [::1]:8000 */
        const char *close = memchr(host, ']', (size_t)(end - host));
        colon = close && close + 1 < end && close[1] == ':' ? close + 1 : NULL;
    } else {
        for (const char *p = host; p < end; p++)
            if (*p == ':')
                colon = p;
    }
    if (!colon)
        return 0;
    unsigned long port = 0;
    const char *p = colon + 1;
    for (; p < end && *p >= '0' && *p <= '9' && port <= 65535; p++)
        port = port * 10 + (unsigned long)(*p - '0');
    if (p == end && p > colon + 1 && port >= 1 && port <= 65535)
        return 0;
    snprintf(why, len, "URL '%s' names port '%.*s': a port is a whole number from 1 to 65535", url,
             (int)(end - colon - 1), colon + 1);
    return -1;
}

int config_endpoint_check(const char *url, char *why, size_t len) {
    const char *host;
    if (strncasecmp(url, "http://", 7) == 0) {
        host = url + 7;
    } else if (strncasecmp(url, "https://", 8) == 0) {
        host = url + 8;
    } else {
        snprintf(why, len, "expected a URL starting with http:// or https://, got '%s'", url);
        return -1;
    }
    if (host[0] == '\0' || host[0] == '/' || host[0] == ':') {
        snprintf(why, len, "URL '%s' names no host", url);
        return -1;
    }
    for (const char *p = url; *p != '\0'; p++) {
        if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) {
            snprintf(why, len, "URL '%s' contains a space or control character", url);
            return -1;
        }
        config_api_t api;
        if (*p == '#' || (*p == '?' && config_endpoint_api(url, &api) < 0)) {
            snprintf(why, len,
                     "URL '%s' is a base URL and takes no query or fragment (a query may follow a "
                     "whole request URL, .../chat/completions?api-version=..., or target.path)",
                     url);
            return -1;
        }
    }
    return endpoint_port_check(url, host, why, len);
}

char *config_endpoint_normalize(const char *url) {
    char *copy = strdup(url);
    config_api_t api;
    if (copy == NULL || config_endpoint_api(url, &api) == 0)
        return copy;
    size_t n = strlen(copy);
    size_t scheme = strncasecmp(copy, "https://", 8) == 0 ? 8 : 7;
    while (n > scheme + 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    if (n > scheme + 3 && strcmp(copy + n - 3, "/v1") == 0)
        copy[n -= 3] = '\0';
    while (n > scheme + 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    return copy;
}

int config_endpoints_check(char **urls, size_t n, size_t *bad, char *why, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (config_endpoint_check(urls[i], why, len) < 0) {
            if (bad)
                *bad = i;
            return -1;
        }
    char **normal = calloc(n + 1, sizeof *normal);
    int rc = normal ? 0 : -1;
    if (!normal)
        snprintf(why, len, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!(normal[i] = config_endpoint_normalize(urls[i]))) {
            snprintf(why, len, "out of memory");
            rc = -1;
            break;
        }
        /* two entries that normalise alike would share one key in results.json */
        for (size_t j = 0; j < i; j++)
            if (strcmp(normal[i], normal[j]) == 0) {
                snprintf(why, len,
                         "'%s' is the same endpoint as '%s' (both are %s once a trailing / or /v1 "
                         "is dropped); list each endpoint once",
                         urls[i], urls[j], normal[i]);
                if (bad)
                    *bad = i;
                rc = -1;
                break;
            }
    }
    for (size_t i = 0; normal && i < n; i++)
        free(normal[i]);
    free(normal);
    return rc;
}

/* The length of url's path (from the first '/' after the host to a '?' or the end); *start gets
 * where it begins (the end of url when it has none). */
static size_t target_url_path(const char *url, const char **start) {
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    const char *path = host + strcspn(host, "/?#");
    *start = path;
    return strcspn(path, "?#");
}

static bool target_ends_with(const char *s, size_t len, const char *suffix) {
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

const char *config_api_path(config_api_t api) {
    static const char *const paths[CONFIG_API_COUNT] = {"/chat/completions", "/completions",
                                                        "/messages", "/responses"};
    return (unsigned)api < CONFIG_API_COUNT ? paths[api] : "/chat/completions";
}

int config_endpoint_api(const char *url, config_api_t *api) {
    const char *path;
    size_t len = target_url_path(url, &path);
    while (len > 0 && path[len - 1] == '/')
        len--;
    /* chat first: "/chat/completions" also ends with "/completions" */
    static const config_api_t order[] = {API_CHAT, API_COMPLETIONS, API_MESSAGES, API_RESPONSES};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (target_ends_with(path, len, config_api_path(order[i]))) {
            *api = order[i];
            return 0;
        }
    return -1;
}

const char *config_endpoint_base(const char *url, char *buf, size_t len) {
    const char *path;
    size_t n = target_url_path(url, &path);
    config_api_t api;
    if (config_endpoint_api(url, &api) < 0) {
        snprintf(buf, len, "%s", url);
        return buf;
    }
    n += (size_t)(path - url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    n -= strlen(config_api_path(api));
    if (target_ends_with(url, n, "/v1"))
        n -= 3;
    snprintf(buf, len, "%.*s", (int)n, url);
    return buf;
}

int config_target_check(const config_target_t *target, size_t *bad, char *why, size_t len) {
    for (size_t i = 0; i < target->n_endpoints; i++) {
        const char *url = target->endpoints[i];
        config_api_t api;
        if (config_endpoint_api(url, &api) < 0)
            continue;
        if (bad)
            *bad = i;
        if (target->path) {
            snprintf(why, len,
                     "'%s' is a whole request URL and target.path is given as well; give the base "
                     "URL (scheme, host, port) with target.path, or the whole URL without it",
                     url);
            return -1;
        }
        if (api != target->api) {
            snprintf(why, len,
                     "'%s' is a %s URL but target.api is %s; set target.api: %s, or give the "
                     "base URL",
                     url, config_api_path(api), config_api_name(target->api), config_api_name(api));
            return -1;
        }
    }
    return 0;
}

char *config_request_url(const config_target_t *target, const char *base) {
    config_api_t api;
    if (config_endpoint_api(base, &api) == 0)
        return strdup(base);
    size_t len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        len--;
    const char *v1 = "/v1", *path = target->path;
    if (path || (len >= 3 && memcmp(base + len - 3, "/v1", 3) == 0))
        v1 = "";
    if (!path)
        path = config_api_path(target->api);
    size_t cap = len + strlen(v1) + strlen(path) + 1;
    char *url = malloc(cap);
    if (url)
        snprintf(url, cap, "%.*s%s%s", (int)len, base, v1, path);
    return url;
}

const char *config_proxy_label(const config_target_t *target, char *buf, size_t len) {
    if (target->proxy == CONFIG_PROXY_ENV)
        snprintf(buf, len, "env");
    else if (target->proxy != CONFIG_PROXY_URL || !target->proxy_url)
        snprintf(buf, len, "none");
    else {
        /* scheme://user:password@host: the password is a secret */
        const char *url = target->proxy_url, *host = strstr(url, "://");
        host = host ? host + 3 : url;
        const char *at = memchr(host, '@', strcspn(host, "/?#"));
        const char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
        if (colon)
            snprintf(buf, len, "%.*s" REDACT_MARK "%s", (int)(colon + 1 - url), url, at);
        else
            snprintf(buf, len, "%s", url);
    }
    return buf;
}
