/* `stampede mock` as a child of a unit test: started as `$STAMPEDE_BIN mock --port 0 ARGS...`,
 * its port read from the "listening on HOST:PORT" line it prints first, stopped with SIGTERM.
 * Header-only (static functions) because each tests/unit/test_*.c is a program of its own. */
#ifndef STAMPEDE_TEST_MOCK_SPAWN_H
#define STAMPEDE_TEST_MOCK_SPAWN_H

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct mock_child {
    pid_t pid; /* 0 when none runs */
    int port;
} mock_child_t;

/* Stops and reaps the mock; nothing when none runs. */
static inline void mock_stop(mock_child_t *child) {
    if (child->pid > 0) {
        kill(child->pid, SIGTERM);
        waitpid(child->pid, NULL, 0);
    }
    child->pid = 0;
    child->port = 0;
}

/* Starts the mock with the extra arguments args (NULL-terminated, at most 27) and waits up to
 * 10 s for its port. 0 with child filled, -1 (said on stderr, no child left) otherwise. */
static inline int mock_spawn(mock_child_t *child, const char *const *args) {
    child->pid = 0;
    child->port = 0;
    const char *bin = getenv("STAMPEDE_BIN");
    if (!bin) {
        fprintf(stderr, "STAMPEDE_BIN is not set: cannot start `stampede mock`\n");
        return -1;
    }
    const char *argv[32] = {bin, "mock", "--port", "0"};
    int argc = 4;
    for (int i = 0; args && args[i] && argc < 31; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    int out[2];
    if (pipe(out) < 0)
        return -1;
    child->pid = fork();
    if (child->pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    char line[256];
    size_t len = 0;
    while (child->pid > 0 && len < sizeof(line) - 1) { /* one line, within 10 s */
        struct pollfd p = {.fd = out[0], .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0 || read(out[0], line + len, 1) != 1)
            break;
        if (line[len++] == '\n')
            break;
    }
    line[len] = '\0';
    close(out[0]);
    const char *colon = strrchr(line, ':');
    if (child->pid > 0 && strstr(line, "listening on") && colon)
        child->port = atoi(colon + 1);
    if (child->port <= 0) {
        fprintf(stderr, "`%s mock` did not say where it listens: \"%s\"\n", bin, line);
        mock_stop(child);
        return -1;
    }
    return 0;
}

/* Declares `mock`, a mock_child_t, and the cmocka group fixtures mock_setup (spawns it with the
 * mock arguments given, e.g. "--ttft-ms", "5") and mock_teardown (stops it), for a file whose test
 * group shares one mock. */
#define MOCK_GROUP_FIXTURE(...)                                                                    \
    static mock_child_t mock;                                                                      \
    static int mock_setup(void **state) {                                                          \
        static const char *const args[] = {__VA_ARGS__, NULL};                                     \
        return mock_spawn(&mock, args);                                                            \
    }                                                                                              \
    static int mock_teardown(void **state) {                                                       \
        mock_stop(&mock);                                                                          \
        return 0;                                                                                  \
    }

#endif
