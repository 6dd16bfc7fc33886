/* results.json of some levels in one call (test_report); a run and a sweep add their own
 * objects to report_json's root before they write it. */
#include "support.h"

#include <errno.h>

int report_write_json_levels(const report_level_t *levels, size_t n_levels, const char *path,
                             const report_meta_t *meta) {
    json_t *root = report_json(levels, n_levels, meta);
    if (!root) {
        errno = ENOMEM;
        return -1;
    }
    int rc = report_write_json_root(root, path);
    json_decref(root);
    return rc;
}
