/* `stampede worker --connect tcp://HOST:PORT`: a long-lived agent serving the controller's runs. */
#ifndef STAMPEDE_WORKER_CLI_H
#define STAMPEDE_WORKER_CLI_H

/* Entry point: `worker --connect tcp://HOST:PORT [--threads T] [--once] [--id NAME]`. Exit 0 when
 * it stopped as asked, 1 on a usage or set-up error, 3 when the controller refused it. */
int worker_main(int argc, char **argv);

#endif
