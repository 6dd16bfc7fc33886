#include "keys.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "error_text.h"

struct keys_ring {
    size_t count;
    uint8_t (*keys)[KEYS_BINARY_LEN];
    char **users; /* its "# name:" line's, else the file's name without ".pub" */
};

/* Writes text into a new file of the given mode (never an existing one). */
static int write_new(const char *path, mode_t mode, const char *text, char *err, size_t errlen) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return error_text_fail(err, errlen, "%s: %s%s", path, strerror(errno),
                               errno == EEXIST ? " (remove it first: keygen never overwrites a key)"
                                               : "");
    size_t len = strlen(text);
    int rc = write(fd, text, len) == (ssize_t)len && fchmod(fd, mode) == 0 ? 0 : -1;
    if (close(fd) != 0 || rc != 0) {
        error_text_fail(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
        unlink(path);
        return -1;
    }
    return 0;
}

int keys_generate(const char *path, char *err, size_t errlen) {
    char public_z85[KEYS_Z85_LEN + 1], secret_z85[KEYS_Z85_LEN + 1];
    if (zmq_curve_keypair(public_z85, secret_z85) != 0)
        return error_text_fail(err, errlen,
                               "cannot make a key pair: %s (libzmq built without CURVE?)",
                               zmq_strerror(errno));
    size_t n = strlen(path) + 5;
    char *key_path = malloc(n), *pub_path = malloc(n);
    char key_text[256], pub_text[256];
    int rc = -1;
    if (!key_path || !pub_path) {
        error_text_fail(err, errlen, "out of memory");
        goto out;
    }
    snprintf(key_path, n, "%s.key", path);
    snprintf(pub_path, n, "%s.pub", path);
    snprintf(key_text, sizeof key_text,
             "# stampede CURVE secret key (Z85). Keep it private: mode 0600, never shared.\n%s\n",
             secret_z85);
    snprintf(pub_text, sizeof pub_text, "# stampede CURVE public key (Z85)\n%s\n", public_z85);
    if (write_new(key_path, 0600, key_text, err, errlen) != 0)
        goto out;
    if (write_new(pub_path, 0644, pub_text, err, errlen) != 0) {
        unlink(key_path);
        goto out;
    }
    rc = 0;
out:
    memset(secret_z85, 0, sizeof secret_z85);
    memset(key_text, 0, sizeof key_text);
    free(key_path);
    free(pub_path);
    return rc;
}

/* A "# name: NAME" comment line's NAME into name (len bytes; untouched when the line is another
 * comment): 0, or -1 with "path:line: name: why" when the name is empty or holds other than
 * letters, digits and ._@- (it is logged and recorded as the user). */
static int read_name(const char *comment, const char *path, int lineno, char *name, size_t len,
                     char *err, size_t errlen) {
    const char *p = comment + 1 + strspn(comment + 1, " \t");
    if (strncmp(p, "name:", 5) != 0)
        return 0;
    p += 5 + strspn(p + 5, " \t");
    size_t n = strlen(p);
    bool plain = n > 0 && n < len && n < KEYS_NAME_MAX;
    for (size_t i = 0; plain && i < n; i++)
        plain = isalnum((unsigned char)p[i]) || strchr("._@-", p[i]);
    if (!plain)
        return error_text_fail(err, errlen,
                               "%s:%d: name: expected 1 to %d letters, digits or ._@- (the user's "
                               "name), got \"%s\"",
                               path, lineno, KEYS_NAME_MAX - 1, p);
    memcpy(name, p, n + 1);
    return 0;
}

/* The one key line of a key file: 40 Z85 characters that decode, into z85 (41 bytes); and, when
 * name is not NULL, its "# name:" line's name into name (name_len bytes; "" when none). */
static int read_key(const char *path, char *z85, char *name, size_t name_len, char *err,
                    size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f)
        return error_text_fail(err, errlen, "%s: %s", path, strerror(errno));
    char line[512];
    int lineno = 0, rc = -1;
    bool found = false;
    if (name)
        name[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line, *end = line + strlen(line);
        while (isspace((unsigned char)*p))
            p++;
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (*p == '#' && name && read_name(p, path, lineno, name, name_len, err, errlen) != 0)
            goto out;
        if (!*p || *p == '#')
            continue;
        if (found) {
            error_text_fail(err, errlen, "%s:%d: a second key line (a key file holds one key)",
                            path, lineno);
            goto out;
        }
        uint8_t binary[KEYS_BINARY_LEN];
        if (end - p != KEYS_Z85_LEN || !zmq_z85_decode(binary, p)) {
            error_text_fail(err, errlen,
                            "%s:%d: expected a key of %d Z85 characters (stampede keygen)", path,
                            lineno, KEYS_Z85_LEN);
            goto out;
        }
        memcpy(z85, p, KEYS_Z85_LEN + 1);
        found = true;
    }
    if (ferror(f))
        error_text_fail(err, errlen, "%s: %s", path, strerror(errno));
    else if (!found)
        error_text_fail(err, errlen,
                        "%s: holds no key (stampede keygen writes NAME.key and NAME.pub)", path);
    else
        rc = 0;
out:
    memset(line, 0, sizeof line);
    fclose(f);
    return rc;
}

int keys_read_secret(const char *path, char *secret_z85, char *public_z85, char *err,
                     size_t errlen) {
    if (read_key(path, secret_z85, NULL, 0, err, errlen) != 0)
        return -1;
    if (zmq_curve_public(public_z85, secret_z85) != 0)
        return error_text_fail(err, errlen, "%s: cannot derive the public key: %s", path,
                               zmq_strerror(errno));
    return 0;
}

int keys_read_public(const char *path, char *public_z85, char *err, size_t errlen) {
    return read_key(path, public_z85, NULL, 0, err, errlen);
}

static bool is_pub_file(const char *name) {
    size_t n = strlen(name);
    return n > 4 && name[0] != '.' && strcmp(name + n - 4, ".pub") == 0;
}

static int ring_add(keys_ring_t *self, const char *dir, const char *name, char *err,
                    size_t errlen) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    char z85[KEYS_Z85_LEN + 1], user[KEYS_NAME_MAX];
    if (!path)
        return error_text_fail(err, errlen, "out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    int rc = read_key(path, z85, user, sizeof user, err, errlen);
    free(path);
    if (rc != 0)
        return -1;
    if (!user[0])
        snprintf(user, sizeof user, "%.*s", (int)(strlen(name) - 4), name);
    void *keys = realloc(self->keys, (self->count + 1) * sizeof *self->keys);
    if (keys)
        self->keys = keys;
    void *users = realloc(self->users, (self->count + 1) * sizeof *self->users);
    if (users)
        self->users = users;
    if (!keys || !users || !(self->users[self->count] = strdup(user)))
        return error_text_fail(err, errlen, "out of memory");
    zmq_z85_decode(self->keys[self->count], z85);
    self->count++;
    return 0;
}

keys_ring_t *keys_ring_load(const char *dir, char *err, size_t errlen) {
    DIR *d = opendir(dir);
    if (!d) {
        error_text_fail(err, errlen, "--authorized-keys %s: %s", dir, strerror(errno));
        return NULL;
    }
    keys_ring_t *self = calloc(1, sizeof *self);
    if (!self)
        error_text_fail(err, errlen, "out of memory");
    struct dirent *e;
    while (self && (e = readdir(d)))
        if (is_pub_file(e->d_name) && ring_add(self, dir, e->d_name, err, errlen) != 0)
            keys_ring_destroy(&self);
    closedir(d);
    if (self && !self->count) {
        error_text_fail(
            err, errlen,
            "--authorized-keys %s: no *.pub file there (stampede keygen NAME writes NAME.pub; "
            "copy each worker's NAME.pub into it)",
            dir);
        keys_ring_destroy(&self);
    }
    return self;
}

void keys_ring_destroy(keys_ring_t **self_p) {
    keys_ring_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free(self->users[i]);
    free(self->users);
    free(self->keys);
    free(self);
    *self_p = NULL;
}

const char *keys_ring_user(const keys_ring_t *self, const uint8_t *key) {
    for (size_t i = 0; i < self->count; i++)
        if (memcmp(self->keys[i], key, KEYS_BINARY_LEN) == 0)
            return self->users[i];
    return NULL;
}

size_t keys_ring_count(const keys_ring_t *self) {
    return self->count;
}

bool keys_endpoint_is_local(const char *endpoint) {
    if (!strncmp(endpoint, "ipc://", 6) || !strncmp(endpoint, "inproc://", 9))
        return true;
    if (strncmp(endpoint, "tcp://", 6) != 0)
        return false;
    const char *host = endpoint + 6, *colon = strrchr(host, ':');
    if (!colon)
        return false;
    char h[256];
    size_t n = (size_t)(colon - host);
    if (n >= sizeof h)
        return false;
    memcpy(h, host, n);
    h[n] = '\0';
    char *name = h;
    if (name[0] == '[' && n >= 2 && name[n - 1] == ']') {
        name[n - 1] = '\0';
        name++;
    }
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, name, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, name, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return !strcmp(name, "localhost") || !strcmp(name, "lo");
}
