/* Reading one event from a libzmq socket monitor (zmq_socket_monitor): the controller's gate and
 * the worker's agent both watch their sockets' handshakes this way. */
#ifndef STAMPEDE_ZMQ_MONITOR_H
#define STAMPEDE_ZMQ_MONITOR_H

#include <stdint.h>

/* Receives one event without waiting: its first frame [uint16 event, uint32 value] into *event
 * and *value (0 when the frame is short), the endpoint frame read and dropped. 0 when an event was
 * read, -1 when none was waiting. */
int zmq_monitor_read(void *monitor, uint16_t *event, uint32_t *value);

#endif
