/* `stampede mock`: options, then the server until SIGTERM or SIGINT. */
#include "mock.h"

#include <signal.h>
#include <stdio.h>

int mock_main(int argc, char **argv) {
    mock_options_t options;
    char err[512];
    mock_options_init(&options);
    int rc = mock_options_parse(&options, argc, argv, stdout, err, sizeof(err));
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "stampede mock: %s\n", err);
        mock_options_clear(&options);
        return rc < 0 ? 2 : 0;
    }
    /* The signals arrive through the loop's signalfd, so they must not be delivered otherwise. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    mock_server_t *server = mock_server_new(&options, err, sizeof(err));
    if (server) /* one flushed line that tests and `stampede run` wait for */
        printf("listening on %s:%u\n", options.bind, mock_server_port(server));
    fflush(stdout);
    mock_options_clear(&options);
    if (!server) {
        fprintf(stderr, "stampede mock: %s\n", err);
        return 1;
    }
    rc = mock_server_run(server);
    mock_server_destroy(&server);
    return rc == 0 ? 0 : 1;
}
