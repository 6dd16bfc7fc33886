#include "live_window.h"

#define LIVE_WINDOW_NS_PER_S 1000000000LL

void live_window_clear(live_window_t *self) {
    for (int i = 0; i < LIVE_WINDOW_SECONDS; i++)
        histogram_destroy(&self->slot[i]);
    self->count = 0;
    self->sum_s = 0;
}

histogram_t *live_window_slot(live_window_t *self, int64_t now_ns) {
    int64_t second = now_ns / LIVE_WINDOW_NS_PER_S;
    int i = (int)(second % LIVE_WINDOW_SECONDS);
    if (!self->slot[i]) {
        if (!(self->slot[i] = histogram_new()))
            return NULL;
    } else if (self->second[i] != second) {
        histogram_reset(self->slot[i]);
    }
    self->second[i] = second;
    return self->slot[i];
}

void live_window_record(live_window_t *self, histogram_t *slot, uint64_t value_ns, uint64_t n) {
    histogram_record_n(slot, value_ns, n);
    self->count += n;
    self->sum_s += (double)value_ns / 1e9 * (double)n;
}

void live_window_merge(live_window_t *self, int64_t now_ns, histogram_t *into) {
    int64_t second = now_ns / LIVE_WINDOW_NS_PER_S;
    for (int i = 0; i < LIVE_WINDOW_SECONDS; i++) {
        if (!self->slot[i])
            continue;
        if (self->second[i] <= second - LIVE_WINDOW_SECONDS)
            histogram_destroy(&self->slot[i]);
        else
            histogram_merge(into, self->slot[i]);
    }
}
