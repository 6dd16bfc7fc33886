#include "console.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void console_init(console_t *self, const char *name) {
    self->name = name;
    self->tty = isatty(STDERR_FILENO);
    self->live_shown = false;
}

void console_clear(console_t *self) {
    if (self->live_shown) {
        fputs("\r\033[K", stderr);
        self->live_shown = false;
    }
}

void console_say(console_t *self, const char *fmt, ...) {
    console_clear(self);
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", self->name, msg);
}

void console_live(console_t *self, const char *line) {
    if (self->tty) {
        fprintf(stderr, "\r\033[K%s", line);
        self->live_shown = true;
        return;
    }
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    fprintf(stderr, "[%02d:%02d:%02d] %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, line);
}
