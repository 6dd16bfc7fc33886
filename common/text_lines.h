/* A text file read a line at a time, as the JSONL and CSV readers of datasets and traces read
 * theirs: each line without its trailing newline, carriage return and spaces; blank lines skipped.
 */
#ifndef STAMPEDE_TEXT_LINES_H
#define STAMPEDE_TEXT_LINES_H

#include <stddef.h>
#include <stdio.h>

/* What a reader does with one line (1-based number, len bytes, not NUL-terminated); 0 to go on. */
typedef int (*text_lines_fn)(void *arg, int line, const char *text, size_t len);

/* Calls fn on each non-blank line of f until one returns non-zero; that value, or 0 at the end of
 * the file. The caller checks ferror(f) for a read error. */
int text_lines_each(FILE *f, text_lines_fn fn, void *arg);

#endif
