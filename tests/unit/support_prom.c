/* A page's "# TYPE" lines, looked up (test_prom_parse). */
#include "support.h"

#include <string.h>

const char *prom_page_type(const prom_page_t *self, const char *name) {
    for (size_t i = self->n_types; i-- > 0;)
        if (strcmp(self->type_names[i], name) == 0)
            return self->type_values[i];
    return NULL;
}
