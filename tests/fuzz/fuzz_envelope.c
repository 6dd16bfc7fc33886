/* Protobuf envelope handling (proto/envelope.c) on arbitrary bytes: unpacked into one arena kept
 * across inputs, as both ends keep theirs. An envelope that decodes packs again, and those bytes,
 * when they decode, pack to themselves (the packed form is canonical after one round); unpacking
 * the input again into the reused arena gives an envelope of the same packed size. */
#include <string.h>

#include "envelope.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static envelope_arena_t *arena;
    if (!arena)
        arena = envelope_arena_new();
    FUZZ_CHECK(arena != NULL);
    Stampede__Envelope *env = envelope_unpack(arena, data, size);
    if (!env)
        return 0;
    uint8_t *first = NULL, *second = NULL;
    size_t first_cap = 0, second_cap = 0;
    size_t first_len = envelope_pack(env, &first, &first_cap);
    FUZZ_CHECK(first_len > 0 || stampede__envelope__get_packed_size(env) == 0);
    FUZZ_CHECK(first_len <= first_cap || first_len == 0);
    /* protobuf-c keeps unknown fields, even the invalid number 0 (corpus/envelope/
     * unknown_field_number_0), and packs them in a form it then refuses: stampede never packs a
     * received envelope again, so only a repacked form that decodes must be canonical. */
    Stampede__Envelope *again = envelope_unpack(arena, first, first_len);
    if (again != NULL) {
        size_t second_len = envelope_pack(again, &second, &second_cap);
        FUZZ_CHECK(second_len == first_len);
        FUZZ_CHECK(first_len == 0 || memcmp(first, second, first_len) == 0);
    }
    /* The arena forgets the previous message: the input decodes the same again. */
    env = envelope_unpack(arena, data, size);
    FUZZ_CHECK(env != NULL);
    FUZZ_CHECK(stampede__envelope__get_packed_size(env) == first_len);
    free(first);
    free(second);
    return 0;
}
