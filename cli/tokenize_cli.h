/* `stampede tokenize`: a text's tokens in a target's tokenizer (docs/workloads.md). */
#ifndef STAMPEDE_TOKENIZE_CLI_H
#define STAMPEDE_TOKENIZE_CLI_H

/* Entry point; argv[0] is the subcommand. 0 ok, 1 a file or text it cannot read, 2 usage. */
int tokenize_main(int argc, char **argv);

#endif
