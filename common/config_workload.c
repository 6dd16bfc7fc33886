#include "config_workload.h"

#include <stdlib.h>
#include <string.h>

const char *const config_workload_kind_names[] = {"requests", "chat", "graph", "trace", NULL};

const char *config_workload_kind_name(config_workload_kind_t kind) {
    return (unsigned)kind < 4 ? config_workload_kind_names[kind] : "?";
}

const char *config_workload_role_name(const config_workload_t *self, uint32_t i) {
    return i < self->n_roles ? self->roles[i] : NULL;
}

int config_workload_role_index(config_workload_t *w, const char *name, uint32_t *index) {
    for (size_t i = 0; i < w->n_roles; i++)
        if (strcmp(w->roles[i], name) == 0) {
            *index = (uint32_t)i;
            return 0;
        }
    char **roles = realloc(w->roles, (w->n_roles + 2) * sizeof *roles);
    if (roles == NULL)
        return -1;
    w->roles = roles;
    if ((roles[w->n_roles] = strdup(name)) == NULL)
        return -1;
    roles[w->n_roles + 1] = NULL;
    *index = (uint32_t)w->n_roles++;
    return 0;
}
