#include "redact.h"

#include <string.h>

size_t redact_text(char *text, size_t cap, const char *secret) {
    size_t n = secret ? strlen(secret) : 0, mark = strlen(REDACT_MARK), count = 0;
    if (n < REDACT_MIN_LEN || cap == 0)
        return 0;
    char *at = text;
    while ((at = strstr(at, secret)) != NULL) {
        size_t head = (size_t)(at - text), tail = strlen(at + n);
        size_t keep = mark < cap - 1 - head ? mark : cap - 1 - head; /* room for the mark */
        size_t room = cap - 1 - head - keep;
        size_t moved = tail < room ? tail : room;
        memmove(at + keep, at + n, moved);
        memcpy(at, REDACT_MARK, keep);
        at[keep + moved] = '\0';
        at += keep;
        count++;
    }
    return count;
}
