/* test-vmgenid.c - the VM generation watcher on a fake sysfs and a fake
 * kernel log (a SOCK_SEQPACKET socketpair: one record per read, as
 * /dev/kmsg): the verdict follows what exists (no device; a device without
 * its driver; a driver bound as 6.1 binds it and as 6.12 does; a kernel log
 * that cannot be opened), the kernel's VM-fork record is reported once per
 * record and nothing else is, a record a user wrote is not the kernel's, and
 * lost records (EPIPE, injected by wrapping read) are reported as a
 * possible change. And the kernel log as systemd passes it (fd 0, opened
 * from /dev/kmsg), which is taken only when it is that device. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/watch/vmgenid.h"

#define FORK_RECORD "5,1234,4239567,-;" VMGEN_KMSG_MESSAGE "\n"

/* read() on the kernel-log fd fails with EPIPE this many times first. */
static int epipe_fd = -1, epipe_left;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n) {
        if (fd == epipe_fd && epipe_left > 0) {
                epipe_left--;
                errno = EPIPE;
                return -1;
        }
        return __real_read(fd, buf, n);
}

typedef struct Fixture {
        char root[64];
        int kmsg[2];          /* [0] the watcher's, [1] the test's "kernel" */
        int open_error;       /* open_kmsg() returns this when < 0 */
        unsigned opened;
        unsigned changed, maybe, lost;
        VmgenChannel via;
        sd_event *event;
} Fixture;

static void mkpath(Fixture *f, const char *rel) {
        char path[256], *p;

        snprintf(path, sizeof(path), "%s/%s", f->root, rel);
        for (p = path + strlen(f->root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void)mkdir(path, 0755);
                *p = '/';
        }
        (void)mkdir(path, 0755);
}

static void write_file(Fixture *f, const char *rel, const char *text) {
        char path[256];
        FILE *fp;

        snprintf(path, sizeof(path), "%s/%s", f->root, rel);
        fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(text, fp);
        fclose(fp);
}

static void link_file(Fixture *f, const char *target, const char *rel) {
        char path[256];

        snprintf(path, sizeof(path), "%s/%s", f->root, rel);
        assert_int_equal(symlink(target, path), 0);
}

/* An ACPI vmgenid device as QEMU's -device vmgenid shows it. */
static void add_device(Fixture *f) {
        mkpath(f, "bus/acpi/devices/QEMUVGID:00");
        write_file(f, "bus/acpi/devices/QEMUVGID:00/modalias", "acpi:QEMUVGID:VM_GEN_COUNTER:\n");
        /* Its neighbours, which are not vmgenid devices. */
        mkpath(f, "bus/acpi/devices/PNP0A03:00");
        write_file(f, "bus/acpi/devices/PNP0A03:00/modalias", "acpi:PNP0A03:\n");
        mkpath(f, "bus/acpi/devices/LNXSYBUS:00");
}

/* The driver bound, as 6.1 (ACPI driver) or 6.10 and later (platform). */
static void bind_driver(Fixture *f, const char *bus) {
        char dir[128], rel[192];

        snprintf(dir, sizeof(dir), "bus/%s/drivers/vmgenid", bus);
        mkpath(f, dir);
        snprintf(rel, sizeof(rel), "%s/bind", dir);
        write_file(f, rel, "");
        snprintf(rel, sizeof(rel), "%s/module", dir);
        link_file(f, "../../../../module/vmgenid", rel);
        snprintf(rel, sizeof(rel), "%s/QEMUVGID:00", dir);
        link_file(f, "../../../../devices/platform/QEMUVGID:00", rel);
}

static int open_kmsg(void *userdata) {
        Fixture *f = userdata;

        f->opened++;
        if (f->open_error < 0)
                return f->open_error;
        return f->kmsg[0];
}

static void on_change(void *userdata, VmgenEvent event, VmgenChannel via) {
        Fixture *f = userdata;

        if (event == VMGEN_EVENT_CHANGED)
                f->changed++;
        else if (event == VMGEN_EVENT_MAYBE)
                f->maybe++;
        else
                f->lost++;
        f->via = via;
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        snprintf(f->root, sizeof(f->root), "/tmp/test-vmgenid-XXXXXX");
        assert_non_null(mkdtemp(f->root));
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, f->kmsg), 0);
        assert_int_equal(sd_event_new(&f->event), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        char cmd[128];

        sd_event_unref(f->event);
        close(f->kmsg[1]);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        assert_int_equal(system(cmd), 0);
        free(f);
        epipe_fd = -1;
        return 0;
}

static Vmgen *watch(Fixture *f, VmgenStats *st) {
        Vmgen *g = NULL;

        assert_int_equal(vmgen_new(f->event,
                                   &(VmgenParams){ .sysfs = f->root, .open_kmsg = open_kmsg, .open_userdata = f },
                                   on_change, f, &g),
                         0);
        vmgen_get_stats(g, st);
        return g;
}

/* A vmgenid device bound to its driver on bus, watched. */
static Vmgen *watch_bound(Fixture *f, const char *bus, VmgenStats *st) {
        add_device(f);
        bind_driver(f, bus);
        return watch(f, st);
}

/* Runs the loop until nothing is pending. */
static void drain(Fixture *f) {
        while (sd_event_run(f->event, 0) > 0)
                ;
}

static void kernel_says(Fixture *f, const char *record) {
        assert_int_equal(write(f->kmsg[1], record, strlen(record)), (ssize_t)strlen(record));
}

/* Watches with nothing to watch: the verdict and its words; the kernel log
 * opened `opened` times (the fake one is not the watcher's then). */
static void expect_unwatched(Fixture *f, VmgenDetection detection, const char *words, unsigned opened) {
        VmgenStats st;
        char buf[160];
        Vmgen *g = watch(f, &st);

        assert_int_equal(st.detection, detection);
        assert_string_equal(vmgen_describe(&st, buf, sizeof(buf)), words);
        assert_false(st.channel[VMGEN_CHANNEL_KERNEL_LOG]);
        assert_int_equal(f->opened, opened);
        close(f->kmsg[0]);
        vmgen_free(g);
}

static void test_no_device(void **state) {
        Fixture *f = *state;

        mkpath(f, "bus/acpi/devices/PNP0A03:00");
        write_file(f, "bus/acpi/devices/PNP0A03:00/modalias", "acpi:PNP0A03:\n");
        /* Nothing to watch: the kernel log is not even opened. */
        expect_unwatched(f, VMGEN_NO_DEVICE, "no vmgenid device", 0);
        assert_string_equal(vmgen_detection_to_string(VMGEN_NO_DEVICE), "no-device");
}

static void test_device_without_driver(void **state) {
        Fixture *f = *state;

        add_device(f);
        expect_unwatched(f, VMGEN_NO_DRIVER, "unavailable on this kernel (no vmgenid driver)", 0);
        assert_string_equal(vmgen_detection_to_string(VMGEN_NO_DRIVER), "unavailable");
}

static void test_kernel_log_unreadable(void **state) {
        Fixture *f = *state;

        /* dmesg_restrict and no CAP_SYSLOG: open() says EPERM. */
        add_device(f);
        bind_driver(f, "platform");
        f->open_error = -EPERM;
        expect_unwatched(f, VMGEN_NO_CHANNEL, "unavailable: kernel log unreadable (Operation not permitted)", 1);
}

/* 6.1 binds an ACPI driver, 6.10 and later a platform one. */
static void available(Fixture *f, const char *bus) {
        VmgenStats st;
        char buf[160];
        Vmgen *g;

        g = watch_bound(f, bus, &st);
        assert_int_equal(st.detection, VMGEN_AVAILABLE);
        assert_string_equal(st.device, "QEMUVGID:00");
        assert_true(st.channel[VMGEN_CHANNEL_KERNEL_LOG]);
        assert_false(st.channel[VMGEN_CHANNEL_UEVENT]);
        assert_string_equal(vmgen_describe(&st, buf, sizeof(buf)), "available (kernel log)");
        assert_string_equal(vmgen_detection_to_string(st.detection), "available");

        /* Other kernel records, and the message written by a user (LOG_USER),
         * are not a change. */
        kernel_says(f, "6,1230,4000000,-;virtio_net virtio0: something\n");
        kernel_says(f, "13,1231,4100000,-;" VMGEN_KMSG_MESSAGE "\n");
        kernel_says(f, "5,1232,4200000,-;random: crng reseeded on system resumption\n");
        kernel_says(f, "garbage without a prefix\n");
        drain(f);
        assert_int_equal(f->changed, 0);
        assert_int_equal(f->maybe, 0);

        kernel_says(f, FORK_RECORD);
        drain(f);
        assert_int_equal(f->changed, 1);
        assert_int_equal(f->via, VMGEN_CHANNEL_KERNEL_LOG);
        /* Each record is a change of its own (a restore of a restore). */
        kernel_says(f, FORK_RECORD);
        drain(f);
        assert_int_equal(f->changed, 2);
        vmgen_get_stats(g, &st);
        assert_int_equal(st.changes, 2);
        assert_int_equal(st.merged, 0);
        assert_true(st.last_usec > 0);
        vmgen_free(g);
}

static void test_available_acpi_driver(void **state) {
        available(*state, "acpi");
}

static void test_available_platform_driver(void **state) {
        available(*state, "platform");
}

/* The daemon's check before every request: one read, without the loop.
 * A record behind another takes one call more; nothing there costs an
 * EAGAIN and changes nothing. */
static void test_poll_reads_one_record(void **state) {
        Fixture *f = *state;
        VmgenStats st;
        Vmgen *g;

        g = watch_bound(f, "platform", &st);
        vmgen_poll(g);
        assert_int_equal(f->changed, 0);
        kernel_says(f, "6,1230,4000000,-;virtio_net virtio0: something\n");
        kernel_says(f, FORK_RECORD);
        vmgen_poll(g);
        assert_int_equal(f->changed, 0);
        vmgen_poll(g);
        assert_int_equal(f->changed, 1);
        assert_int_equal(f->via, VMGEN_CHANNEL_KERNEL_LOG);
        vmgen_poll(g);
        drain(f);
        assert_int_equal(f->changed, 1);
        vmgen_get_stats(g, &st);
        assert_int_equal(st.changes, 1);
        assert_true(st.channel[VMGEN_CHANNEL_KERNEL_LOG]);
        vmgen_free(g);
}

static void test_lost_records(void **state) {
        Fixture *f = *state;
        VmgenStats st;
        Vmgen *g;

        g = watch_bound(f, "platform", &st);
        assert_int_equal(st.detection, VMGEN_AVAILABLE);
        /* The kernel overwrote records before they were read: read() says
         * EPIPE once, then goes on with what is left. */
        epipe_fd = f->kmsg[0];
        epipe_left = 1;
        kernel_says(f, "6,9,1,-;after the overrun\n");
        drain(f);
        assert_int_equal(f->maybe, 1);
        assert_int_equal(f->changed, 0);
        vmgen_get_stats(g, &st);
        assert_int_equal(st.maybe, 1);
        assert_true(st.channel[VMGEN_CHANNEL_KERNEL_LOG]);
        vmgen_free(g);
}

static void test_kernel_log_ends(void **state) {
        Fixture *f = *state;
        VmgenStats st;
        char buf[160];
        Vmgen *g;

        g = watch_bound(f, "platform", &st);
        /* End of file: the channel is gone, and the verdict says so. */
        close(f->kmsg[1]);
        f->kmsg[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        drain(f);
        vmgen_get_stats(g, &st);
        assert_false(st.channel[VMGEN_CHANNEL_KERNEL_LOG]);
        assert_int_equal(st.kmsg_error, -ENODATA);
        assert_int_equal(f->changed, 0);
        assert_int_equal(f->lost, 1);
        /* ... and status no longer claims a watch that ended. */
        assert_int_equal(st.detection, VMGEN_NO_CHANNEL);
        assert_string_equal(vmgen_describe(&st, buf, sizeof(buf)), "unavailable: kernel log unreadable (No data available)");
        vmgen_free(g);
}

/* ------------------------------------------------------------------ */
/* the kernel log on fd 0, as systemd's StandardInput=file:/dev/kmsg    */

static bool is_chr(int fd, unsigned maj, unsigned min) {
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(maj, min);
}

/* Puts the real /dev/kmsg on fd 0, opened as systemd opens it (blocking,
 * inheritable); the old fd 0 is returned for restore_stdin(). Skips the
 * test where /dev/kmsg cannot be read (dmesg_restrict without root): there
 * is nothing to stand in for what systemd opens as root then. */
static int kmsg_on_stdin(void) {
        int saved = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3), k = open("/dev/kmsg", O_RDONLY);

        assert_true(saved >= 0);
        if (k < 0) {
                close(saved);
                skip();
        }
        assert_int_equal(dup2(k, STDIN_FILENO), STDIN_FILENO);
        close(k);
        return saved;
}

static void restore_stdin(int saved) {
        assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
}

/* The fd the watcher reads the kernel log from: the one /dev/kmsg among
 * this process's, fd 0 aside; -1 if none. */
static int kmsg_fd(void) {
        for (int fd = 3; fd < 256; fd++)
                if (is_chr(fd, 1, 11))
                        return fd;
        return -1;
}

static void test_kernel_log_from_stdin(void **state) {
        Fixture *f = *state;
        int saved, fd;
        VmgenStats st;
        char buf[160];
        Vmgen *g = NULL;

        close(f->kmsg[0]);
        saved = kmsg_on_stdin();
        add_device(f);
        bind_driver(f, "acpi");
        assert_int_equal(kmsg_fd(), -1);
        assert_int_equal(vmgen_new(f->event, &(VmgenParams){ .sysfs = f->root }, on_change, f, &g), 0);
        vmgen_get_stats(g, &st);
        assert_int_equal(st.detection, VMGEN_AVAILABLE);
        assert_true(st.kmsg_inherited);
        assert_string_equal(vmgen_describe(&st, buf, sizeof(buf)), "available (kernel log)");
        /* Taken: fd 0 reads /dev/null now, and the watcher's copy is
         * non-blocking (a blocking one would hang the loop on the first
         * read after the last record) and not inherited by a child. */
        assert_true(is_chr(STDIN_FILENO, 1, 3));
        fd = kmsg_fd();
        assert_true(fd >= 0);
        assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        drain(f);
        vmgen_free(g);
        assert_int_equal(kmsg_fd(), -1);
        restore_stdin(saved);
}

/* No device: a kernel log passed in is closed, not kept for nothing. */
static void test_kernel_log_from_stdin_unneeded(void **state) {
        Fixture *f = *state;
        int saved;
        VmgenStats st;
        Vmgen *g = NULL;

        close(f->kmsg[0]);
        saved = kmsg_on_stdin();
        assert_int_equal(vmgen_new(f->event, &(VmgenParams){ .sysfs = f->root }, on_change, f, &g), 0);
        vmgen_get_stats(g, &st);
        assert_int_equal(st.detection, VMGEN_NO_DEVICE);
        assert_false(st.kmsg_inherited);
        assert_true(is_chr(STDIN_FILENO, 1, 3));
        assert_int_equal(kmsg_fd(), -1);
        vmgen_free(g);
        restore_stdin(saved);
}

/* fd 0 that is not /dev/kmsg (a terminal, a pipe: a start by hand) is left
 * alone; the watcher opens /dev/kmsg itself, which works as root only. */
static void test_stdin_not_kernel_log(void **state) {
        Fixture *f = *state;
        int saved = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3), p[2];
        struct stat st0;
        VmgenStats st;
        Vmgen *g = NULL;

        close(f->kmsg[0]);
        assert_true(saved >= 0);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
        add_device(f);
        bind_driver(f, "platform");
        assert_int_equal(vmgen_new(f->event, &(VmgenParams){ .sysfs = f->root }, on_change, f, &g), 0);
        vmgen_get_stats(g, &st);
        assert_false(st.kmsg_inherited);
        assert_int_equal(fstat(STDIN_FILENO, &st0), 0);
        assert_true(S_ISFIFO(st0.st_mode));
        if (access("/dev/kmsg", R_OK) == 0 && st.detection == VMGEN_AVAILABLE)
                assert_true(kmsg_fd() >= 0);
        else
                assert_int_equal(st.detection, VMGEN_NO_CHANNEL);
        vmgen_free(g);
        close(p[0]);
        close(p[1]);
        restore_stdin(saved);
}

static void test_arguments(void **state) {
        Fixture *f = *state;
        Vmgen *g = NULL;

        assert_int_equal(vmgen_new(NULL, NULL, on_change, f, &g), -EINVAL);
        assert_int_equal(vmgen_new(f->event, NULL, NULL, f, &g), -EINVAL);
        assert_null(vmgen_free(NULL));
        close(f->kmsg[0]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_no_device, setup, teardown),
                cmocka_unit_test_setup_teardown(test_device_without_driver, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_log_unreadable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_available_acpi_driver, setup, teardown),
                cmocka_unit_test_setup_teardown(test_available_platform_driver, setup, teardown),
                cmocka_unit_test_setup_teardown(test_poll_reads_one_record, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lost_records, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_log_ends, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_log_from_stdin, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_log_from_stdin_unneeded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stdin_not_kernel_log, setup, teardown),
                cmocka_unit_test_setup_teardown(test_arguments, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
