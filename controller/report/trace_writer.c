#include "trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "outfile.h"

typedef struct trace_line {
    struct trace_line *next;
    size_t len;
    char text[];
} trace_line_t;

struct trace_writer {
    char *path;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    trace_line_t *head, *tail; /* waiting to be written, oldest first */
    size_t queued_bytes;
    size_t queue_bytes; /* the bound */
    bool closing;
    bool failed;
    bool busy;              /* the thread holds a line outside the queue */
    uint64_t progress;      /* bumped for every line written: close waits while it moves */
    uint64_t lines_written; /* under lock */
    uint64_t lines_dropped; /* under lock */
    int error;              /* under lock */
    int fd;                 /* owned by the thread */
};

/* Cancellation cleanup for a line the thread was writing when it was stopped. */
static void free_line(void *line) {
    free(line);
}

static void unlock(void *mutex) {
    pthread_mutex_unlock(mutex);
}

static void close_fd(void *arg) {
    trace_writer_t *self = arg;
    if (self->fd >= 0)
        close(self->fd);
    self->fd = -1;
}

static void fail(trace_writer_t *self, int error) {
    pthread_mutex_lock(&self->lock);
    if (!self->error)
        self->error = error;
    self->failed = true;
    pthread_mutex_unlock(&self->lock);
}

/* Writes all of line; false on an error (recorded). write() is a cancellation point, so a close
 * that gives up can stop the thread while it is blocked here. */
static bool write_line(trace_writer_t *self, const trace_line_t *line) {
    size_t off = 0;
    while (off < line->len) {
        ssize_t n = write(self->fd, line->text + off, line->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fail(self, n < 0 ? errno : EIO);
            return false;
        }
        off += (size_t)n;
    }
    return true;
}

static void *writer_thread(void *arg) {
    trace_writer_t *self = arg;
    trace_line_t *line;
    bool failed;
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
    pthread_cleanup_push(close_fd, self);
    /* open() of a FIFO waits for a reader: here, never on the controller's loop. */
    self->fd = outfile_open(self->path, 0);
    if (self->fd < 0)
        fail(self, errno);
    for (;;) {
        pthread_mutex_lock(&self->lock);
        pthread_cleanup_push(unlock, &self->lock); /* pthread_cond_wait is a cancellation point */
        while (!self->head && !self->closing)
            pthread_cond_wait(&self->wake, &self->lock);
        line = self->head;
        if (line) {
            self->head = line->next;
            if (!self->head)
                self->tail = NULL;
            self->queued_bytes -= line->len;
            self->busy = true;
        }
        failed = self->failed;
        pthread_cleanup_pop(1);
        if (!line)
            break;

        bool ok = false;
        pthread_cleanup_push(free_line, line);
        ok = !failed && write_line(self, line);
        pthread_cleanup_pop(1);
        pthread_mutex_lock(&self->lock);
        self->busy = false;
        if (ok)
            self->lines_written++;
        else
            self->lines_dropped++;
        self->progress++;
        pthread_mutex_unlock(&self->lock);
    }
    pthread_cleanup_pop(1);
    return NULL;
}

trace_writer_t *trace_writer_new(const char *path, size_t queue_bytes) {
    trace_writer_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = -1;
    self->queue_bytes = queue_bytes;
    self->path = strdup(path);
    if (!self->path) {
        free(self);
        return NULL;
    }
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->wake, NULL);
    int rc = pthread_create(&self->thread, NULL, writer_thread, self);
    if (rc != 0) {
        pthread_cond_destroy(&self->wake);
        pthread_mutex_destroy(&self->lock);
        free(self->path);
        free(self);
        errno = rc;
        return NULL;
    }
    return self;
}

bool trace_writer_push(trace_writer_t *self, const char *line, size_t len) {
    pthread_mutex_lock(&self->lock);
    bool fits = !self->failed && self->queued_bytes + len <= self->queue_bytes;
    trace_line_t *copy = fits ? malloc(sizeof *copy + len) : NULL;
    if (!copy) {
        self->lines_dropped++;
        pthread_mutex_unlock(&self->lock);
        return false;
    }
    copy->next = NULL;
    copy->len = len;
    memcpy(copy->text, line, len);
    if (self->tail)
        self->tail->next = copy;
    else
        self->head = copy;
    self->tail = copy;
    self->queued_bytes += len;
    pthread_cond_signal(&self->wake);
    pthread_mutex_unlock(&self->lock);
    return true;
}

uint64_t trace_writer_dropped(trace_writer_t *self) {
    pthread_mutex_lock(&self->lock);
    uint64_t n = self->lines_dropped;
    pthread_mutex_unlock(&self->lock);
    return n;
}

int trace_writer_error(trace_writer_t *self) {
    pthread_mutex_lock(&self->lock);
    int error = self->error;
    pthread_mutex_unlock(&self->lock);
    return error;
}

/* Waits while the thread drains the queue and keeps making progress. True when it finished. */
static bool wait_drained(trace_writer_t *self, long stall_ms) {
    uint64_t seen = (uint64_t)-1;
    int64_t last_progress = loop_now_ns();
    for (;;) {
        pthread_mutex_lock(&self->lock);
        bool idle = !self->head && !self->busy;
        uint64_t progress = self->progress;
        pthread_mutex_unlock(&self->lock);
        if (idle)
            return true;
        if (progress != seen) {
            seen = progress;
            last_progress = loop_now_ns();
        } else if (loop_now_ns() - last_progress >= stall_ms * 1000000LL) {
            return false;
        }
        struct timespec d = {0, 10000000};
        nanosleep(&d, NULL);
    }
}

int trace_writer_close(trace_writer_t **self_p, long stall_ms, trace_writer_stats_t *stats) {
    trace_writer_t *self = *self_p;
    if (!self)
        return 0;
    bool drained = wait_drained(self, stall_ms);
    pthread_mutex_lock(&self->lock);
    self->closing = true;
    pthread_cond_signal(&self->wake);
    pthread_mutex_unlock(&self->lock);
    if (!drained)
        pthread_cancel(self->thread); /* blocked in open() or write(): both cancellation points */
    pthread_join(self->thread, NULL);
    bool busy_cancelled = self->busy; /* the line it held was freed by its cleanup */
    for (trace_line_t *l = self->head, *next; l; l = next) {
        next = l->next;
        free(l);
        self->lines_dropped++;
    }
    if (busy_cancelled)
        self->lines_dropped++;
    trace_writer_stats_t s = {self->lines_written, self->lines_dropped, self->error};
    if (stats)
        *stats = s;
    pthread_cond_destroy(&self->wake);
    pthread_mutex_destroy(&self->lock);
    free(self->path);
    free(self);
    *self_p = NULL;
    return s.lines_dropped || s.error ? -1 : 0;
}
