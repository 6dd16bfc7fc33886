/* controller/live_http's live_http_file (controller --linger): a file under the root comes back
 * byte for byte with its content type, a directory as its listing, and every way out of the root
 * is 404: "..", hidden names, empty components, '%', '\\', and a symbolic link leading out; a
 * link that stays inside is followed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "temp_file.h"
#include "unit_main.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buffer.h"
#include "live_http.h"

static char base[PATH_MAX], root[PATH_MAX + 8];

static int setup(void **state) {
    snprintf(base, sizeof base, "/tmp/stampede-live-http-XXXXXX");
    if (!mkdtemp(base))
        return -1;
    char p[PATH_MAX + 64];
    snprintf(root, sizeof root, "%s/out", base);
    mkdir(root, 0755);
    snprintf(p, sizeof p, "%s/levels", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/results.json", root);
    temp_file_write_at(p, "{\"schema_version\": 1}\n");
    snprintf(p, sizeof p, "%s/levels/report.md", root);
    temp_file_write_at(p, "# level\n");
    snprintf(p, sizeof p, "%s/.hidden", root);
    temp_file_write_at(p, "hidden\n");
    snprintf(p, sizeof p, "%s/secret.txt", base);
    temp_file_write_at(p, "outside\n");
    char link[PATH_MAX + 64];
    snprintf(link, sizeof link, "%s/escape.txt", root);
    if (symlink(p, link) != 0)
        return -1;
    snprintf(link, sizeof link, "%s/inside.json", root);
    if (symlink("results.json", link) != 0)
        return -1;
    return 0;
}

static int teardown(void **state) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

/* GET of rel (as the request path after /results/); the status, the body in out. */
static int get(const char *rel, buffer_t *out, const char **type) {
    buffer_reset(out);
    *type = "unset";
    return live_http_file(root, rel, strlen(rel), out, type);
}

/* out holds exactly text (buffers are compared by length: a file's bytes carry no NUL). */
static void assert_body(const buffer_t *out, const char *text) {
    assert_int_equal(buffer_pending(out), strlen(text));
    assert_memory_equal(buffer_head(out), text, strlen(text));
}

static void test_file_listing_and_types(void **state) {
    buffer_t out;
    buffer_init(&out);
    const char *type;
    assert_int_equal(get("results.json", &out, &type), 200);
    assert_body(&out, "{\"schema_version\": 1}\n");
    assert_string_equal(type, "application/json");
    assert_int_equal(get("levels/report.md", &out, &type), 200);
    assert_body(&out, "# level\n");
    assert_string_equal(type, "text/markdown; charset=utf-8");
    assert_int_equal(get("", &out, &type), 200);
    assert_body(&out, "escape.txt\ninside.json\nlevels/\nresults.json\n");
    assert_int_equal(get("levels/", &out, &type), 200);
    assert_body(&out, "report.md\n");
    assert_int_equal(get("inside.json", &out, &type), 200); /* a link that stays inside */
    assert_body(&out, "{\"schema_version\": 1}\n");
    buffer_clear(&out);
}

static void test_every_way_out_is_404(void **state) {
    static const char *const bad[] = {
        "../secret.txt",
        "levels/../../secret.txt",
        "..",
        "./results.json",
        ".hidden",
        "%2e%2e/secret.txt",
        "levels\\..\\..\\secret.txt",
        "escape.txt",
        "levels//report.md",
        "/etc/passwd",
        "//etc/passwd",
        "missing.json",
        "results.json/",
        "levels/report.md/x",
        "a b",
        "results.json\n",
    };
    buffer_t out;
    buffer_init(&out);
    const char *type;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int status = get(bad[i], &out, &type);
        if (status != 404)
            fail_msg("'%s' answered %d, not 404", bad[i], status);
        assert_int_equal(buffer_pending(&out), 0);
    }
    buffer_clear(&out);
}

UNIT_MAIN(cmocka_unit_test_setup_teardown(test_file_listing_and_types, setup, teardown),
          cmocka_unit_test_setup_teardown(test_every_way_out_is_404, setup, teardown))
