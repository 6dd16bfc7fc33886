#include "resolver.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine.h"

struct resolver {
    loop_t *loop;
    resolver_done_fn done;
    void *arg;
    int event_fd;
    pthread_t thread;
    bool watching;
    bool joined;
    size_t n;
    char **urls;
    char (*lines)[ENGINE_PIN_LINE_MAX]; /* "" when url i needs no pin */
    char error[2048];                   /* the first failure, "" when none */
    resolver_check_fn check;            /* after each lookup, or NULL */
    void *check_arg;
};

/* The thread: every lookup, then one write to the eventfd. Touches only lines and error. */
static void *resolver_thread(void *arg) {
    resolver_t *self = arg;
    for (size_t i = 0; i < self->n; i++) {
        char why[sizeof self->error];
        if (engine_lookup(self->urls[i], self->lines[i], ENGINE_PIN_LINE_MAX, why, sizeof why) <
            0) {
            self->lines[i][0] = '\0';
            if (!self->error[0])
                memcpy(self->error, why, sizeof why);
        }
        if (self->check && !self->error[0] &&
            self->check(self->check_arg, i, self->lines[i][0] ? self->lines[i] : NULL, why,
                        sizeof why) < 0)
            memcpy(self->error, why, sizeof why);
    }
    uint64_t one = 1;
    while (write(self->event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void resolver_on_event(loop_t *loop, int fd, int mask, void *arg) {
    resolver_t *self = arg;
    uint64_t count;
    if (read(fd, &count, sizeof count) < 0)
        return; /* spurious wake-up: the thread has not written yet */
    loop_unwatch(loop, fd);
    self->watching = false;
    pthread_join(self->thread, NULL); /* it has written: it is ending, and its results are ours */
    self->joined = true;
    self->done(self->arg, self);
}

resolver_t *resolver_new(loop_t *loop, char *const *urls, size_t n, resolver_check_fn check,
                         void *check_arg, resolver_done_fn done, void *arg) {
    assert(loop && (urls || n == 0) && done);
    resolver_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->check = check;
    self->check_arg = check_arg;
    self->loop = loop;
    self->done = done;
    self->arg = arg;
    self->n = n;
    self->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    self->urls = calloc(n ? n : 1, sizeof *self->urls);
    self->lines = calloc(n ? n : 1, sizeof *self->lines);
    bool ok = self->event_fd >= 0 && self->urls && self->lines;
    for (size_t i = 0; ok && i < n; i++)
        ok = (self->urls[i] = strdup(urls[i])) != NULL;
    if (ok && loop_watch(loop, self->event_fd, LOOP_READABLE, 0, resolver_on_event, self) == 0) {
        self->watching = true;
        if (pthread_create(&self->thread, NULL, resolver_thread, self) == 0)
            return self;
    }
    self->joined = true; /* no thread to wait for */
    resolver_destroy(&self);
    return NULL;
}

const char *resolver_line(const resolver_t *self, size_t i) {
    assert(self && self->joined && i < self->n);
    return self->lines[i][0] ? self->lines[i] : NULL;
}

const char *resolver_error(const resolver_t *self) {
    assert(self && self->joined);
    return self->error[0] ? self->error : NULL;
}

void resolver_destroy(resolver_t **self_p) {
    assert(self_p);
    resolver_t *self = *self_p;
    if (!self)
        return;
    if (self->watching)
        loop_unwatch(self->loop, self->event_fd);
    if (!self->joined)
        pthread_join(self->thread, NULL);
    if (self->event_fd >= 0)
        close(self->event_fd);
    for (size_t i = 0; self->urls && i < self->n; i++)
        free(self->urls[i]);
    free(self->urls);
    free(self->lines);
    free(self);
    *self_p = NULL;
}
