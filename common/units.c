#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal number as read: whole part and up to 18 fractional digits, kept as integers so that
 * scaling by a unit is exact. */
typedef struct decimal {
    uint64_t whole;
    uint64_t frac;
    int frac_digits;
} decimal_t;

typedef struct unit_name {
    const char *name;
    uint64_t scale;
} unit_name_t;

static const unit_name_t duration_units[] = {
    /* Longer names first so "ms" and "min" are not read as "m" followed by junk. */
    {"ns", 1},
    {"us", UNITS_NS_PER_US},
    {"\xc2\xb5s", UNITS_NS_PER_US},
    {"ms", UNITS_NS_PER_MS},
    {"min", 60 * UNITS_NS_PER_S},
    {"s", UNITS_NS_PER_S},
    {"m", 60 * UNITS_NS_PER_S},
    {"h", 3600 * UNITS_NS_PER_S},
};

static const unit_name_t size_units[] = {
    {"KiB", 1ULL << 10},      {"MiB", 1ULL << 20},
    {"GiB", 1ULL << 30},      {"TiB", 1ULL << 40},
    {"KB", 1000ULL},          {"kB", 1000ULL},
    {"MB", 1000000ULL},       {"GB", 1000000000ULL},
    {"TB", 1000000000000ULL}, {"B", 1},
};

static const unit_name_t rate_units[] = {
    {"second", 1}, {"sec", 1}, {"s", 1},       {"minute", 60},
    {"min", 60},   {"m", 60},  {"hour", 3600}, {"h", 3600},
};

static uint64_t pow10_u64(int k) {
    uint64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

static void skip_spaces(const char **p) {
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* Reads digits[.digits] at *p; false when there is no digit or the whole part overflows. */
static bool scan_decimal(const char **p, decimal_t *out) {
    const char *s = *p;
    decimal_t d = {0, 0, 0};
    int digits = 0;
    while (*s >= '0' && *s <= '9') {
        unsigned digit = (unsigned)(*s - '0');
        if (d.whole > (UINT64_MAX - digit) / 10)
            return false;
        d.whole = d.whole * 10 + digit;
        s++;
        digits++;
    }
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') {
            if (d.frac_digits < 18) {
                d.frac = d.frac * 10 + (uint64_t)(*s - '0');
                d.frac_digits++;
            }
            s++;
            digits++;
        }
    }
    if (digits == 0)
        return false;
    *p = s;
    *out = d;
    return true;
}

/* Matches the longest unit name at *p from the table (ordered so that the first match is it). */
static const unit_name_t *match_unit(const char **p, const unit_name_t *units, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(units[i].name);
        if (strncmp(*p, units[i].name, len) == 0) {
            *p += len;
            return &units[i];
        }
    }
    return NULL;
}

/* d × scale, rounded to the nearest integer; *exact tells whether no rounding happened. */
static unsigned __int128 decimal_scale(const decimal_t *d, uint64_t scale, bool *exact) {
    unsigned __int128 whole = (unsigned __int128)d->whole * scale;
    unsigned __int128 num = (unsigned __int128)d->frac * scale;
    uint64_t den = pow10_u64(d->frac_digits);
    *exact = num % den == 0;
    return whole + (num + den / 2) / den;
}

int units_parse_duration(const char *text, int64_t *ns) {
    const char *p = text;
    unsigned __int128 total = 0;
    int terms = 0;
    skip_spaces(&p);
    while (*p != '\0') {
        decimal_t d;
        if (!scan_decimal(&p, &d))
            return -1;
        skip_spaces(&p);
        const unit_name_t *unit =
            match_unit(&p, duration_units, sizeof duration_units / sizeof duration_units[0]);
        uint64_t scale = UNITS_NS_PER_S;
        if (unit != NULL)
            scale = unit->scale;
        else if (terms > 0 || *p != '\0')
            return -1; /* a bare number (seconds) stands alone: "1m30" is a typo, not 1m30s */
        bool exact;
        total += decimal_scale(&d, scale, &exact);
        if (total > INT64_MAX)
            return -1;
        terms++;
        skip_spaces(&p);
    }
    if (terms == 0)
        return -1;
    *ns = (int64_t)total;
    return 0;
}

int units_parse_rate(const char *text, double *per_s) {
    const char *p = text;
    decimal_t d;
    skip_spaces(&p);
    const char *start = p;
    if (!scan_decimal(&p, &d))
        return -1;
    char number[64];
    size_t len = (size_t)(p - start);
    if (len >= sizeof number)
        return -1;
    memcpy(number, start, len);
    number[len] = '\0';
    double value = strtod(number, NULL);
    double seconds = 1;
    skip_spaces(&p);
    if (*p == '/') {
        p++;
        skip_spaces(&p);
        const unit_name_t *unit =
            match_unit(&p, rate_units, sizeof rate_units / sizeof rate_units[0]);
        if (unit == NULL)
            return -1;
        seconds = (double)unit->scale;
        skip_spaces(&p);
    }
    if (*p != '\0')
        return -1;
    *per_s = value / seconds;
    return 0;
}

int units_parse_size(const char *text, uint64_t *bytes) {
    const char *p = text;
    decimal_t d;
    skip_spaces(&p);
    if (!scan_decimal(&p, &d))
        return -1;
    skip_spaces(&p);
    uint64_t scale = 1;
    if (*p != '\0') {
        const unit_name_t *unit =
            match_unit(&p, size_units, sizeof size_units / sizeof size_units[0]);
        if (unit == NULL)
            return -1;
        scale = unit->scale;
        skip_spaces(&p);
    }
    if (*p != '\0')
        return -1;
    bool exact;
    unsigned __int128 total = decimal_scale(&d, scale, &exact);
    if (!exact || total > UINT64_MAX)
        return -1;
    *bytes = (uint64_t)total;
    return 0;
}

int units_format_duration(int64_t ns, char *buf, size_t len) {
    static const unit_name_t largest_first[] = {
        {"h", 3600 * UNITS_NS_PER_S}, {"m", 60 * UNITS_NS_PER_S}, {"s", UNITS_NS_PER_S},
        {"ms", UNITS_NS_PER_MS},      {"us", UNITS_NS_PER_US},    {"ns", 1},
    };
    char tmp[32];
    int n;
    if (ns == 0) {
        n = snprintf(tmp, sizeof tmp, "0s");
    } else {
        size_t i = 0;
        while (ns % (int64_t)largest_first[i].scale != 0)
            i++;
        n = snprintf(tmp, sizeof tmp, "%lld%s", (long long)(ns / (int64_t)largest_first[i].scale),
                     largest_first[i].name);
    }
    if (n < 0 || (size_t)n >= len)
        return -1;
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}

int units_format_human(int64_t ns, char *buf, size_t len) {
    int64_t s = ns > 0 ? (ns + UNITS_NS_PER_S / 2) / UNITS_NS_PER_S : 0;
    if (s >= 3600) {
        int64_t min = (s + 30) / 60;
        return snprintf(buf, len, "%lld h %lld min", (long long)(min / 60), (long long)(min % 60));
    }
    if (s >= 60)
        return snprintf(buf, len, "%lld min %lld s", (long long)(s / 60), (long long)(s % 60));
    return snprintf(buf, len, "%lld s", (long long)s);
}

const char *units_duration_help(void) {
    return "a duration such as 500ms, 2s, 1.5m or 1m30s (units ns, us, ms, s, m, h; a bare "
           "number is seconds)";
}

const char *units_rate_help(void) {
    return "a rate such as 5/s, 300/m, 10/h or 2.5 (a bare number is per second)";
}

const char *units_size_help(void) {
    return "a size such as 512, 4KiB or 1MB (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; a bare "
           "number is bytes)";
}
