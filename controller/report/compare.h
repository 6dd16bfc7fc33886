/* `stampede compare RUN...`: two or more results.json documents (plain runs or sweeps, schema 2)
 * side by side, level by level. Two runs give the EAGLE-3 report's "Phase 0 vs Phase 3" tables
 * (each metric in A and in B, the change % with better/worse, the saturation points); three or
 * more give the scaling report's configuration tables (one column per run, winners in bold) and a
 * winner per level summary. Levels missing from a run are shown as absent. docs/compare.md. */
#ifndef STAMPEDE_COMPARE_H
#define STAMPEDE_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The longest path of a run compare_add takes; its messages fit in COMPARE_PATH_MAX + 256. */
#define COMPARE_PATH_MAX 4200

typedef struct compare compare_t;

/* An empty comparison; NULL when memory is short. */
compare_t *compare_new(void);

/* Frees the comparison and sets *self_p to NULL (NULL or *NULL is fine). */
void compare_destroy(compare_t **self_p);

/* Adds the run at path: a results directory (its results.json) or a results.json file, named by
 * its directory. 0 ok; -1 with a message naming the file and the reason in err. */
int compare_add(compare_t *self, const char *path, char *err, size_t errlen);

/* The comparison as JSON (docs/compare.md): runs, metrics, each level's values, change % against
 * the first run, verdicts and winners, and the saturation points. NULL when memory is short. */
json_t *compare_json(const compare_t *self);

/* The comparison as Markdown: per metric a table by level, the saturation points, and with three
 * or more runs the winner per level. */
void compare_print_markdown(const compare_t *self, FILE *out);

/* The comparison as CSV, one row per level x metric x run (docs/compare.md lists the columns). */
void compare_print_csv(const compare_t *self, FILE *out);

#endif
