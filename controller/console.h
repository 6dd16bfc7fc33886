/* What the controller prints on stderr: messages prefixed with its name ("controller: …" or
 * "run: …"), and the live status line every second of the run, redrawn in place on a terminal
 * (a message erases it first) and a plain "[HH:MM:SS] …" line otherwise. */
#ifndef STAMPEDE_CONSOLE_H
#define STAMPEDE_CONSOLE_H

#include <stdint.h>

#include "controller.h"

/* Prints "NAME: message" and a newline, erasing the live line first. */
void console_say(controller_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shows the live status line at controller instant now (merge_live over the last seconds), after
 * a message when --trace lines were dropped since the last one. */
void console_live(controller_t *self, int64_t now);
/* Erases the live line if it is on screen (before the end-of-run table). */
void console_clear(controller_t *self);

#endif
