/* CURVE key files, as `stampede keygen NAME` writes them (docs/security.md): NAME.key holds the
 * secret key and NAME.pub the public key, each as one line of 40 Z85 characters (libzmq's
 * zmq_curve_keypair); blank lines and lines starting with '#' are comments, and a comment
 * "# name: NAME" names the key's owner (a rig's user, docs/rig.md). The controller admits the
 * workers whose NAME.pub files are in its --authorized-keys directory. */
#ifndef STAMPEDE_KEYS_H
#define STAMPEDE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEYS_Z85_LEN 40 /* a 32-byte key in Z85 */
#define KEYS_BINARY_LEN 32
#define KEYS_NAME_MAX 64 /* a key's owner's name, with its NUL */

/* The public keys of a --authorized-keys directory. */
typedef struct keys_ring keys_ring_t;

/* Writes DIR/NAME.key (mode 0600) and NAME.pub (mode 0644) for path "DIR/NAME" with a fresh key
 * pair; never overwrites an existing file. 0 ok; -1 with "path: why" in err. */
int keys_generate(const char *path, char *err, size_t errlen);
/* Reads a secret key file into secret_z85 and derives its public key into public_z85 (each 41
 * bytes with the NUL). 0 ok; -1 with "path:line: why" in err. */
int keys_read_secret(const char *path, char *secret_z85, char *public_z85, char *err,
                     size_t errlen);
/* Reads a public key file into public_z85 (41 bytes with the NUL). 0 ok; -1 with the reason. */
int keys_read_public(const char *path, char *public_z85, char *err, size_t errlen);

/* Loads every *.pub in dir (none there, or a bad one, is an error naming it). NULL with the
 * reason in err. The caller destroys it. */
keys_ring_t *keys_ring_load(const char *dir, char *err, size_t errlen);
/* Frees and sets *self_p to NULL (NULL is fine). */
void keys_ring_destroy(keys_ring_t **self_p);
/* The owner of the 32-byte binary key: its file's "# name:" line, else the file's name without
 * ".pub" ("alice.pub": alice); NULL when it is not there. */
const char *keys_ring_user(const keys_ring_t *self, const uint8_t *key);
/* How many keys the ring holds. */
size_t keys_ring_count(const keys_ring_t *self);

/* True when an endpoint ("tcp://HOST:PORT", "ipc://...", "inproc://...") cannot be reached from
 * another machine: ipc, inproc, or a TCP host of 127.0.0.0/8, ::1, "localhost" or "lo". */
bool keys_endpoint_is_local(const char *endpoint);

#endif
