#include "zmq_monitor.h"

#include <string.h>
#include <zmq.h>

int zmq_monitor_read(void *monitor, uint16_t *event, uint32_t *value) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, monitor, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&msg);
        return -1;
    }
    *event = 0;
    *value = 0;
    if (zmq_msg_size(&msg) >= 6) {
        memcpy(event, zmq_msg_data(&msg), sizeof *event);
        memcpy(value, (const uint8_t *)zmq_msg_data(&msg) + 2, sizeof *value);
    }
    int more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
    while (more) { /* the endpoint frame */
        zmq_msg_init(&msg);
        more = zmq_msg_recv(&msg, monitor, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&msg);
        zmq_msg_close(&msg);
    }
    return 0;
}
