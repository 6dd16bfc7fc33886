/* The main() of a fuzz target built without libFuzzer (any compiler, the normal and the ASan
 * builds): runs LLVMFuzzerTestOneInput once on every file of the corpus directories or files
 * given, each in an exact-size heap copy so a read past its end is caught under ASan. This is
 * how `make test` replays the checked-in corpus. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Runs the target on one file; 0 ok, -1 when it cannot be read. */
static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        fclose(f);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (!data || fread(data, 1, size, f) != size) {
        fprintf(stderr, "%s: cannot read %zu bytes\n", path, size);
        free(data);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

/* Replays every regular file of dir (not recursive); the count replayed, or -1. */
static long replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: %s\n", dir, strerror(errno));
        return -1;
    }
    long n = 0;
    char path[4096];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (replay_file(path) < 0) {
            closedir(d);
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        long n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]) == 0;
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "no input replayed: the corpus is empty\n");
        return 1;
    }
    printf("%s: %ld inputs replayed\n", argv[0], total);
    return 0;
}
