/* truerandom-seed-kernel - feeds full-entropy blocks of /dev/truerandom
 * to the kernel's random pool and reseeds its CRNG (truerandom-seed-kernel(8)).
 *
 * The wiring: options (seedopts), the kernel's device (kernelrnd), the
 * daemon's status (seedstatus), /dev/truerandom (libtruerandom), the
 * schedule (feeder), and one line on stderr per feed, refusal or
 * failure; under systemd stderr is the journal and each line carries its
 * syslog level. Flow: truerandomd -> /dev/truerandom -> [this] -> kernel. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <truerandom.h>

#include "config-build.h"
#include "seed/kernelrnd.h"
#include "seed/feeder.h"
#include "seed/seedopts.h"
#include "seed/seedstatus.h"
#include "util/cleanup.h"
#include "util/time-util.h"

#define STATUS_TIMEOUT (5 * USEC_PER_SEC)

typedef struct Context {
        const SeedOptions *opts;
        struct truerandom *dev; /* opened at the first feed, again after a failed one */
        int kernel_fd;
} Context;

static bool to_journal;

/* systemd names the journal stream it gave us in $JOURNAL_STREAM
 * (device:inode); a redirected stderr is not it. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
               (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...) {
        va_list ap;

        if (to_journal)
                fprintf(stderr, "<%d>", level);
        else
                fputs("truerandom-seed-kernel: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static int op_status(void *userdata, SeedStatus *ret) {
        Context *c = userdata;

        return seed_status_fetch(c->opts->socket, STATUS_TIMEOUT, ret);
}

static int op_read(void *userdata, uint8_t *buf, size_t n) {
        Context *c = userdata;
        ssize_t k;
        int r;

        if (!c->dev) {
                r = truerandom_open(c->opts->device, &c->dev);
                if (r < 0)
                        return r;
        }
        k = truerandom_read(c->dev, buf, n, TRUERANDOM_READ_ALL);
        if (k < 0)
                /* The library reopened once already; next time, afresh. */
                c->dev = truerandom_close(c->dev);
        return k < 0 ? (int) k : 0;
}

static int op_add(void *userdata, const uint8_t *buf, size_t n, unsigned bits) {
        return kernel_random_add(((Context *) userdata)->kernel_fd, buf, n, bits);
}

static int op_reseed(void *userdata) {
        return kernel_random_reseed(((Context *) userdata)->kernel_fd);
}

static void report(const Context *c, const FeedOutcome *o) {
        const char *reason = feed_reason_to_string(o->reason);
        int r;

        switch (o->result) {
        case FEED_RESULT_IDLE:
                return;
        case FEED_RESULT_FED:
                say(LOG_INFO, "fed the kernel %u bits (%u block%s of %u bytes from %s, credited 8 bits per byte) "
                    "and reseeded its CRNG (%s)", o->bits, o->blocks, o->blocks == 1 ? "" : "s",
                    SEED_BLOCK_SIZE, c->opts->device, reason);
                /* For the daemon's status; the feed stands either way. */
                r = seed_status_report_fed(c->opts->socket, STATUS_TIMEOUT, o->bits, reason);
                if (r < 0)
                        say(LOG_NOTICE, "could not tell truerandomd about the feed: %s", strerror(-r));
                return;
        case FEED_RESULT_REFUSED:
                if (o->repeated)
                        return;
                if (!strcmp(o->stage, "status"))
                        say(LOG_WARNING, "refusing to feed the kernel (%s feed due): %s is not serving: %s; "
                            "feeding when it serves", reason, c->opts->device, o->why);
                else if (!strcmp(o->stage, "daemon"))
                        say(LOG_WARNING, "refusing to feed the kernel (%s feed due): truerandomd does not answer at %s: "
                            "%s; feeding when it serves", reason, c->opts->socket, strerror(-o->error));
                else
                        say(LOG_WARNING, "refusing to feed the kernel (%s feed due): cannot read %s: %s; "
                            "feeding when it serves", reason, c->opts->device, strerror(-o->error));
                return;
        case FEED_RESULT_FAILED:
                if (!o->repeated)
                        say(LOG_ERR, "the kernel refused the %s (%s feed): %s",
                            !strcmp(o->stage, "add") ? "entropy (RNDADDENTROPY)" : "reseed (RNDRESEEDCRNG)",
                            reason, strerror(-o->error));
                return;
        }
}

static void sleep_until(usec_t when) {
        struct timespec ts = usec_to_timespec(when);

        while (clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

static int run(const SeedOptions *opts) {
        static const FeederOps ops = {
                .status = op_status, .read = op_read, .add_entropy = op_add, .reseed = op_reseed
        };
        _cleanup_close_ int kernel_fd = -1;
        Context c = { .opts = opts };
        Feeder *s = NULL;
        unsigned unmounted = 0;
        int r;

        r = kernel_random_open(&kernel_fd, &unmounted);
        if (r < 0) {
                say(LOG_ERR, "cannot open the kernel's random device (%s, 1:8): %s", KERNEL_RANDOM_PATH,
                    r == -ENODEV ? "something else is mounted over it and cannot be taken off" : strerror(-r));
                return EXIT_FAILURE;
        }
        if (unmounted > 0)
                say(LOG_INFO, "%s is covered by %u mount%s (truerandomd's drop-in?): feeding the kernel's 1:8 "
                    "beneath, in a mount namespace of our own", KERNEL_RANDOM_PATH, unmounted, unmounted == 1 ? "" : "s");
        c.kernel_fd = kernel_fd;
        r = feeder_new(opts->interval, opts->blocks, &ops, &c, &s);
        if (r < 0) {
                say(LOG_ERR, "cannot start: %s", strerror(-r));
                return EXIT_FAILURE;
        }
        for (;;) {
                usec_t now = now_usec(CLOCK_BOOTTIME);
                FeedOutcome o;

                feeder_step(s, now, &o);
                report(&c, &o);
                if (opts->once && o.result == FEED_RESULT_FED)
                        break;
                if (opts->once && o.result == FEED_RESULT_FAILED) {
                        r = o.error;
                        break;
                }
                sleep_until(MIN(feeder_next_due(s), now + opts->poll));
        }
        feeder_free(s);
        truerandom_close(c.dev);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv) {
        SeedOptions opts;
        char error[160];

        to_journal = stderr_is_journal();
        if (seed_options_parse(argc, argv, &opts, error, sizeof(error)) < 0) {
                say(LOG_ERR, "%s", error);
                return 2;
        }
        if (opts.action == SEED_ACTION_HELP) {
                fputs(seed_options_usage(), stdout);
                return EXIT_SUCCESS;
        }
        if (opts.action == SEED_ACTION_VERSION) {
                puts("truerandom-seed-kernel " TRUERANDOM_VERSION);
                return EXIT_SUCCESS;
        }
        /* The blocks it passes on are secrets: no core dump shows them. */
        (void) prctl(PR_SET_DUMPABLE, 0);
        return run(&opts);
}
