/* log.c - journal or stderr, decided once. See log.h. */
#include "log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <fuse3/fuse_log.h>

static bool use_journal;
static bool use_syslog;
static bool also_stderr;
static int max_level = LOG_INFO;

/* libfuse's own messages ("fuse: ..."), which it would write to raw
 * stderr, past the journal's fields and after stderr went to /dev/null.
 * Its levels are syslog's. */
__attribute__((format(printf, 2, 0)))
static void log_from_fuse(enum fuse_log_level level, const char *fmt, va_list ap) {
        char msg[768];
        size_t n;

        vsnprintf(msg, sizeof(msg), fmt, ap);
        n = strlen(msg);
        while (n > 0 && msg[n - 1] == '\n')
                msg[--n] = '\0';
        log_fields((int) level, NULL, "libfuse: %s", msg);
}

void log_open(bool background) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        /* systemd sets JOURNAL_STREAM=DEV:INO for the stream it connected
         * stderr to; only if stderr still is that stream is it the journal. */
        use_journal = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                      st.st_dev == dev && st.st_ino == ino;
        use_syslog = !use_journal && background;
        also_stderr = use_syslog;
        if (use_syslog)
                openlog("truerandomd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
        fuse_set_log_func(log_from_fuse);
}

void log_detach_stderr(void) {
        also_stderr = false;
}

void log_set_max_level(int level) {
        max_level = level;
}

__attribute__((format(printf, 3, 0)))
static void log_internal(int priority, const LogFields *f, const char *fmt, va_list ap) {
        char msg[1024];

        if (priority > max_level)
                return;
        vsnprintf(msg, sizeof(msg), fmt, ap);
        if (use_syslog) {
                syslog(priority, "%s", msg);
                if (also_stderr)
                        fprintf(stderr, "truerandomd: %s\n", msg);
                return;
        }
        if (!use_journal) {
                fprintf(stderr, "truerandomd: %s\n", msg);
                return;
        }
        /* One entry with only the fields that apply. */
        char prio[16], source[96], test[48], selftest[64], device[96], message[1040];
        struct iovec iov[7];
        size_t n = 0;

        snprintf(message, sizeof(message), "MESSAGE=%s", msg);
        iov[n++] = (struct iovec){ message, strlen(message) };
        snprintf(prio, sizeof(prio), "PRIORITY=%d", priority);
        iov[n++] = (struct iovec){ prio, strlen(prio) };
        iov[n++] = (struct iovec){ (char *)"SYSLOG_IDENTIFIER=truerandomd", 29 };
        if (f && f->source) {
                snprintf(source, sizeof(source), "TRUERANDOM_SOURCE=%s", f->source);
                iov[n++] = (struct iovec){ source, strlen(source) };
        }
        if (f && f->health_test) {
                snprintf(test, sizeof(test), "TRUERANDOM_HEALTH_TEST=%s", f->health_test);
                iov[n++] = (struct iovec){ test, strlen(test) };
        }
        if (f && f->selftest) {
                snprintf(selftest, sizeof(selftest), "TRUERANDOM_SELFTEST=%s", f->selftest);
                iov[n++] = (struct iovec){ selftest, strlen(selftest) };
        }
        if (f && f->device) {
                snprintf(device, sizeof(device), "TRUERANDOM_DEVICE=%s", f->device);
                iov[n++] = (struct iovec){ device, strlen(device) };
        }
        sd_journal_sendv(iov, (int)n);
}

void log_fields(int priority, const LogFields *fields, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        log_internal(priority, fields, fmt, ap);
        va_end(ap);
}

int log_errno(int priority, int r, const char *fmt, ...) {
        char msg[768];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_fields(priority, NULL, "%s: %s", msg, strerror(r < 0 ? -r : r));
        return r;
}
