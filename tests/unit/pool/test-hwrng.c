/* test-hwrng.c - the hwrng listing (pool/hwrng.h) against fake sysfs trees
 * shaped as Linux kernels write them: every device of rng_available
 * listed once, "none" never listed as a device, the current one marked,
 * its quality and who selected it read where the kernel offers them and
 * -1 where it does not (before 5.18), a TPM's RNG recognised by its exact
 * name and number, and malformed or oversized values refused, never cut. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/hwrng.h"

/* ---- a fake sysfs directory -------------------------------------------- */

typedef struct Tree {
        char dir[64];
} Tree;

static void tree_write(Tree *t, const char *name, const char *text) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", t->dir, name);
        if (!text) {
                (void) unlink(path);
                return;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

/* A tree as a kernel writes it; NULL leaves an attribute out. */
static void tree_new(Tree *t, const char *available, const char *current, const char *quality,
                     const char *selected) {
        strcpy(t->dir, "/tmp/test-hwrng-XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        tree_write(t, "rng_available", available);
        tree_write(t, "rng_current", current);
        tree_write(t, "rng_quality", quality);
        tree_write(t, "rng_selected", selected);
}

static void tree_free(Tree *t) {
        DIR *d = opendir(t->dir);
        struct dirent *e;

        assert_non_null(d);
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        assert_int_equal(unlinkat(dirfd(d), e->d_name, 0), 0);
        closedir(d);
        assert_int_equal(rmdir(t->dir), 0);
}

/* ---- listing ------------------------------------------------------------ */

/* The guest of the vm suite: virtio-rng and the swtpm TPM, virtio current
 * (it registered first), a 6.x kernel ending the list with "none". */
static void test_list_two_devices(void **state) {
        HwrngList l;
        Tree t;

        tree_new(&t, "virtio_rng.0 tpm-rng-0 none\n", "virtio_rng.0\n", "1024\n", "0\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.n, 2);
        assert_false(l.truncated);
        assert_string_equal(l.devices[0].name, "virtio_rng.0");
        assert_true(l.devices[0].current);
        assert_int_equal(l.devices[0].tpm, -1);
        assert_string_equal(l.devices[1].name, "tpm-rng-0");
        assert_false(l.devices[1].current);
        assert_int_equal(l.devices[1].tpm, 0);
        assert_string_equal(l.current, "virtio_rng.0");
        assert_int_equal(l.quality, 1024);
        assert_int_equal(l.selected, 0);
        tree_free(&t);
}

/* Before 5.18: no rng_quality, no rng_selected, no "none" in the list.
 * Those read as -1 (not offered), the listing itself works. */
static void test_list_old_kernel(void **state) {
        HwrngList l;
        Tree t;

        tree_new(&t, "tpm-rng-1\n", "tpm-rng-1\n", NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.n, 1);
        assert_true(l.devices[0].current);
        assert_int_equal(l.devices[0].tpm, 1);
        assert_int_equal(l.quality, -1);
        assert_int_equal(l.selected, -1);
        tree_free(&t);
}

/* No device: nothing listed, nothing current, no quality to speak of even
 * though the attribute is there. */
static void test_list_none(void **state) {
        HwrngList l;
        Tree t;

        tree_new(&t, "none\n", "none\n", "0\n", "0\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.n, 0);
        assert_string_equal(l.current, "");
        assert_int_equal(l.quality, -1);
        tree_free(&t);

        /* Old kernels write an empty line when nothing registered. */
        tree_new(&t, "\n", "none\n", NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.n, 0);
        tree_free(&t);
}

/* The user chose tpm-rng-0 (rng_selected 1) and the kernel shows its
 * quality, whatever it is: the listing reports, it does not judge. */
static void test_list_selected_quality(void **state) {
        HwrngList l;
        Tree t;

        tree_new(&t, "virtio_rng.0 tpm-rng-0 none\n", "tpm-rng-0\n", "512\n", "1\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_false(l.devices[0].current);
        assert_true(l.devices[1].current);
        assert_int_equal(l.quality, 512);
        assert_int_equal(l.selected, 1);
        tree_free(&t);

        /* Malformed or out-of-range optional values: not offered. */
        tree_new(&t, "a b\n", "a\n", "1025\n", "2\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.quality, -1);
        assert_int_equal(l.selected, -1);
        tree_free(&t);
        tree_new(&t, "a b\n", "a\n", "-1\n", "x\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.quality, -1);
        assert_int_equal(l.selected, -1);
        tree_free(&t);
}

static void test_list_truncated(void **state) {
        char available[HWRNG_MAX_DEVICES * 8 + 16] = "";
        HwrngList l;
        Tree t;

        for (unsigned i = 0; i < HWRNG_MAX_DEVICES + 2; i++)
                sprintf(available + strlen(available), "rng%u ", i);
        strcat(available, "none\n");
        tree_new(&t, available, "rng17\n", "1024\n", "0\n");
        assert_int_equal(hwrng_list_read(t.dir, &l), 0);
        assert_int_equal(l.n, HWRNG_MAX_DEVICES);
        assert_true(l.truncated);
        assert_string_equal(l.devices[HWRNG_MAX_DEVICES - 1].name, "rng15");
        /* The current device is named even when the list was cut before it. */
        assert_string_equal(l.current, "rng17");
        tree_free(&t);
}

static void test_list_errors(void **state) {
        char name[HWRNG_NAME_MAX + 8];
        HwrngList l = { .n = 99 };
        Tree t;

        /* No hw_random core: no directory, or no rng_available in it. */
        assert_int_equal(hwrng_list_read("/nonexistent/hw_random", &l), -ENOENT);
        tree_new(&t, NULL, "none\n", NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), -ENOENT);
        tree_free(&t);
        tree_new(&t, "a\n", NULL, NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), -ENOENT);
        tree_free(&t);
        /* A name longer than the kernel makes: refused, not cut. */
        memset(name, 'x', sizeof(name) - 2);
        name[sizeof(name) - 2] = '\n';
        name[sizeof(name) - 1] = '\0';
        tree_new(&t, name, "none\n", NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), -EBADMSG);
        tree_free(&t);
        tree_new(&t, "a\n", name, NULL, NULL);
        assert_int_equal(hwrng_list_read(t.dir, &l), -E2BIG);
        tree_free(&t);
        /* Nothing written on failure. */
        assert_int_equal(l.n, 99);
        assert_int_equal(hwrng_list_read(NULL, NULL), -EINVAL);
}

/* ---- which hwrng is a TPM's --------------------------------------------- */

static void test_tpm_names(void **state) {
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-0"), 0);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-7"), 7);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-123"), 123);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-01"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng--1"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-+1"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-1x"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng-99999999999"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("tpm-rng"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("xtpm-rng-0"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index("virtio_rng.0"), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index(""), -EINVAL);
        assert_int_equal(hwrng_name_tpm_index(NULL), -EINVAL);
}

/* The double-credit question: is /dev/hwrng reading TPM N right now? */
static void test_current_tpm(void **state) {
        Tree t;

        tree_new(&t, "virtio_rng.0 tpm-rng-0 none\n", "tpm-rng-0\n", "1024\n", "1\n");
        assert_int_equal(hwrng_current_tpm(t.dir), 0);
        tree_write(&t, "rng_current", "tpm-rng-3\n");
        assert_int_equal(hwrng_current_tpm(t.dir), 3);
        tree_write(&t, "rng_current", "virtio_rng.0\n");
        assert_int_equal(hwrng_current_tpm(t.dir), -ENODEV);
        tree_write(&t, "rng_current", "none\n");
        assert_int_equal(hwrng_current_tpm(t.dir), -ENODEV);
        tree_write(&t, "rng_current", NULL);
        assert_int_equal(hwrng_current_tpm(t.dir), -ENOENT);
        tree_free(&t);
        assert_int_equal(hwrng_current_tpm("/nonexistent/hw_random"), -ENOENT);
}

static void test_read_attr(void **state) {
        char buf[8];
        Tree t;

        /* Seven characters and their newline fit in 8 bytes; eight do not. */
        tree_new(&t, "1234567\n", "12345678", "", NULL);
        assert_int_equal(hwrng_read_attr(t.dir, "rng_available", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "1234567");
        assert_int_equal(hwrng_read_attr(t.dir, "rng_current", buf, sizeof(buf)), -E2BIG);
        tree_write(&t, "rng_current", "12345678\n");
        assert_int_equal(hwrng_read_attr(t.dir, "rng_current", buf, sizeof(buf)), -E2BIG);
        assert_int_equal(hwrng_read_attr(t.dir, "rng_quality", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "");
        tree_write(&t, "rng_current", "1234567");
        assert_int_equal(hwrng_read_attr(t.dir, "rng_current", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "1234567");
        tree_write(&t, "rng_current", "123456\n");
        assert_int_equal(hwrng_read_attr(t.dir, "rng_current", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "123456");
        assert_int_equal(hwrng_read_attr(t.dir, "rng_selected", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(hwrng_read_attr(t.dir, "rng_current", buf, 1), -EINVAL);
        tree_free(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_list_two_devices),
                cmocka_unit_test(test_list_old_kernel),
                cmocka_unit_test(test_list_none),
                cmocka_unit_test(test_list_selected_quality),
                cmocka_unit_test(test_list_truncated),
                cmocka_unit_test(test_list_errors),
                cmocka_unit_test(test_tpm_names),
                cmocka_unit_test(test_current_tpm),
                cmocka_unit_test(test_read_attr),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
