/* Quantities with units as people write them in workload files and on command lines: durations
 * ("500ms", "2m", "1m30s"), rates ("5/s", "300/m") and sizes ("4KiB", "1MB"). Parsing is exact
 * decimal arithmetic (no binary rounding on the way), so "1.1s" is 1100000000 ns exactly. */
#ifndef STAMPEDE_UNITS_H
#define STAMPEDE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_NS_PER_US 1000LL
#define UNITS_NS_PER_MS 1000000LL
#define UNITS_NS_PER_S 1000000000LL

/* Parses a non-negative duration: one or more NUMBER UNIT terms ("1.5s", "1m30s") with units ns,
 * us (or µs), ms, s, m (or min), h; a bare number is seconds. Rounds to the nearest ns.
 * 0 ok; -1 (nothing written) on bad syntax, an unknown unit, a sign, or overflow of int64 ns. */
int units_parse_duration(const char *text, int64_t *ns);
/* Parses a non-negative rate: NUMBER or NUMBER/UNIT with s, m (min) or h; a bare number is per
 * second. 0 ok; -1 (nothing written) otherwise. */
int units_parse_rate(const char *text, double *per_s);
/* Parses a byte size: NUMBER with B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
 * (powers of 1024); a bare number is bytes. The result must be a whole number of bytes.
 * 0 ok; -1 (nothing written) otherwise. */
int units_parse_size(const char *text, uint64_t *bytes);

/* Writes the shortest exact form of a duration: the largest unit that divides it ("1500ms",
 * "2m", "0s"). Returns the length written, or -1 (buf untouched) when len is too small. */
int units_format_duration(int64_t ns, char *buf, size_t len);
/* Writes a duration for people, in its two largest units, rounded to the nearest of the smaller:
 * "2 h 10 min", "4 min 20 s", "35 s" (negative counts as 0). Returns what snprintf returns. */
int units_format_human(int64_t ns, char *buf, size_t len);

/* What each parser accepts, for error messages ("expected a duration such as ..."). */
const char *units_duration_help(void);
const char *units_rate_help(void);
const char *units_size_help(void);

#endif
