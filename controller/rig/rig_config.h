/* The rig's own file (`stampede serve --config rig.yaml`, docs/rig.md): its target groups (a name,
 * the endpoint URLs a run on that group loads and, optionally, how many workers such a run takes:
 * `g: [url, ...]` or `g: {endpoints: [url, ...], workers: N}`), its admins (user names: key file
 * names without .pub) and its retention (runs kept by count and age; pinned runs are always kept).
 */
#ifndef STAMPEDE_RIG_CONFIG_H
#define STAMPEDE_RIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIG_GROUP_MAX_WORKERS 100000

typedef struct rig_group {
    char *name;
    char **urls;
    size_t n_urls;
    uint32_t workers; /* groups.NAME.workers: the workers a run on it takes (0: the rig's share) */
} rig_group_t;

typedef struct rig_config {
    rig_group_t *groups;
    size_t n_groups;
    char **admins;
    size_t n_admins;
    uint32_t keep_runs; /* retention.keep: finished runs kept (0: all) */
    int64_t keep_age_s; /* retention.max_age: finished runs older are removed (0: never) */
} rig_config_t;

/* Loads path into *self (zeroed here). 0 ok; -1 with "path:line:column: key: why" in err. */
int rig_config_load(rig_config_t *self, const char *path, char *err, size_t errlen);
/* Frees what *self owns. */
void rig_config_free(rig_config_t *self);
/* The group called name, or NULL. */
const rig_group_t *rig_config_group(const rig_config_t *self, const char *name);
/* Whether user is in admins. */
bool rig_config_is_admin(const rig_config_t *self, const char *user);

#endif
