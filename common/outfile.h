/* Every file stampede writes for its user (results.json, config.yaml, requests.jsonl, the logs
 * of `stampede run`, and any writer added later) is created through here: mode 0640 under the
 * umask, so results that name internal endpoints and models are not world-readable by default. */
#ifndef STAMPEDE_OUTFILE_H
#define STAMPEDE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#define OUTFILE_MODE 0640

/* open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, OUTFILE_MODE): the
 * descriptor, or -1 with errno set. */
int outfile_open(const char *path, int extra_flags);
/* The same as a stdio stream opened for writing ("w"); NULL with errno set. */
FILE *outfile_fopen(const char *path);
/* The whole of the file at path (malloc'd, NUL-terminated; the caller frees it), its length
 * without the NUL in *len; NULL with errno set. For reading back what was written (a run's
 * table, its config.yaml) or a file a user hands over whole. */
char *outfile_read_all(const char *path, size_t *len);
/* mkdir -p path with mode 0755 (a directory that exists is fine): 0, or -1 with errno set. */
int outfile_make_dir(const char *path);

#endif
