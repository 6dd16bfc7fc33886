/* The `workload:` section of a workload file: what a session is (requests, a chat, a graph, a
 * trace's sessions), its lengths and roles, the scaffold and compaction. Read by config_load.c,
 * config_graph.c, config_trace.c, config_scaffold.c and config_compaction.c; written back by
 * config_write.c. */
#ifndef STAMPEDE_CONFIG_WORKLOAD_H
#define STAMPEDE_CONFIG_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dist.h"

/* The largest context window of any model (10 million tokens): a file that gives a token count
 * above it is refused at load, naming the key, and no drawn count is larger (common/workload.h,
 * docs/config.md). */
#define WORKLOAD_MAX_TOKENS 10000000u

typedef enum {
    WORKLOAD_REQUESTS,
    WORKLOAD_CHAT,
    WORKLOAD_GRAPH,
    WORKLOAD_TRACE
} config_workload_kind_t;
typedef enum {
    GRAPH_LINEAR,
    GRAPH_DIAMOND,
    GRAPH_FANOUT,
    GRAPH_BRANCHING,
    GRAPH_TEMPLATE
} config_graph_shape_t;

/* Role names a file may define (the controller keeps statistics for this many roles). */
#define CONFIG_MAX_ROLES 64

/* One node's settings: a template node, or one slot of a generated shape (diamond: planner,
 * executor, aggregator; linear: turn; fanout: main, child, continuation; branching: node). */
typedef struct config_graph_node {
    char *id;                   /* the template node's id, or the slot's name */
    int line;                   /* where the file gives it (0: defaulted), for messages */
    uint32_t role;              /* index into workload.roles */
    uint32_t *parents;          /* template: indices of its parents (earlier nodes once loaded) */
    size_t n_parents;           /* template */
    uint32_t history_parent;    /* template: a parent or ancestor index (default: first parent) */
    double history;             /* 1 = full, 0 = none (a sub-agent), else a fraction */
    bool append_parent_replies; /* the parents' replies open its user text */
    dist_t input_tokens;        /* fresh tokens (default: workload.input_tokens) */
    dist_t output_tokens;       /* max_tokens (default: workload.output_tokens) */
    dist_t wait_after_ready;    /* seconds after its parents finish (default: think_time) */
} config_graph_node_t;

/* Caps on a graph's fan: executors of a diamond, children of a fanout round; and on a branching
 * layer's width (the generators keep these on their stack). */
#define CONFIG_GRAPH_MAX_FAN 10000
#define CONFIG_GRAPH_MAX_WIDTH 1024

typedef struct config_graph {
    config_graph_shape_t shape;
    config_graph_node_t *nodes; /* template: the nodes, parents first; a shape: its slots */
    size_t n_nodes;
    uint32_t message_overhead_tokens; /* extra fresh tokens per appended parent reply (A2A) */
    dist_t step_overhead;    /* the framework's own time per step: added to every non-root node's
                                wait (default 0) */
    uint32_t context_limit;  /* the context the framework budgets max_tokens for (0: none) */
    uint32_t context_margin; /* tokens it keeps free under context_limit */
    dist_t length;           /* linear: requests per session (default uniform 100..150) */
    uint32_t executor_count; /* diamond: executors (default 3) */
    bool sequential;         /* diamond: executors one after another (AutoGen) */
    uint32_t children;       /* fanout: sub-sessions per round (default 3) */
    dist_t child_length;     /* fanout: requests per sub-session (default 1) */
    uint32_t rounds;         /* fanout: main -> children -> continuation rounds (default 1) */
    dist_t depth;            /* branching: layers after the root (default 3) */
    dist_t width;            /* branching: nodes per layer when given (else from fan_out) */
    bool width_given;
    dist_t fan_out;     /* branching: children per node (default 2) */
    dist_t fan_in;      /* branching: parents per node (default 1) */
    uint32_t max_depth; /* branching: cap on layers (default 16) */
    uint32_t max_width; /* branching: cap on a layer's width (default 64) */
} config_graph_t;

/* workload.trace (kind: trace): which file to replay and how (docs/workloads.md). */
typedef enum {
    TRACE_FORMAT_SESSION,
    TRACE_FORMAT_MOONCAKE,
    TRACE_FORMAT_AZURE,
    TRACE_FORMAT_VEEKSHA
} config_trace_format_t;

typedef struct config_trace {
    char *path;                   /* made absolute at load */
    config_trace_format_t format; /* default session */
    uint32_t block_size;          /* tokens per hash id (default 512) */
    double time_scale;            /* timed replay: arrival x time_scale (default 1) */
    bool wrap; /* past the trace's last session, start over with new session ids */
} config_trace_t;

/* workload.dataset (docs/workloads.md "Datasets"): prompts taken from a file of real text. */
typedef enum { DATASET_FORMAT_SHAREGPT, DATASET_FORMAT_JSONL } config_dataset_format_t;

typedef struct config_dataset {
    char *path;                     /* made absolute at load; NULL: no dataset */
    config_dataset_format_t format; /* default sharegpt */
    uint32_t min_input_tokens;      /* a turn shorter ends its conversation (default 1) */
    uint32_t max_input_tokens;      /* a turn longer ends its conversation (0: none) */
    uint32_t max_context_tokens;    /* a turn whose context would pass this ends it (0: none) */
    uint64_t sample;                /* conversations drawn with the seed (0: every one left) */
    bool output_given;              /* output_tokens is a distribution, not the replies */
    dist_t output_tokens;           /* output_given: every turn's max_tokens */
    uint64_t roles; /* kind graph: bit r set when role r's nodes take dataset text (0: the roots) */
} config_dataset_t;

struct trace;
/* The sizes of one role's scaffold. */
typedef struct config_scaffold_size {
    uint32_t system_tokens; /* words of the system prompt */
    uint32_t tools;         /* function tools in each chat request's tools array */
    uint32_t tool_tokens;   /* words of each tool's description */
} config_scaffold_size_t;

/* workload.scaffold (docs/workloads.md): with it, each role (or the workload, without roles) has a
 * system prompt and tool definitions of its own, the same bytes in every session. */
typedef struct config_scaffold {
    bool given;           /* the file has the section */
    uint32_t tools;       /* every role's tools, unless scaffold.roles says otherwise */
    uint32_t tool_tokens; /* every role's tool description words, likewise */
    double tool_results;  /* share of the turns that continue a conversation sent as role: tool */
    bool role_given[CONFIG_MAX_ROLES];             /* scaffold.roles names this role */
    config_scaffold_size_t role[CONFIG_MAX_ROLES]; /* role_given: its sizes, defaults filled in */
} config_scaffold_t;

/* workload.compaction (docs/workloads.md): when a request's context would pass limit_tokens, a
 * summarise request goes first and the conversation continues from its reply. */
typedef struct config_compaction {
    uint32_t limit_tokens;   /* prompt + max_tokens above this compacts first; 0 = off */
    uint32_t summary_tokens; /* max_tokens of the summarise request (default 512) */
    uint32_t prompt_tokens;  /* words of the summarise instruction (default 32) */
    uint32_t role;           /* role index of summarise requests (default named "compaction") */
} config_compaction_t;

typedef struct config_workload {
    config_workload_kind_t kind;   /* requests: one-node sessions; chat: a chain of turns */
    dist_t turns;                  /* chat: turns per session (rounded, >= 1) */
    dist_t input_tokens;           /* fresh input tokens per request or turn (rounded, >= 1) */
    dist_t output_tokens;          /* max_tokens per request (rounded, >= 1) */
    dist_t think_time;             /* seconds between a reply and the next turn (>= 0) */
    uint32_t system_prompt_tokens; /* shared scaffold prepended to every session; default 0 */
    char **roles;                  /* role names: roles[i] names role index i (none by default) */
    size_t n_roles;
    config_graph_t graph; /* kind graph: the shape and its nodes */
    config_trace_t trace; /* kind trace: the file and how to replay it */
    config_dataset_t
        dataset;          /* requests, chat or graph: prompts from a dataset (path NULL: none) */
    struct trace *replay; /* kind trace or a dataset: the loaded sessions (shared by copies), or
                             NULL: loaded by config_load_file (or, on a worker, its part from
                             Assign) */
    config_scaffold_t scaffold;
    config_compaction_t compaction;
} config_workload_t;

/* The kinds as written in the file, NULL-terminated, in enum order. */
extern const char *const config_workload_kind_names[];
/* "requests", "chat", "graph" or "trace". */
const char *config_workload_kind_name(config_workload_kind_t kind);
/* The name of role index i: roles[i], or NULL past the named roles. */
const char *config_workload_role_name(const config_workload_t *self, uint32_t i);
/* The index of the named role, adding it to roles when new; -1 on no memory. */
int config_workload_role_index(config_workload_t *self, const char *name, uint32_t *index);

#endif
