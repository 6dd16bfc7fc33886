#include "report_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definitions.h"
#include "outfile.h"
#include "report.h"
#include "report_csv.h"
#include "report_hgrm.h"
#include "report_html.h"
#include "report_md.h"

static void report_cmd_usage(FILE *out) {
    fprintf(out,
            "usage: stampede report DIR [DIR...] [--definitions vllm,aiperf,guidellm,sglang]\n\n"
            "Reads DIR/results.json (a run's or a sweep's, schema_version %d) and writes\n"
            "DIR/report.md, DIR/report.html (charts: inline SVG, no network reference; a single\n"
            "run's per-request charts from DIR/requests.jsonl, written with --trace),\n"
            "DIR/results.csv and DIR/hgrm/NN-LEVEL-METRIC.hgrm (docs/reports.md). A run and a\n"
            "sweep write them at their end too; this re-renders them, byte for byte the same\n"
            "from the same results.json.\n\n"
            "--definitions LIST  also prints TTFT, TPOT, ITL and output tok/s as each tool of\n"
            "                    LIST defines them, recomputed from DIR/requests.jsonl (a run\n"
            "                    with --trace): docs/metrics.md section 15\n",
            REPORT_SCHEMA_VERSION);
}

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

/* Takes `--definitions LIST` out of argv (it may follow the directories); NULL when absent, ""
 * when LIST is missing. */
static const char *report_cmd_take_definitions(int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--definitions") != 0)
            continue;
        const char *list = i + 1 < *argc ? argv[i + 1] : "";
        int taken = i + 1 < *argc ? 2 : 1;
        memmove(&argv[i], &argv[i + taken], (size_t)(*argc - i - taken + 1) * sizeof *argv);
        *argc -= taken;
        return list;
    }
    return NULL;
}

int report_cmd_main(int argc, char **argv) {
    const char *definitions = report_cmd_take_definitions(&argc, argv);
    char why[256];
    if (definitions && definitions_check(definitions, why, sizeof why) != 0) {
        fprintf(stderr, "report: %s\n", why);
        return 2;
    }
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
            report_cmd_usage(stdout);
            return 0;
        }
        fprintf(stderr, "report: unknown option '%s'\n\n", argv[first]);
        report_cmd_usage(stderr);
        return 2;
    }
    if (first >= argc) {
        report_cmd_usage(stderr);
        return 2;
    }
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char err[4400];
        if (report_cmd_render(argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "report: %s\n", err);
            rc = 1;
            continue;
        }
        printf("report: %s/report.md\n", argv[i]);
        if (definitions && definitions_report(argv[i], definitions, stdout, err, sizeof err) != 0) {
            fprintf(stderr, "report: %s\n", err);
            rc = 1;
        }
    }
    return rc;
}
