/* The tool: each subcommand's argv parsed here, as curl's src/ does for lib/, and nowhere in the
 * libraries. main.c dispatches to these; argv[0] is the subcommand. */
#ifndef STAMPEDE_CLI_H
#define STAMPEDE_CLI_H

/* `compare RUN RUN... [--format md|csv|json] [--out FILE]`: 0 ok, 1 on bad input or a write
 * error, 2 on a usage error. */
int compare_main(int argc, char **argv);

/* `plan [--model-config FILE] [--layers N] [--hidden N] [--kv-ratio R | --heads N --kv-heads N]
 * ... --context TOKENS --free-gib G [--workload FILE]`: exit status 0 ok, 1 when a file cannot be
 * read or is malformed (config.json, the workload), 2 on a usage error or a missing input. */
int plan_main(int argc, char **argv);

/* `read-metrics [--json] FILE...`: 0 when every file was read, 1 when one could not be, 2 on a
 * usage error. */
int read_metrics_main(int argc, char **argv);

/* `report DIR [DIR...] [--definitions LIST]`: 0 when every directory was rendered, 1 when one
 * could not be (said on stderr, naming the file), 2 on a usage error. */
int report_cmd_main(int argc, char **argv);

#endif
