/* Protobuf envelope handling (proto/envelope.c) on arbitrary bytes: unpacked into one arena kept
 * across inputs, as both ends keep theirs. An envelope that decodes packs again, and those bytes,
 * when they decode, pack to themselves (the packed form is canonical after one round); unpacking
 * the input again into the reused arena gives an envelope of the same packed size. The bounded
 * unpack a worker uses agrees with the arena's. */
#include <stdbool.h>
#include <string.h>

#include "envelope.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static envelope_arena_t *arena;
    if (!arena)
        arena = envelope_arena_new();
    FUZZ_CHECK(arena != NULL);
    Stampede__Envelope *env = envelope_unpack(arena, data, size);
    /* A worker's unpack under a budget (envelope_unpack_bounded): with the worker's budget (the
     * length + 1 MiB: no input of libFuzzer's sizes needs more) it decodes what the arena does,
     * to the same packed size; with a budget a quarter of the length it may refuse as over (and
     * frees what it had built under ASan's eye), never as undecodable bytes the arena took. */
    bool over = true;
    Stampede__Envelope *bounded =
        envelope_unpack_bounded(data, size, size + ENVELOPE_UNPACK_SLACK, &over);
    FUZZ_CHECK((bounded != NULL) == (env != NULL));
    FUZZ_CHECK(!over);
    FUZZ_CHECK(!bounded || stampede__envelope__get_packed_size(bounded) ==
                               stampede__envelope__get_packed_size(env));
    envelope_free(bounded);
    bounded = envelope_unpack_bounded(data, size, size / 4, &over);
    FUZZ_CHECK(bounded != NULL || over || env == NULL);
    envelope_free(bounded);
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
