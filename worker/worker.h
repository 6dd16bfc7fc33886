/* `stampede worker`: a long-lived agent. Each of its --threads loops registers with the
 * controller as a logical worker of its own (own sockets, engine, executor and event batches;
 * nothing shared on the hot path), runs what it is assigned, returns to idle and serves the next
 * run; --once exits after one run. A loop that hears nothing from its controller for 3 s stops
 * its load at once (a shared server is never left under orphaned load) and registers again.
 *
 * Test hooks (documented in docs/protocol.md as test-only): STAMPEDE_TEST_LOOKUP_DELAY_MS slows
 * every host name lookup by that many ms; STAMPEDE_TEST_CLOCK_OFFSET_NS adds
 * that many ns to every clock reading the worker reports; STAMPEDE_TEST_PROTO_VERSION makes it
 * announce another protocol version. */
#ifndef STAMPEDE_WORKER_H
#define STAMPEDE_WORKER_H

/* Entry point: `worker --connect tcp://HOST:PORT [--threads T] [--once] [--id NAME]`. Exit 0 when
 * it stopped as asked, 1 on a usage or set-up error, 3 when the controller refused it. */
int worker_main(int argc, char **argv);

#endif
