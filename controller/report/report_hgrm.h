/* The HdrHistogram export: each level's TTFT, TTFC, TPOT, ITL and E2E histograms (the `buckets`
 * results.json keeps) as the percentile distribution HdrHistogram's
 * outputPercentileDistribution writes (values in ms, 5 ticks per half distance), so existing
 * HdrHistogram plotters read them. */
#ifndef STAMPEDE_REPORT_HGRM_H
#define STAMPEDE_REPORT_HGRM_H

#include <jansson.h>
#include <stdio.h>

/* Writes the distribution of one metric block ({"count", "mean", "max", "buckets": [[upper_ms,
 * count], ...]}) to out. -1 (nothing written) when the block has no buckets. */
int report_hgrm_render(const json_t *block, FILE *out);
/* Writes DIR/hgrm/NN-LEVEL-METRIC.hgrm (e.g. 01-c50-ttft.hgrm) for every level of root and
 * every metric with buckets. 0 ok; -1 with a message naming the file in err. */
int report_hgrm_write(const json_t *root, const char *dir, char *err, size_t err_len);

#endif
