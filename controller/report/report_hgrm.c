#include "report_hgrm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"
#include "report_doc.h"

/* HdrHistogram's layout as ours: 2048 sub-buckets (3 significant digits), 32 buckets. */
#define REPORT_HGRM_BUCKETS 32
#define REPORT_HGRM_SUB_BUCKETS 2048
#define REPORT_HGRM_TICKS_PER_HALF_DISTANCE 5

static const char *const report_hgrm_metrics[] = {"ttft", "ttfc", "tpot", "itl", "e2e"};

/* The next percentile to report after level, as HdrHistogram's PercentileIterator steps. */
static double report_hgrm_next_level(double level) {
    double halvings = floor(log(100.0 / (100.0 - level)) / log(2));
    double ticks = REPORT_HGRM_TICKS_PER_HALF_DISTANCE * pow(2, halvings + 1);
    return level + 100.0 / ticks;
}

/* The standard deviation over the buckets (each bucket's values at its upper bound, as the
 * export reports them), around mean. */
static double report_hgrm_stddev(const json_t *buckets, double mean, uint64_t total) {
    double sum = 0;
    size_t i;
    const json_t *b;
    json_array_foreach(buckets, i, b) {
        double d = json_number_value(json_array_get(b, 0)) - mean;
        sum += d * d * (double)json_integer_value(json_array_get(b, 1));
    }
    return total ? sqrt(sum / (double)total) : 0;
}

int report_hgrm_render(const json_t *block, FILE *out) {
    const json_t *buckets = json_object_get(block, "buckets");
    uint64_t total = 0;
    size_t i;
    const json_t *b;
    json_array_foreach(buckets, i, b) total += (uint64_t)json_integer_value(json_array_get(b, 1));
    if (!json_is_array(buckets) || total == 0)
        return -1;
    fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
            "1/(1-Percentile)");
    double level = 0;
    uint64_t cumulative = 0;
    double last = 0;
    json_array_foreach(buckets, i, b) {
        uint64_t count = (uint64_t)json_integer_value(json_array_get(b, 1));
        double value = json_number_value(json_array_get(b, 0));
        if (count == 0)
            continue;
        cumulative += count;
        last = value;
        /* Every percentile step this bucket reaches is a row, until the last value is reached. */
        while (100.0 * (double)cumulative / (double)total >= level) {
            fprintf(out, "%12.3f %2.12f %10" PRIu64 " %14.2f\n", value, level / 100, cumulative,
                    1 / (1 - level / 100));
            level = report_hgrm_next_level(level);
            if (cumulative == total)
                break;
        }
    }
    fprintf(out, "%12.3f %2.12f %10" PRIu64 "\n", last, 1.0, total);
    double mean = report_doc_number(block, "mean");
    double max = report_doc_number(block, "max");
    fprintf(out, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", isnan(mean) ? 0 : mean,
            report_hgrm_stddev(buckets, isnan(mean) ? 0 : mean, total));
    fprintf(out, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n", isnan(max) ? last : max,
            total);
    fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", REPORT_HGRM_BUCKETS,
            REPORT_HGRM_SUB_BUCKETS);
    return 0;
}

/* Writes one file (beside, then renamed). 0 ok, 1 nothing to write, -1 with err. */
static int report_hgrm_file(const json_t *block, const char *path, char *err, size_t err_len) {
    const json_t *buckets = json_object_get(block, "buckets");
    if (!json_is_array(buckets) || json_array_size(buckets) == 0)
        return 1;
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = outfile_fopen(tmp);
    if (!f) {
        snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    int rendered = report_hgrm_render(block, f);
    if (ferror(f) | (fclose(f) != 0) || (rendered == 0 && rename(tmp, path) != 0)) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rendered != 0)
        unlink(tmp);
    return rendered == 0 ? 0 : 1;
}

int report_hgrm_write(const json_t *root, const char *dir, char *err, size_t err_len) {
    const json_t *levels = json_object_get(root, "levels");
    char hgrm[4096], path[4300], name[64], key[32];
    snprintf(hgrm, sizeof hgrm, "%s/hgrm", dir);
    bool made = false;
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        report_doc_level_name(root, i, name, sizeof name);
        for (size_t m = 0; m < sizeof report_hgrm_metrics / sizeof report_hgrm_metrics[0]; m++) {
            snprintf(key, sizeof key, "%s_ms", report_hgrm_metrics[m]);
            const json_t *block = json_object_get(level, key);
            if (json_array_size(json_object_get(block, "buckets")) == 0)
                continue;
            if (!made && outfile_make_dir(hgrm) != 0) {
                snprintf(err, err_len, "%s: %s", hgrm, strerror(errno));
                return -1;
            }
            made = true;
            snprintf(path, sizeof path, "%s/%s-%s.hgrm", hgrm, name, report_hgrm_metrics[m]);
            if (report_hgrm_file(block, path, err, err_len) < 0)
                return -1;
        }
    }
    return 0;
}
