#include "report_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "report.h"
#include "report_csv.h"
#include "report_hgrm.h"
#include "report_html.h"
#include "report_md.h"

json_t *report_cmd_load(const char *dir, char *err, size_t err_len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", dir);
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, err_len, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: not a directory", dir);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        if (access(path, R_OK) != 0)
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
        else
            snprintf(err, err_len, "%s:%d:%d: not JSON: %s", path, jerr.line, jerr.column,
                     jerr.text);
        return NULL;
    }
    const json_t *version = json_object_get(root, "schema_version");
    if (!json_is_integer(version) || json_integer_value(version) != REPORT_SCHEMA_VERSION) {
        if (json_is_integer(version))
            snprintf(err, err_len, "%s: schema_version %lld, this stampede reads %d", path,
                     (long long)json_integer_value(version), REPORT_SCHEMA_VERSION);
        else
            snprintf(err, err_len, "%s: no schema_version: not a stampede results.json", path);
        json_decref(root);
        return NULL;
    }
    if (!json_is_array(json_object_get(root, "levels"))) {
        snprintf(err, err_len, "%s: key \"levels\": not an array", path);
        json_decref(root);
        return NULL;
    }
    return root;
}

typedef int (*report_cmd_render_fn)(const json_t *root, const char *dir, FILE *out, char *err,
                                    size_t err_len);

static int report_cmd_md(const json_t *root, const char *dir, FILE *out, char *err,
                         size_t err_len) {
    report_md_render(root, out);
    return 0;
}

/* Writes DIR/name through render (beside, then renamed: a reader never sees half a file). */
static int report_cmd_write(const char *dir, const char *name, const json_t *root,
                            report_cmd_render_fn render, char *err, size_t err_len) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = outfile_fopen(tmp);
    if (!f) {
        snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    if (render(root, dir, f, err, err_len) != 0) {
        fclose(f);
        unlink(tmp);
        return -1;
    }
    if (ferror(f) | (fclose(f) != 0) || rename(tmp, path) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int report_cmd_render(const char *dir, char *err, size_t err_len) {
    json_t *root = report_cmd_load(dir, err, err_len);
    if (!root)
        return -1;
    int rc = report_cmd_write(dir, "report.md", root, report_cmd_md, err, err_len);
    if (rc == 0)
        rc = report_cmd_write(dir, "results.csv", root, report_csv_render, err, err_len);
    if (rc == 0)
        rc = report_hgrm_write(root, dir, err, err_len);
    if (rc == 0)
        rc = report_cmd_write(dir, "report.html", root, report_html_emit, err, err_len);
    json_decref(root);
    return rc;
}
