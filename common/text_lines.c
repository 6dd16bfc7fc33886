#include "text_lines.h"

#include <stdlib.h>
#include <sys/types.h>

int text_lines_each(FILE *f, text_lines_fn fn, void *arg) {
    char *text = NULL;
    size_t cap = 0;
    ssize_t len;
    int line = 0, rc = 0;
    while (rc == 0 && (len = getline(&text, &cap, f)) >= 0) {
        line++;
        size_t n = (size_t)len;
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
            n--;
        if (n > 0)
            rc = fn(arg, line, text, n);
    }
    free(text);
    return rc;
}
