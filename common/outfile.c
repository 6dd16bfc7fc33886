#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
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
