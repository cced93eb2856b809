/* test-source-tpm-swtpm.c - the tpm source against a real TPM 2.0: swtpm
 * (Debian's software TPM, libtpms), as a process of its own, reached
 * through the TSS2 "swtpm" TCTI the way /dev/tpmrm0 is through "device".
 *
 * The source opens and its self-test passes; its bytes pass the SP 800-90B
 * health tests and make full-entropy blocks through the real collector; a
 * TPM that is killed mid-run makes reads fail with -EIO at once (the
 * swtpm TCTI connects per command) and a new open -ENODEV; a TPM that was
 * never started up is -ENXIO at open. Each test starts its own swtpm with
 * a fresh state directory.
 *
 * Skips (77) when swtpm is not installed: scripts/deps.sh installs it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pool/collector.h"
#include "pool/health.h"
#include "pool/source.h"
#include "pool/source-tpm.h"
#include "pool/store.h"

/* Waits for swtpm's sockets: 1000 x 10 ms. Not a timing threshold: a
 * swtpm that is up sooner is used sooner; one that never comes up fails. */
#define SWTPM_WAIT_STEPS 1000

static struct {
        pid_t pid;
        char dir[64];
        char sock[128];
        char tcti[192];
} sw;

static bool have_swtpm(void) {
        return system("command -v swtpm >/dev/null 2>&1") == 0;
}

static bool is_socket(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void swtpm_exec(bool startup) {
        char server[192], ctrl[192], state[96], log[96];
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        snprintf(server, sizeof(server), "type=unixio,path=%s", sw.sock);
        /* The swtpm TCTI finds the control socket at the data socket's
         * path + ".ctrl". */
        snprintf(ctrl, sizeof(ctrl), "type=unixio,path=%s.ctrl", sw.sock);
        snprintf(state, sizeof(state), "dir=%s", sw.dir);
        snprintf(log, sizeof(log), "file=%s/log", sw.dir);
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        if (startup)
                execlp("swtpm", "swtpm", "socket", "--tpm2", "--server", server, "--ctrl", ctrl, "--tpmstate",
                       state, "--log", log, "--flags", "not-need-init,startup-clear", (char *) NULL);
        else
                execlp("swtpm", "swtpm", "socket", "--tpm2", "--server", server, "--ctrl", ctrl, "--tpmstate",
                       state, "--log", log, "--flags", "not-need-init", (char *) NULL);
        _exit(127);
}

static void swtpm_start(bool startup) {
        char ctrl[160];
        int status;

        strcpy(sw.dir, "/tmp/test-swtpm-XXXXXX");
        assert_non_null(mkdtemp(sw.dir));
        snprintf(sw.sock, sizeof(sw.sock), "%s/tpm.sock", sw.dir);
        snprintf(ctrl, sizeof(ctrl), "%s.ctrl", sw.sock);
        snprintf(sw.tcti, sizeof(sw.tcti), "swtpm:path=%s", sw.sock);
        sw.pid = fork();
        assert_true(sw.pid >= 0);
        if (sw.pid == 0)
                swtpm_exec(startup);
        for (int i = 0; i < SWTPM_WAIT_STEPS && !(is_socket(sw.sock) && is_socket(ctrl)); i++) {
                struct timespec step = { .tv_nsec = 10 * 1000 * 1000 };

                assert_int_equal(waitpid(sw.pid, &status, WNOHANG), 0);
                nanosleep(&step, NULL);
        }
        assert_true(is_socket(sw.sock) && is_socket(ctrl));
}

static void swtpm_kill(void) {
        if (sw.pid <= 0)
                return;
        kill(sw.pid, SIGKILL);
        waitpid(sw.pid, NULL, 0);
        sw.pid = 0;
}

static int swtpm_stop(void **state) {
        DIR *d;
        struct dirent *e;

        swtpm_kill();
        d = opendir(sw.dir);
        if (!d)
                return 0;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        (void) unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
        (void) rmdir(sw.dir);
        return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void test_open_read_health(void **state) {
        static uint8_t buf[1 << 16];
        SelftestResult st = { 0 };
        SourceParams p = { .tcti = sw.tcti, .selftest = &st };
        unsigned seen[256] = { 0 }, distinct = 0;
        HealthTest h;
        size_t have = 0;
        void *s;

        swtpm_start(true);
        assert_int_equal(source_tpm.open(&p, &s), 0);
        assert_true(st.run);
        assert_int_equal(st.reason, SELFTEST_PASSED);
        while (have < sizeof(buf)) {
                ssize_t r = source_tpm.read(s, buf + have, sizeof(buf) - have);

                assert_true(r > 0);
                have += (size_t) r;
        }
        source_tpm.close(s);

        /* At 1 bit per sample, past the startup test, no failure at all. */
        assert_int_equal(health_init(&h, 1000), 0);
        for (size_t i = 0; i < sizeof(buf); i++) {
                HealthVerdict v = health_feed(&h, buf[i]);

                assert_false(health_verdict_failed(v));
                if (seen[buf[i]]++ == 0)
                        distinct++;
        }
        assert_int_equal(health_feed(&h, 0), HEALTH_OK);
        assert_int_equal(distinct, 256);
}

/* Through the collector, as the daemon runs it: the running gate on
 * windows of GATE_WINDOW_MIN samples, health tests, SHA-256, blocks in the
 * store. Credit 1 bit per sample: 320 samples a block. */
static void test_blocks(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        SourceParams p = { .tcti = sw.tcti };
        CollectorGate gate = { .policy = { .credit_mbits = 1000 }, .window = GATE_WINDOW_MIN };
        CollectorStats st;
        Collector *c;
        Store *store;

        swtpm_start(true);
        assert_int_equal(gate_new(1, &gate.gate), 0);
        assert_int_equal(gate_start(gate.gate), 0);
        assert_int_equal(store_new(1024, 1, &store), 0);
        assert_int_equal(collector_new(&source_tpm, &p, &gate, 0, store, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_STARTUP);
        assert_int_equal(st.selftest.reason, SELFTEST_PASSED);
        for (int i = 0; i < 64 && st.blocks < 8; i++) {
                assert_true(collector_step(c, 4096) > 0);
                collector_get_stats(c, &st);
        }
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_true(st.blocks >= 8);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        /* The TPM's windows pass the gate at 1 bit (estimate >= 2). */
        assert_true(st.gate.credited >= 1);
        assert_int_equal(st.gate.refused, 0);
        assert_int_equal(st.gate.credit_mbits, 1000);
        assert_int_equal(store_take(store, block, STORE_BLOCK_SIZE), 0);
        collector_free(c);
        store_free(store);
        gate_free(gate.gate);
}

/* The TPM goes away mid-run: the next read fails at once with -EIO, and
 * keeps failing; the TPM is not there for a new open either. */
static void test_killed(void **state) {
        SourceParams p = { .tcti = sw.tcti };
        uint8_t buf[256];
        void *s, *again = NULL;

        swtpm_start(true);
        assert_int_equal(source_tpm.open(&p, &s), 0);
        assert_int_equal(source_tpm.read(s, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        swtpm_kill();
        assert_int_equal(source_tpm.read(s, buf, sizeof(buf)), -EIO);
        assert_int_equal(source_tpm.read(s, buf, sizeof(buf)), -EIO);
        source_tpm.close(s);
        assert_int_equal(source_tpm.open(&p, &again), -ENODEV);
        assert_null(again);
}

/* A TPM nobody sent TPM2_Startup: it refuses every command with
 * TPM_RC_INITIALIZE (the kernel starts real ones before /dev/tpmrm0). */
static void test_not_started(void **state) {
        SourceParams p = { .tcti = sw.tcti };
        void *s = NULL;

        swtpm_start(false);
        assert_int_equal(source_tpm.open(&p, &s), -ENXIO);
        assert_null(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_open_read_health, swtpm_stop),
                cmocka_unit_test_teardown(test_blocks, swtpm_stop),
                cmocka_unit_test_teardown(test_killed, swtpm_stop),
                cmocka_unit_test_teardown(test_not_started, swtpm_stop),
        };

        if (!have_swtpm()) {
                fprintf(stderr, "SKIP: swtpm is not installed (scripts/deps.sh installs it)\n");
                return 77;
        }
        /* A TPM killed on purpose makes the stack complain on stderr. */
        setenv("TSS2_LOG", "all+none", 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
