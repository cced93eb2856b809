/* log.h - the only logging in the project (daemon/ only, DESIGN §2).
 *
 * Under systemd (stderr is the journal stream named in $JOURNAL_STREAM) each
 * message goes to the journal with structured fields: TRUERANDOM_SOURCE and
 * TRUERANDOM_HEALTH_TEST on source and health events (RCT, APT, and MCV
 * for the running check), TRUERANDOM_SELFTEST on a source's self-test at
 * open, TRUERANDOM_DEVICE on device events. Elsewhere: "truerandomd:
 * message" lines on stderr.
 * libfuse's messages come through here too, as "libfuse: ...". */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

typedef struct LogFields {
        const char *source;       /* TRUERANDOM_SOURCE */
        const char *health_test;  /* TRUERANDOM_HEALTH_TEST: RCT, APT, MCV (the running check) */
        const char *selftest;     /* TRUERANDOM_SELFTEST: the verdict's name (selftest.h) */
        const char *device;       /* TRUERANDOM_DEVICE */
} LogFields;

/* Decides where messages go (once, at start): the journal if stderr is
 * systemd's journal stream, syslog for a daemon that went to the background,
 * else stderr. */
void log_open(bool background);
/* A daemon going to the background also writes to stderr until it is ready,
 * so whoever started it sees why it failed; then it stops. */
void log_detach_stderr(void);
void log_set_max_level(int level);

void log_fields(int priority, const LogFields *fields, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Logs and returns r (a -errno), for `return log_error_errno(r, ...)`. */
int log_errno(int priority, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_debug(...) log_fields(LOG_DEBUG, NULL, __VA_ARGS__)
#define log_info(...) log_fields(LOG_INFO, NULL, __VA_ARGS__)
#define log_notice(...) log_fields(LOG_NOTICE, NULL, __VA_ARGS__)
#define log_warning(...) log_fields(LOG_WARNING, NULL, __VA_ARGS__)
#define log_error(...) log_fields(LOG_ERR, NULL, __VA_ARGS__)
#define log_error_errno(r, ...) log_errno(LOG_ERR, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_errno(LOG_WARNING, (r), __VA_ARGS__)
