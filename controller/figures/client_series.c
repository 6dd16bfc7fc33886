#include "client_series.h"

#include <stdlib.h>

typedef struct {
    double t_s;
    uint32_t in_flight;
    double requests_per_s;
} client_sample_t;

struct client_series {
    client_sample_t samples[CLIENT_SERIES_MAX];
    size_t n;
    uint64_t stride; /* keep one sample of every stride offered */
    uint64_t offered;
};

client_series_t *client_series_new(void) {
    client_series_t *self = calloc(1, sizeof *self);
    if (self)
        self->stride = 1;
    return self;
}

void client_series_destroy(client_series_t **self_p) {
    free(*self_p);
    *self_p = NULL;
}

void client_series_add(client_series_t *self, double t_s, uint32_t in_flight,
                       double requests_per_s) {
    if (self->offered++ % self->stride != 0)
        return;
    if (self->n == CLIENT_SERIES_MAX) { /* halve: keep the even samples, then every other */
        for (size_t i = 0; i < CLIENT_SERIES_MAX / 2; i++)
            self->samples[i] = self->samples[2 * i];
        self->n = CLIENT_SERIES_MAX / 2;
        self->stride *= 2;
        self->offered = 1;
    }
    self->samples[self->n++] = (client_sample_t){t_s, in_flight, requests_per_s};
}

json_t *client_series_json(const client_series_t *self) {
    json_t *t = json_array(), *in_flight = json_array(), *rps = json_array();
    for (size_t i = 0; i < self->n; i++) {
        json_array_append_new(t, json_real(self->samples[i].t_s));
        json_array_append_new(in_flight, json_integer(self->samples[i].in_flight));
        json_array_append_new(rps, json_real(self->samples[i].requests_per_s));
    }
    return json_pack("{s:o, s:o, s:o}", "t_s", t, "in_flight", in_flight, "requests_per_s", rps);
}
