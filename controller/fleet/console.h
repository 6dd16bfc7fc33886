/* What the controller prints on stderr: messages prefixed with its name ("controller: …" or
 * "run: …"), and a live status line, redrawn in place on a terminal (a message erases it first)
 * and a plain "[HH:MM:SS] …" line otherwise. */
#ifndef STAMPEDE_CONSOLE_H
#define STAMPEDE_CONSOLE_H

#include <stdbool.h>

typedef struct console {
    const char *name; /* prefix of every message */
    bool tty;         /* stderr is a terminal: the live line is redrawn in place */
    bool live_shown;  /* the live line is on screen, without a newline */
} console_t;

/* A console for messages prefixed with name (which must outlive it), on stderr as it is now. */
void console_init(console_t *self, const char *name);
/* Prints "NAME: message" and a newline, erasing the live line first. */
void console_say(console_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shows line as the live status line: in place on a terminal, else with the time of day. */
void console_live(console_t *self, const char *line);
/* Erases the live line if it is on screen (before the end-of-run table). */
void console_clear(console_t *self);

#endif
