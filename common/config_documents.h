/* Workload files of several runs: a file of N YAML documents (separated by `---`) is N runs, one
 * per document, as if each were its own file. `stampede run` and `stampede controller` expand
 * their file list with config_expand_documents; document k of FILE is then named "FILE#k", which
 * config_load_file reads (and names in messages, with the line in the whole file). */
#ifndef STAMPEDE_CONFIG_DOCUMENTS_H
#define STAMPEDE_CONFIG_DOCUMENTS_H

#include <stddef.h>

/* The number of YAML documents in the file (at least 1), or -1 when it cannot be read or parsed
 * (loading it then says why). Counting stops where nesting passes CONFIG_SCAN_MAX_DEPTH (loading
 * refuses the file there), so any file is counted in time linear in its size. */
int config_file_documents(const char *path);
/* The run list of the files paths[0..n): each file as it is, or "FILE#1".."FILE#N" for a file of
 * N > 1 documents. A malloc'd NULL-terminated array of malloc'd strings (*n_out of them) for
 * config_documents_free; NULL on no memory. */
char **config_expand_documents(char *const *paths, size_t n, size_t *n_out);
/* Frees a list from config_expand_documents. */
void config_documents_free(char **list);

#endif
