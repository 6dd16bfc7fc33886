#include "rlimit.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

uint64_t rlimit_raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) != 0)
            return 0;
    }
    return (uint64_t)rl.rlim_cur;
}

int rlimit_fit_nofile(uint64_t need, char *err, size_t errlen) {
    uint64_t limit = rlimit_raise_nofile();
    if (limit >= need)
        return 0;
    struct rlimit rl;
    if (limit == 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        snprintf(err, errlen,
                 "cannot read the open-file limit (RLIMIT_NOFILE) to fit %" PRIu64 " descriptors",
                 need);
        return -1;
    }
    snprintf(err, errlen,
             "the open-file limit is %" PRIu64 " (hard limit %" PRIu64 "), below the %" PRIu64
             " descriptors needed: raise the hard limit (ulimit -Hn, LimitNOFILE=)",
             limit, (uint64_t)rl.rlim_max, need);
    return -1;
}
