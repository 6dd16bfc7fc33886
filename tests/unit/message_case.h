/* A row of a table-driven refusal test: an input (YAML text, a spec, a file's content or name)
 * and the exact message it must give. Shared so that each test file does not declare its own. */
#ifndef STAMPEDE_TEST_MESSAGE_CASE_H
#define STAMPEDE_TEST_MESSAGE_CASE_H

typedef struct message_case {
    const char *input;
    const char *message;
} message_case_t;

#endif
