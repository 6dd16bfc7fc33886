/* A file a unit test reads: text written to a fresh file under /tmp, or to a path of the test's
 * own. Header-only (static functions) because each tests/unit/test_*.c is a program of its own;
 * include after cmocka.h. */
#ifndef STAMPEDE_TEST_TEMP_FILE_H
#define STAMPEDE_TEST_TEMP_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a fresh file named from path, a mkstemp template ("/tmp/name-XXXXXX") that is
 * replaced by the file's name; the caller unlinks it. */
static inline void temp_file_write(char *path, const char *text) {
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* Writes text to the file at path, created or emptied first. */
static inline void temp_file_write_at(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
