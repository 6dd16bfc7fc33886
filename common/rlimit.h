/* The open-file limit: every stream, connection and socket is one descriptor, so each process
 * that holds many asks for the hard limit up front rather than fail at the 1,025th. */
#ifndef STAMPEDE_RLIMIT_H
#define STAMPEDE_RLIMIT_H

#include <stddef.h>
#include <stdint.h>

/* Raises the soft RLIMIT_NOFILE to the hard one; returns the soft limit now in force (0 when it
 * cannot be read). Safe to call more than once. */
uint64_t rlimit_raise_nofile(void);
/* Raises the limit as rlimit_raise_nofile does and checks that need descriptors fit under it:
 * 0 they do; -1 they do not, with the limit, the hard limit and need in err. */
int rlimit_fit_nofile(uint64_t need, char *err, size_t errlen);

#endif
