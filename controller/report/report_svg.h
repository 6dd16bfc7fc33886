/* Inline SVG charts for report.html, drawn with plain string building: a line chart of series
 * against a numeric axis and a bar chart of named values. Every data point or bar is an element
 * with class="mark" (what the browser test counts); NaN values are left out. */
#ifndef STAMPEDE_REPORT_SVG_H
#define STAMPEDE_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "buffer.h"

/* One line of a chart: n points (x[i], y[i]); the arrays belong to the caller. dots: the points
 * alone, small and without a line (a scatter of requests); labels: a text beside each point. */
typedef struct {
    const char *name;
    size_t n;
    const double *x;
    const double *y;
    bool dots;
    const char *const *labels;
} report_svg_series_t;

/* A chart's words and its x axis: x_log2 spaces x by powers of two (levels that double), drawing
 * only points with x > 0. */
typedef struct {
    const char *title, *x_label, *y_label;
    bool x_log2;
} report_svg_chart_t;

/* Appends an <svg> line chart with axes, ticks, the labels given and a legend. Returns the
 * number of marks drawn (0: no finite point, and nothing was appended). */
size_t report_svg_lines(buffer_t *out, const char *title, const char *x_label, const char *y_label,
                        const report_svg_series_t *series, size_t n_series);
/* report_svg_lines with the chart's options. */
size_t report_svg_chart(buffer_t *out, const report_svg_chart_t *chart,
                        const report_svg_series_t *series, size_t n_series);

/* Appends an <svg> bar chart of n named values. Returns the number of bars drawn (0: nothing
 * appended). */
size_t report_svg_bars(buffer_t *out, const char *title, const char *y_label,
                       const char *const *names, const double *values, size_t n);

/* Appends s with &, <, >, " and ' escaped for HTML text or an attribute value. */
void report_svg_text(buffer_t *out, const char *s);

#endif
