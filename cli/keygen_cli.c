/* `stampede keygen NAME...`: a CURVE key pair per name (net/keys.c writes them). */
#include "keygen_cli.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"

int keygen_main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: stampede keygen NAME...\n"
                "  writes a CURVE key pair per NAME: NAME.key (secret, mode 0600) and NAME.pub\n"
                "  (public), 40 Z85 characters each; NAME may include a directory. Never\n"
                "  overwrites a file. See docs/security.md.\n");
        return argc < 2 ? 2 : 0;
    }
    for (int i = 1; i < argc; i++) {
        char err[512];
        if (keys_generate(argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "keygen: %s\n", err);
            return 1;
        }
        printf("wrote %s.key (secret, 0600) and %s.pub\n", argv[i], argv[i]);
    }
    return 0;
}
