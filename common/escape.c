#include "escape.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int escape_json_append(buffer_t *out, const char *s, size_t len) {
    json_t *string = json_stringn(s, len); /* NULL on invalid UTF-8 */
    char *quoted = string ? json_dumps(string, JSON_ENCODE_ANY) : NULL;
    json_decref(string);
    if (!quoted)
        return -1;
    size_t n = strlen(quoted) - 2; /* without the quotes */
    int rc = buffer_reserve(out, n + 1);
    if (rc == 0) {
        memcpy(out->data + out->len, quoted + 1, n);
        out->len += n;
        out->data[out->len] = '\0';
    }
    free(quoted);
    return rc;
}
