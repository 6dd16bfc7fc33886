#include "report_svg.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SVG_W 640.0
#define SVG_H 320.0
#define SVG_LEFT 72.0
#define SVG_RIGHT 150.0 /* room for the legend */
#define SVG_TOP 32.0
#define SVG_BOTTOM 48.0
#define SVG_TICKS 5

/* Colour-blind-safe (Okabe-Ito) series colours, repeated past eight series. */
static const char *const report_svg_colours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                 "#e69f00", "#56b4e9", "#000000", "#f0e442"};
#define SVG_N_COLOURS (sizeof report_svg_colours / sizeof report_svg_colours[0])

void report_svg_text(buffer_t *out, const char *s) {
    /* the characters XML text and attributes cannot hold as they are, and their references */
    static const char special[] = "&<>\"'";
    static const char *const references[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    for (; s && *s; s++) {
        const char *at = strchr(special, *s);
        if (at)
            buffer_append(out, references[at - special], strlen(references[at - special]));
        else
            buffer_append(out, s, 1);
    }
    buffer_reserve(out, 1);
    out->data[out->len] = '\0';
}

/* A 1, 2 or 5 × 10^k step giving about SVG_TICKS ticks over span. */
static double report_svg_step(double span) {
    if (!(span > 0))
        return 1;
    double raw = span / SVG_TICKS, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* [lo, hi] widened to whole steps; a single value gets a range around it. */
static void report_svg_range(double *lo, double *hi, double *step) {
    if (*hi <= *lo) { /* one value: a range around it, from 0 when it is 0 */
        double pad = *lo != 0 ? fabs(*lo) * 0.5 : 1;
        *lo = *lo == 0 ? 0 : *lo - pad;
        *hi += pad;
    }
    *step = report_svg_step(*hi - *lo);
    *lo = floor(*lo / *step) * *step;
    *hi = ceil(*hi / *step) * *step;
}

static void report_svg_number(char *text, size_t size, double v) {
    double a = fabs(v);
    if (a >= 1e6)
        snprintf(text, size, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(text, size, "%.3gk", v / 1e3);
    else
        snprintf(text, size, "%.4g", v);
}

/* The <svg> opening, its title and the y axis label. */
static void report_svg_open(buffer_t *out, const char *title, const char *y_label) {
    buffer_appendf(out,
                   "<figure class=\"chart\"><svg "
                   "viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
                   SVG_W, SVG_H);
    report_svg_text(out, title);
    buffer_appendf(out, "</title><text class=\"title\" x=\"%.0f\" y=\"18\">", SVG_LEFT);
    report_svg_text(out, title);
    buffer_appendf(out,
                   "</text><text class=\"axis-label\" transform=\"translate(14 %.1f) rotate(-90)\" "
                   "text-anchor=\"middle\">",
                   SVG_TOP + (SVG_H - SVG_TOP - SVG_BOTTOM) / 2);
    report_svg_text(out, y_label);
    buffer_appendf(out, "</text>");
}

/* Horizontal grid lines and the y tick labels over [lo, hi]. */
static void report_svg_y_axis(buffer_t *out, double lo, double hi, double step) {
    double plot_h = SVG_H - SVG_TOP - SVG_BOTTOM;
    for (double v = lo; v <= hi + step / 2; v += step) {
        double y = SVG_TOP + plot_h * (1 - (v - lo) / (hi - lo));
        char text[32];
        report_svg_number(text, sizeof text, fabs(v) < step / 1e6 ? 0 : v);
        buffer_appendf(out,
                       "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                       SVG_LEFT, SVG_W - SVG_RIGHT, y, y, SVG_LEFT - 6, y + 4, text);
    }
}

/* x as drawn: its log2 on a log2 axis (NAN for x <= 0, which such an axis cannot show). */
static double report_svg_x(const report_svg_chart_t *chart, double x) {
    return !chart->x_log2 ? x : x > 0 ? log2(x) : NAN;
}

/* The x tick labels over [lo, hi]: every step, or every power of two on a log2 axis. */
static void report_svg_x_axis(buffer_t *out, const report_svg_chart_t *chart, double lo, double hi,
                              double step) {
    double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT;
    for (double v = lo; v <= hi + step / 2; v += step) {
        double x = SVG_LEFT + plot_w * (v - lo) / (hi - lo);
        char text[32];
        report_svg_number(text, sizeof text,
                          chart->x_log2          ? exp2(v)
                          : fabs(v) < step / 1e6 ? 0
                                                 : v);
        buffer_appendf(
            out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x,
            SVG_H - SVG_BOTTOM + 16, text);
    }
}

size_t report_svg_lines(buffer_t *out, const char *title, const char *x_label, const char *y_label,
                        const report_svg_series_t *series, size_t n_series) {
    report_svg_chart_t chart = {title, x_label, y_label, false};
    return report_svg_chart(out, &chart, series, n_series);
}

size_t report_svg_chart(buffer_t *out, const report_svg_chart_t *chart,
                        const report_svg_series_t *series, size_t n_series) {
    double x_lo = INFINITY, x_hi = -INFINITY, y_lo = 0, y_hi = -INFINITY;
    size_t finite = 0;
    for (size_t s = 0; s < n_series; s++)
        for (size_t i = 0; i < series[s].n; i++) {
            double x = report_svg_x(chart, series[s].x[i]), y = series[s].y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            finite++;
            x_lo = fmin(x_lo, x);
            x_hi = fmax(x_hi, x);
            y_lo = fmin(y_lo, y);
            y_hi = fmax(y_hi, y);
        }
    if (finite == 0)
        return 0;
    double x_step, y_step;
    if (chart->x_log2) { /* whole powers of two */
        x_lo = floor(x_lo);
        x_hi = fmax(ceil(x_hi), x_lo + 1);
        x_step = ceil((x_hi - x_lo) / 8);
        x_hi = x_lo + ceil((x_hi - x_lo) / x_step) * x_step;
    } else {
        report_svg_range(&x_lo, &x_hi, &x_step);
    }
    report_svg_range(&y_lo, &y_hi, &y_step);
    double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT, plot_h = SVG_H - SVG_TOP - SVG_BOTTOM;
    report_svg_open(out, chart->title, chart->y_label);
    report_svg_y_axis(out, y_lo, y_hi, y_step);
    report_svg_x_axis(out, chart, x_lo, x_hi, x_step);
    buffer_appendf(out,
                   "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                   SVG_LEFT, SVG_W - SVG_RIGHT, SVG_H - SVG_BOTTOM, SVG_H - SVG_BOTTOM,
                   SVG_LEFT + plot_w / 2, SVG_H - 10);
    report_svg_text(out, chart->x_label);
    if (chart->x_log2)
        buffer_appendf(out, " (log₂ scale)");
    buffer_appendf(out, "</text>");
    size_t marks = 0;
    for (size_t s = 0; s < n_series; s++) {
        const report_svg_series_t *line = &series[s];
        const char *colour = report_svg_colours[s % SVG_N_COLOURS];
        buffer_appendf(out, "<g class=\"series\" stroke=\"%s\" fill=\"%s\">", colour, colour);
        if (!line->dots) {
            buffer_appendf(out, "<polyline points=\"");
            for (size_t i = 0; i < line->n; i++) {
                double x = report_svg_x(chart, line->x[i]);
                if (isfinite(x) && isfinite(line->y[i]))
                    buffer_appendf(out, "%.1f,%.1f ",
                                   SVG_LEFT + plot_w * (x - x_lo) / (x_hi - x_lo),
                                   SVG_TOP + plot_h * (1 - (line->y[i] - y_lo) / (y_hi - y_lo)));
            }
            buffer_appendf(out, "\" fill=\"none\"/>");
        }
        /* a long series (a CDF, a time series) shows its points small; a scatter's, smaller and
         * without a tooltip each (thousands of requests) */
        double r = line->labels   ? 4
                   : line->dots   ? (line->n > 2000 ? 1.5 : 2.5)
                   : line->n > 40 ? 1.2
                                  : 3;
        for (size_t i = 0; i < line->n; i++) {
            double x = report_svg_x(chart, line->x[i]);
            if (!isfinite(x) || !isfinite(line->y[i]))
                continue;
            double px = SVG_LEFT + plot_w * (x - x_lo) / (x_hi - x_lo);
            double py = SVG_TOP + plot_h * (1 - (line->y[i] - y_lo) / (y_hi - y_lo));
            marks++;
            if (line->dots && !line->labels) {
                buffer_appendf(out,
                               "<circle class=\"mark\" r=\"%.1f\" cx=\"%.1f\" cy=\"%.1f\" "
                               "stroke=\"none\" fill-opacity=\"0.55\"/>",
                               r, px, py);
                continue;
            }
            buffer_appendf(out, "<circle class=\"mark\" r=\"%.1f\" cx=\"%.1f\" cy=\"%.1f\">", r, px,
                           py);
            buffer_appendf(out, "<title>");
            report_svg_text(out, line->labels ? line->labels[i] : line->name);
            buffer_appendf(out, ": %.6g, %.6g</title></circle>", line->x[i], line->y[i]);
        }
        for (size_t i = 0; line->labels && i < line->n; i++) {
            double x = report_svg_x(chart, line->x[i]);
            if (!isfinite(x) || !isfinite(line->y[i]))
                continue;
            /* on the right of its point, or on its left near the legend */
            bool left = (x - x_lo) / (x_hi - x_lo) > 0.85;
            buffer_appendf(out,
                           "<text class=\"tick\" stroke=\"none\" x=\"%.1f\" y=\"%.1f\" "
                           "text-anchor=\"%s\">",
                           SVG_LEFT + plot_w * (x - x_lo) / (x_hi - x_lo) + (left ? -6 : 6),
                           SVG_TOP + plot_h * (1 - (line->y[i] - y_lo) / (y_hi - y_lo)) - 6,
                           left ? "end" : "start");
            report_svg_text(out, line->labels[i]);
            buffer_appendf(out, "</text>");
        }
        buffer_appendf(out,
                       "</g><g class=\"legend\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
                       "height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
                       SVG_W - SVG_RIGHT + 12, SVG_TOP + 18.0 * (double)s, colour,
                       SVG_W - SVG_RIGHT + 30, SVG_TOP + 18.0 * (double)s + 10);
        report_svg_text(out, line->name);
        buffer_appendf(out, "</text></g>");
    }
    buffer_appendf(out, "</svg></figure>\n");
    return marks;
}

size_t report_svg_bars(buffer_t *out, const char *title, const char *y_label,
                       const char *const *names, const double *values, size_t n) {
    double lo = 0, hi = -INFINITY;
    size_t finite = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(values[i])) {
            finite++;
            hi = fmax(hi, values[i]);
            lo = fmin(lo, values[i]);
        }
    if (finite == 0)
        return 0;
    double step;
    report_svg_range(&lo, &hi, &step);
    double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT, plot_h = SVG_H - SVG_TOP - SVG_BOTTOM;
    report_svg_open(out, title, y_label);
    report_svg_y_axis(out, lo, hi, step);
    double slot = plot_w / (double)n;
    size_t marks = 0;
    for (size_t i = 0; i < n; i++) {
        double x = SVG_LEFT + slot * (double)i + slot * 0.15;
        buffer_appendf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                       x + slot * 0.35, SVG_H - SVG_BOTTOM + 16);
        report_svg_text(out, names[i]);
        buffer_appendf(out, "</text>");
        if (!isfinite(values[i]))
            continue;
        double top = SVG_TOP + plot_h * (1 - (fmax(values[i], 0) - lo) / (hi - lo));
        double base = SVG_TOP + plot_h * (1 - (fmin(values[i], 0) - lo) / (hi - lo));
        buffer_appendf(out,
                       "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"%s\"><title>",
                       x, top, slot * 0.7, fmax(base - top, 0.5),
                       report_svg_colours[i % SVG_N_COLOURS]);
        report_svg_text(out, names[i]);
        buffer_appendf(out, ": %.6g</title></rect>", values[i]);
        marks++;
    }
    buffer_appendf(out,
                   "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "</svg></figure>\n",
                   SVG_LEFT, SVG_W - SVG_RIGHT, SVG_H - SVG_BOTTOM, SVG_H - SVG_BOTTOM);
    return marks;
}
