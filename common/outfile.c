#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(const char *path, int extra_flags) {
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, OUTFILE_MODE);
}

FILE *outfile_fopen(const char *path) {
    int fd = outfile_open(path, 0);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return f;
}

int outfile_make_dir(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

char *outfile_read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    *len = 0;
    FILE *mem = open_memstream(&text, len);
    char buf[65536];
    size_t n;
    while (mem && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, mem);
    int read_error = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (!mem || fclose(mem) != 0 || read_error) {
        free(text);
        errno = read_error ? read_error : ENOMEM;
        return NULL;
    }
    return text;
}
