/* One curl multi handle driven by curl_multi_socket_action from a loop_t: curl says which
 * sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to call it back (CURLMOPT_TIMERFUNCTION);
 * each socket event costs one socket_action, never a scan over the transfers. The worker's
 * request engine and the controller's /metrics scraper both drive their multi handles this way.
 * The struct is embedded by its user (no allocation); the hooks say what the user does around
 * each action (stamp a clock, drain finished transfers with curl_multi_info_read). */
#ifndef STAMPEDE_CURL_LOOP_H
#define STAMPEDE_CURL_LOOP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "loop.h"

/* Called just before a socket_action (socket_event: a socket was ready, else curl's timeout). */
typedef void (*curl_loop_before_fn)(void *arg, bool socket_event);
/* Called just after a socket_action: drain curl_multi_info_read here. */
typedef void (*curl_loop_after_fn)(void *arg);

typedef struct curl_loop {
    loop_t *loop;
    CURLM *multi;
    uint64_t timer_id; /* the loop timer standing for curl's timeout */
    bool closing;      /* no new timer once set */
    curl_loop_before_fn before;
    curl_loop_after_fn after;
    void *arg;
} curl_loop_t;

/* Binds multi to loop: sets multi's socket and timer callbacks to self, which must stay at the
 * same address while multi lives. before may be NULL; after is required. */
void curl_loop_bind(curl_loop_t *self, loop_t *loop, CURLM *multi, curl_loop_before_fn before,
                    curl_loop_after_fn after, void *arg);
/* Cancels the pending timer and sets no new one (call before curl_multi_cleanup, which may still
 * call back to unwatch its sockets). */
void curl_loop_close(curl_loop_t *self);

#endif
