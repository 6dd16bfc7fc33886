/* net/keys: key files as keygen writes them, the authorized-keys ring, the loopback rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "keys.h"
#include "temp_file.h"
#include "unit_main.h"

/* A fresh temporary directory in dir (PATH_MAX enough). */
static void make_dir(char *dir, size_t len) {
    snprintf(dir, len, "/tmp/stampede-keys.XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* n fresh CURVE public keys (their secrets thrown away). */
static void new_public_keys(char (*pub)[41], int n) {
    char secret[41];
    for (int i = 0; i < n; i++)
        assert_int_equal(zmq_curve_keypair(pub[i], secret), 0);
}

static void test_keys_generate_writes_a_secret_0600_whose_public_key_is_the_pub(void **st) {
    char dir[256], path[300], err[512], secret[41], derived[41], public_key[41];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/alice", dir);
    assert_int_equal(keys_generate(path, err, sizeof err), 0);
    struct stat sb;
    snprintf(path, sizeof path, "%s/alice.key", dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(keys_read_secret(path, secret, derived, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/alice.pub", dir);
    assert_int_equal(keys_read_public(path, public_key, err, sizeof err), 0);
    assert_string_equal(derived, public_key);
    assert_string_not_equal(secret, public_key);
    snprintf(path, sizeof path, "%s/alice", dir);
    assert_int_equal(keys_generate(path, err, sizeof err), -1);
    assert_non_null(strstr(err, "alice.key: File exists"));
    remove_dir(dir);
}

static void test_keys_read_names_the_file_and_line_of_a_bad_key(void **st) {
    char dir[256], path[300], err[512], key[41];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bad.pub", dir);
    temp_file_write_at(path, "# comment\n\nshort\n");
    assert_int_equal(keys_read_public(path, key, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.pub:3: expected a key of 40 Z85 characters"));
    temp_file_write_at(path, "# nothing else\n");
    assert_int_equal(keys_read_public(path, key, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.pub: holds no key"));
    char pub[41], sec[41], text[200];
    assert_int_equal(zmq_curve_keypair(pub, sec), 0);
    snprintf(text, sizeof text, "%s\n%s\n", pub, pub);
    temp_file_write_at(path, text);
    assert_int_equal(keys_read_public(path, key, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.pub:2: a second key line"));
    snprintf(text, sizeof text, "  %s \r\n", pub);
    temp_file_write_at(path, text);
    assert_int_equal(keys_read_public(path, key, err, sizeof err), 0);
    assert_string_equal(key, pub);
    remove_dir(dir);
}

static void test_keys_ring_finds_every_pub_of_the_directory_and_nothing_else(void **st) {
    char dir[256], path[300], err[512], pub[3][41], text[200];
    make_dir(dir, sizeof dir);
    new_public_keys(pub, 3);
    for (int i = 0; i < 2; i++) { /* the third key is not authorized */
        snprintf(path, sizeof path, "%s/w%d.pub", dir, i);
        snprintf(text, sizeof text, "%s\n", pub[i]);
        temp_file_write_at(path, text);
    }
    snprintf(path, sizeof path, "%s/w2.key", dir); /* not a .pub: ignored */
    temp_file_write_at(path, "not a key");
    keys_ring_t *ring = keys_ring_load(dir, err, sizeof err);
    assert_non_null(ring);
    assert_int_equal(keys_ring_count(ring), 2);
    uint8_t binary[32];
    zmq_z85_decode(binary, pub[1]);
    assert_string_equal(keys_ring_user(ring, binary), "w1");
    zmq_z85_decode(binary, pub[2]);
    assert_null(keys_ring_user(ring, binary));
    keys_ring_destroy(&ring);
    assert_null(ring);
    remove_dir(dir);
    make_dir(dir, sizeof dir);
    assert_null(keys_ring_load(dir, err, sizeof err));
    assert_non_null(strstr(err, "no *.pub file there"));
    remove_dir(dir);
}

static void test_keys_ring_user_is_the_name_line_else_the_file_name(void **st) {
    char dir[256], path[300], err[512], pub[2][41], text[200];
    make_dir(dir, sizeof dir);
    new_public_keys(pub, 2);
    snprintf(path, sizeof path, "%s/alice.pub", dir);
    snprintf(text, sizeof text, "# stampede CURVE public key (Z85)\n%s\n", pub[0]);
    temp_file_write_at(path, text);
    snprintf(path, sizeof path, "%s/d-laptop.pub", dir);
    snprintf(text, sizeof text, "# a comment\n#  name:  dave \n%s\n", pub[1]);
    temp_file_write_at(path, text);
    keys_ring_t *ring = keys_ring_load(dir, err, sizeof err);
    assert_non_null(ring);
    uint8_t binary[32];
    zmq_z85_decode(binary, pub[0]);
    assert_string_equal(keys_ring_user(ring, binary), "alice");
    zmq_z85_decode(binary, pub[1]);
    assert_string_equal(keys_ring_user(ring, binary), "dave");
    keys_ring_destroy(&ring);
    snprintf(text, sizeof text, "%s\n# name: dave smith\n", pub[1]);
    temp_file_write_at(path, text);
    assert_null(keys_ring_load(dir, err, sizeof err));
    assert_non_null(strstr(err, "d-laptop.pub:2: name: expected"));
    remove_dir(dir);
}

static void test_keys_endpoint_is_local_only_for_loopback_ipc_and_inproc(void **st) {
    const char *local[] = {
        "tcp://127.0.0.1:5555", "tcp://127.9.8.7:*", "tcp://[::1]:5555", "tcp://localhost:5555",
        "tcp://lo:5555",        "ipc:///tmp/s",      "inproc://x"};
    const char *remote[] = {"tcp://0.0.0.0:5555",  "tcp://*:5555",          "tcp://[::]:5555",
                            "tcp://10.0.0.1:5555", "tcp://controller:5555", "tcp://eth0:5555",
                            "tcp://128.0.0.1:1",   "tcp://noport",          "udp://127.0.0.1:1"};
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        assert_true(keys_endpoint_is_local(local[i]));
    for (size_t i = 0; i < sizeof remote / sizeof *remote; i++)
        assert_false(keys_endpoint_is_local(remote[i]));
}

UNIT_MAIN(cmocka_unit_test(test_keys_generate_writes_a_secret_0600_whose_public_key_is_the_pub),
          cmocka_unit_test(test_keys_read_names_the_file_and_line_of_a_bad_key),
          cmocka_unit_test(test_keys_ring_finds_every_pub_of_the_directory_and_nothing_else),
          cmocka_unit_test(test_keys_ring_user_is_the_name_line_else_the_file_name),
          cmocka_unit_test(test_keys_endpoint_is_local_only_for_loopback_ipc_and_inproc))
