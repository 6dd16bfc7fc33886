/* The calibration's state, shared by its files inside sim/ (not a door: calibrate.h is): the levels
 * read from results.json and the helpers every fit uses (calibrate_levels.c), the fits from server
 * figures and the TPOT curve (calibrate.c, which calls the others), from client figures only
 * (calibrate_client.c) and the context limit from the 400s (calibrate_context.c). */
#ifndef STAMPEDE_CALIBRATE_FIT_H
#define STAMPEDE_CALIBRATE_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "mock_profiles.h"

#define CAL_MAX_LEVELS 512
#define CAL_MAX_PATH 4200
#define CAL_MAX_ROLES 8

/* One level of one input, as the fits read it. With server figures (`server`), those summed over
 * its pages; without, the client's figures and what Little's law makes of them. */
typedef struct cal_level {
    char name[96];          /* "FILE c=N" or "FILE rate=R/s" */
    size_t input;           /* which RESULTS it came from */
    char dir[CAL_MAX_PATH]; /* the results.json's directory (a sweep's levels/ are under it) */
    size_t index;           /* the level's index in its results.json */
    double c;               /* the concurrency; a rate level's requests in flight (Little's law) */
    double rate;            /* a rate level's sessions per second, else NAN */
    bool server;            /* read from the server's figures */
    double running, running_max, waiting, waiting_max, kv_pct;
    double batch; /* the batch a decoding request sees: E[running^2] / E[running] */
    double requests, prompt, hits, output; /* per request */
    double window_s, prompt_total, hits_total;
    double tpot_ms, prefill_ms, queue_ms, ttft_ms; /* the server's means, or the client's */
    double context_length_errors;
    double ok_context; /* the largest mean prompt + completion of a role's ok requests */
    bool saturated;
    /* client figures */
    double e2e_ms, error_pct, requests_per_s, in_flight, ttft_p95_ms;
    /* some requests queued (TTFT p95 past the knee) but not most (p50 below it): the batch is
     * somewhere between the engine's capacity and the concurrency, so the TPOT fit leaves it out */
    bool queued_tail;
    /* the input's first queued_tail level: the level below it queued none in its p95, so few
     * have queued here and Little's law's batch stands; it stays in the TPOT fit */
    bool queue_begins;
    bool medians;      /* TTFT, TPOT and E2E are p50s (the level had no means) */
    bool prompt_known; /* prompt from the roles' token counts */
    bool hits_known;   /* prefix-cache hits counted (the server's, or kv_hit_rate_pct) */
    /* each role's mean prompt and client TTFT (a graph's planner, executors, aggregator), for
     * TTFT against prompt tokens within one level */
    double role_prompt[CAL_MAX_ROLES], role_ttft_ms[CAL_MAX_ROLES];
    size_t n_roles;
} cal_level_t;

/* One fitted parameter. */
typedef struct cal_param {
    const char *key; /* the mock section's key */
    double value;
    bool fitted; /* from the data; else the base profile's */
    char quality[480];
    char levels[400];
} cal_param_t;

enum {
    P_TPOT_BASE,
    P_ALPHA,
    P_STEP_FIXED,
    P_PREFILL,
    P_OVERHEAD,
    P_MAX_SEQS,
    P_KV,
    P_MAX_MODEL_LEN,
    P__COUNT
};

typedef struct cal {
    cal_level_t levels[CAL_MAX_LEVELS];
    size_t n;
    cal_param_t p[P__COUNT];
    const mock_profile_t *base;
    bool prefix_cache, prefix_cache_known;
    double prefix_hit_rate;
} cal_t;

/* Every usable level of one input (a results.json or its directory) into self. 0, or -1 said on
 * stderr (unreadable, not results.json, no level it can use and why). */
int cal_levels_read(cal_t *self, const char *arg, size_t input);

/* "FILE c=4, c=8, ..." for the levels marked used. */
void cal_levels_text(const cal_t *self, const bool *used, char *buf, size_t len);
/* Sets p as fitted from the data. */
void cal_set(cal_param_t *p, double value, const char *quality, const char *levels);
/* Tokens a sequence samples per step under the base profile's speculative decoding (1 without):
 * a decode step is TPOT times this. */
double cal_tokens_per_step(const mock_profile_t *base);
/* Whether l is the lowest concurrency of its input. */
bool cal_lowest_of_input(const cal_t *self, const cal_level_t *l);

/* Client figures only: which levels are past the TTFT knee (saturated), which have a queued
 * tail, and where the queue begins. */
void cal_client_mark_saturated(cal_t *self);
/* Client figures only: max_num_seqs from the batch past the knee, and the TTFT's overhead and
 * prefill rate from TTFT against prompt tokens, each said when the data cannot tell it. */
void cal_client_fit_max_seqs(cal_t *self);
void cal_client_fit_first_token(cal_t *self);
/* Client figures only: a closed loop's levels past the knee decode a full batch, the capacity
 * fitted (max_num_seqs), whatever Little's law makes of their timed-out requests. */
void cal_client_pin_saturated(cal_t *self);

/* max_model_len from the requests refused for context length: the sizes of passed and refused
 * requests in the levels' traces (requests.jsonl), or an estimate from the results' counts. */
void cal_fit_context(cal_t *self);

#endif
