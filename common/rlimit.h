/* The open-file limit: every stream, connection and socket is one descriptor, so each process
 * that holds many asks for the hard limit up front rather than fail at the 1,025th. */
#ifndef STAMPEDE_RLIMIT_H
#define STAMPEDE_RLIMIT_H

#include <stdint.h>

/* Raises the soft RLIMIT_NOFILE to the hard one; returns the soft limit now in force (0 when it
 * cannot be read). Safe to call more than once. */
uint64_t rlimit_raise_nofile(void);

#endif
