/* `stampede plan`: the KV-cache arithmetic of reference/capacity-planning.md §2 from flags or a
 * Hugging Face config.json, and with --workload where a sweep of that workload should look
 * (docs/plan.md). Nothing is sent anywhere: it prints to stdout. */
#ifndef STAMPEDE_PLAN_CMD_H
#define STAMPEDE_PLAN_CMD_H

/* `plan [--model-config FILE] [--layers N] [--hidden N] [--kv-ratio R | --heads N --kv-heads N]
 * ... --context TOKENS --free-gib G [--workload FILE]`: exit status 0 ok, 1 when a file cannot be
 * read or is malformed (config.json, the workload), 2 on a usage error or a missing input. */
int plan_main(int argc, char **argv);

#endif
