/* test-dropins.c - truerandomd.conf.d/NAME.conf as a fleet uses it: drop-ins
 * read after the file in the byte order of their names, each over what came
 * before; other names ignored; a key set twice in one file refused, once in
 * each of two files not; errors at the drop-in's FILE:LINE, a check that
 * spans keys at the later file's line; a missing file with drop-ins; a
 * drop-in directory that is not one, a directory named .conf and too many
 * drop-ins refused; nothing applied from a set with one bad file; and the
 * configuration's SHA-256 over the files as read, as the ledger records it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <sodium.h>

#include "config/config.h"

static char dir[] = "/tmp/test-dropins-XXXXXX";
static char conf[sizeof(dir) + 32], dropins[sizeof(conf) + 4];

/* Writes text to NAME under the drop-in directory (NULL: the file itself). */
static void write_file(const char *name, const char *text) {
        char path[sizeof(dropins) + 64];
        FILE *f;

        if (name)
                snprintf(path, sizeof(path), "%s/%s", dropins, name);
        else
                snprintf(path, sizeof(path), "%s", conf);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
        memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);
        if (!mkdtemp(dir))
                return -1;
        snprintf(conf, sizeof(conf), "%s/truerandomd.conf", dir);
        snprintf(dropins, sizeof(dropins), "%s.d", conf);
        return mkdir(dropins, 0755);
}

static int teardown(void **state) {
        char cmd[sizeof(dir) + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        return system(cmd);
}

/* Loads conf; returns the error (malloc'd) or NULL with *c filled. */
static char *load(Config *c, bool missing_ok) {
        char *error = NULL;
        int r = config_load(conf, missing_ok, c, &error);

        if (r < 0)
                assert_non_null(error);
        else
                assert_null(error);
        return error;
}

static void assert_error(const char *name, const char *expected) {
        char want[sizeof(dropins) + 256];
        Config c;
        char *error = load(&c, false);

        assert_non_null(error);
        snprintf(want, sizeof(want), "%s/%s", dropins, name);
        if (expected)
                snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s", expected);
        assert_string_equal(error, want);
        free(error);
}

static void test_order_and_override(void **state) {
        char path[sizeof(dropins) + 32];
        Config c;

        write_file(NULL, "[device]\nmax_parked = 900\nmax_open_per_uid = 7\n");
        write_file("20-host.conf", "[device]\nmax_parked = 2700\n[daemon]\nuser = rngd\n");
        write_file("10-site.conf", "[device]\nmax_parked = 1800\n[pool]\nstore_blocks = 500\n");
        /* Not drop-ins: another ending, a backup, a hidden file. */
        write_file("README", "this is not a configuration\n");
        write_file("30-old.conf~", "[device]\nmax_parked = 1\n");
        write_file(".40-hidden.conf", "[device]\nmax_parked = 1\n");

        assert_null(load(&c, false));
        assert_int_equal(c.max_parked, 2700);
        assert_int_equal(c.max_open_per_uid, 7);
        assert_int_equal(c.store_blocks, 500);
        assert_int_equal(c.n_files, 3);
        assert_string_equal(c.files[0], conf);
        snprintf(path, sizeof(path), "%s/10-site.conf", dropins);
        assert_string_equal(c.files[1], path);
        snprintf(path, sizeof(path), "%s/20-host.conf", dropins);
        assert_string_equal(c.files[2], path);
        /* Where the drop-in set the user, for the daemon's FILE:LINE. */
        assert_string_equal(c.user_at.file, path);
        assert_int_equal(c.user_at.line, 4);
        assert_null(c.group_at.file);
        assert_int_equal(c.group_at.line, 0);
        config_done(&c);
}

/* Byte order, not the locale's or a numeric one. */
static void test_byte_order(void **state) {
        Config c;

        write_file(NULL, "");
        write_file("9-a.conf", "[pool]\nstore_blocks = 900\n");
        write_file("10-b.conf", "[pool]\nstore_blocks = 1000\n");
        write_file("B.conf", "[pool]\nstore_blocks = 1100\n");
        write_file("a.conf", "[pool]\nstore_blocks = 1200\n");
        assert_null(load(&c, false));
        /* "10-b" < "9-a" < "B" < "a" */
        assert_int_equal(c.store_blocks, 1200);
        config_done(&c);
}

static void test_duplicate_in_one_file(void **state) {
        write_file(NULL, "[device]\nmax_parked = 900\n");
        write_file("10-site.conf", "[device]\nmax_parked = 1800\n\nmax_parked = 2700\n");
        assert_error("10-site.conf", ":4: duplicate key 'max_parked' in [device], first set on line 2");
}

static void test_error_in_dropin(void **state) {
        write_file(NULL, "[device]\nmax_parked = 900\n");
        write_file("10-site.conf", "[pool]\nstore_blocks = 500\n");
        write_file("20-host.conf", "[pool]\n\nno_such_key = 1\n");
        assert_error("20-host.conf", ":3: unknown key 'no_such_key' in [pool]");
}

/* A check that spans keys names the later place, here in a drop-in. */
static void test_check_across_files(void **state) {
        write_file(NULL, "[pool]\nlow_water = 50\n");
        write_file("10-site.conf", "\n\n[pool]\nstore_blocks = 40\n");
        assert_error("10-site.conf", ":4: low_water must be < store_blocks (50 >= 40)");
}

/* The file set the later key: its line, though a drop-in came after. */
static void test_check_in_file(void **state) {
        char want[sizeof(conf) + 64];
        Config c;
        char *error;

        write_file(NULL, "[pool]\nstore_blocks = 40\nlow_water = 50\n");
        write_file("10-site.conf", "[device]\nmax_parked = 900\n");
        error = load(&c, false);
        snprintf(want, sizeof(want), "%s:3: low_water must be < store_blocks (50 >= 40)", conf);
        assert_string_equal(error, want);
        free(error);
}

static void test_missing_file_with_dropins(void **state) {
        Config c;

        unlink(conf);
        write_file("10-site.conf", "[pool]\nstore_blocks = 500\n");
        assert_null(load(&c, true));
        assert_int_equal(c.store_blocks, 500);
        assert_int_equal(c.n_files, 1);
        assert_non_null(strstr(c.files[0], "/10-site.conf"));
        config_done(&c);
}

static void test_no_dropin_directory(void **state) {
        Config c;

        write_file(NULL, "[pool]\nstore_blocks = 500\n");
        assert_int_equal(rmdir(dropins), 0);
        assert_null(load(&c, false));
        assert_int_equal(c.n_files, 1);
        config_done(&c);
}

static void test_dropins_not_a_directory(void **state) {
        char want[sizeof(dropins) + 64];
        Config c;
        char *error;
        FILE *f;

        write_file(NULL, "");
        assert_int_equal(rmdir(dropins), 0);
        assert_non_null(f = fopen(dropins, "we"));
        fclose(f);
        error = load(&c, false);
        snprintf(want, sizeof(want), "%s: %s", dropins, strerror(ENOTDIR));
        assert_string_equal(error, want);
        free(error);
}

static void test_directory_named_conf(void **state) {
        char path[sizeof(dropins) + 32];

        write_file(NULL, "");
        snprintf(path, sizeof(path), "%s/10-site.conf", dropins);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_error("10-site.conf", ": Is a directory");
}

static void test_too_many(void **state) {
        char name[32], want[sizeof(dropins) + 64];
        Config c;
        char *error;

        write_file(NULL, "");
        for (int i = 0; i <= CONFIG_DROPINS_MAX; i++) {
                snprintf(name, sizeof(name), "%03d.conf", i);
                write_file(name, "");
        }
        error = load(&c, false);
        snprintf(want, sizeof(want), "%s: more than %d drop-ins", dropins, CONFIG_DROPINS_MAX);
        assert_string_equal(error, want);
        free(error);
}

/* Config.sha256 is what config.h says an auditor computes with sha256sum:
 * each file's path, a NUL, its bytes, in the order read; any byte of any
 * file, or a file's name, moves it; the defaults hash the empty string. */
static void test_digest(void **state) {
        static const char main_text[] = "[device]\nmax_parked = 900\n";
        static const char dropin_text[] = "# site\n[pool]\nlow_water = 17\n";
        char dropin_path[sizeof(dropins) + 64];
        uint8_t want[CONFIG_SHA256_BYTES], first[CONFIG_SHA256_BYTES];
        crypto_hash_sha256_state st;
        Config c, d;

        assert_int_equal(config_init_defaults(&d), 0);
        crypto_hash_sha256(want, (const unsigned char *) "", 0);
        assert_memory_equal(d.sha256, want, sizeof(want));
        config_done(&d);

        write_file(NULL, main_text);
        write_file("10-site.conf", dropin_text);
        snprintf(dropin_path, sizeof(dropin_path), "%s/10-site.conf", dropins);
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, (const unsigned char *) conf, strlen(conf) + 1);
        crypto_hash_sha256_update(&st, (const unsigned char *) main_text, strlen(main_text));
        crypto_hash_sha256_update(&st, (const unsigned char *) dropin_path, strlen(dropin_path) + 1);
        crypto_hash_sha256_update(&st, (const unsigned char *) dropin_text, strlen(dropin_text));
        crypto_hash_sha256_final(&st, want);
        assert_null(load(&c, false));
        assert_memory_equal(c.sha256, want, sizeof(want));
        memcpy(first, c.sha256, sizeof(first));
        config_done(&c);

        /* A comment is a byte like any other: the file is what is hashed. */
        write_file("10-site.conf", "# Site\n[pool]\nlow_water = 17\n");
        assert_null(load(&c, false));
        assert_memory_not_equal(c.sha256, first, sizeof(first));
        config_done(&c);

        /* The same bytes under another name. */
        write_file("10-site.conf", "");
        write_file("20-site.conf", dropin_text);
        assert_null(load(&c, false));
        assert_memory_not_equal(c.sha256, first, sizeof(first));
        config_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_order_and_override, setup, teardown),
                cmocka_unit_test_setup_teardown(test_byte_order, setup, teardown),
                cmocka_unit_test_setup_teardown(test_duplicate_in_one_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_error_in_dropin, setup, teardown),
                cmocka_unit_test_setup_teardown(test_check_across_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_check_in_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_file_with_dropins, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_dropin_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dropins_not_a_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(test_directory_named_conf, setup, teardown),
                cmocka_unit_test_setup_teardown(test_too_many, setup, teardown),
                cmocka_unit_test_setup_teardown(test_digest, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
