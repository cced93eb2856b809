/* events.c - the claim's history: each event that bears on "every byte of
 * /dev/truerandom came from credited, health-tested entropy" becomes a
 * record of the ledger (ledger/ledger.h) in the state directory.
 *
 * The ledger opens once privileges are gone, so that its files are
 * [daemon] user's as the directory is (StateDirectory=; a start as root
 * without systemd makes the built-in one and gives it to that user), and
 * closes with a "stop" record. Its head (seq and hash) goes to the log at
 * start and stop: the journal then anchors the chain (ledger/verify.h).
 *
 * A ledger that cannot be opened or written is logged (the first failure
 * of a run of them) and counted in the status; it never stops the devices:
 * the claim rests on the health tests and the gate, the ledger is their
 * history.
 *
 * Bursts: each event has a bucket of EVENT_BURST records and earns one
 * more every EVENT_REFILL_USEC; the records past it are counted, and the
 * next record of that event says how many ("suppressed"). So a reseed
 * storm cannot rotate the history away: at most 1440 records of one event
 * a day after its burst. Everything here runs on the loop thread.
 * Flow: the loop's handlers -> [events] -> ledger -> StateDirectory. */
#include "daemon-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "config-build.h"
#include "ledger/files.h"
#include "log.h"
#include "util/cleanup.h"

#define EVENT_BURST 10U
#define EVENT_REFILL_USEC (60 * USEC_PER_SEC)

static void log_head(const Daemon *d, const char *when) {
        uint8_t hash[LEDGER_HASH_BYTES];
        char hex[2 * LEDGER_HASH_BYTES + 1];
        uint64_t seq;

        ledger_head(d->events.ledger, &seq, hash);
        ledger_hash_to_hex(hash, hex);
        log_info("ledger %s: %s/" LEDGER_FILE_PREFIX "*" LEDGER_FILE_SUFFIX ", head record %" PRIu64 " hash %s", when,
                 d->config.state_directory, seq, hex);
}

const char *daemon_config_sha256(const Config *c, char ret[static 2 * CONFIG_SHA256_BYTES + 1]) {
        return sodium_bin2hex(ret, 2 * CONFIG_SHA256_BYTES + 1, c->sha256, CONFIG_SHA256_BYTES);
}

usec_t daemon_now(const Daemon *d) {
        return d->hooks.now ? d->hooks.now(d->hooks.userdata) : now_usec(CLOCK_MONOTONIC);
}

/* Whether the bucket of e has a record to spend now. */
static bool take_token(EventBucket *b, usec_t now) {
        if (b->at == 0) {
                b->tokens = EVENT_BURST;
                b->at = now;
        }
        if (now >= b->at + EVENT_REFILL_USEC) {
                uint64_t earned = (now - b->at) / EVENT_REFILL_USEC;

                b->tokens = (unsigned) MIN((uint64_t) EVENT_BURST, b->tokens + earned);
                b->at += earned * EVENT_REFILL_USEC;
        }
        if (b->tokens == 0)
                return false;
        b->tokens--;
        return true;
}

/* A value as a record takes it (record.h: 1..LEDGER_VALUE_MAX bytes of
 * printable ASCII): a path or an error text with other bytes is recorded
 * with '?' for them, cut at the limit, "-" for an empty one. */
static const char *printable(const char *s, char buf[static LEDGER_VALUE_MAX + 1]) {
        size_t n = 0;

        for (; s && s[n] && n < LEDGER_VALUE_MAX; n++)
                buf[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
        if (n == 0)
                buf[n++] = '-';
        buf[n] = '\0';
        return buf;
}

void daemon_event(Daemon *d, LedgerEvent e, const LedgerField *fields, size_t n_fields) {
        EventLog *l = &d->events;
        LedgerField all[LEDGER_FIELDS_MAX];
        char values[LEDGER_FIELDS_MAX][LEDGER_VALUE_MAX + 1], suppressed[24];
        size_t n = 0;
        int r;

        if (!l->ledger || (unsigned) e >= _LEDGER_EVENT_MAX)
                return;
        if (!take_token(&l->bucket[e], daemon_now(d))) {
                l->bucket[e].suppressed++;
                return;
        }
        for (size_t i = 0; i < n_fields && n < LEDGER_FIELDS_MAX - 1; i++, n++)
                all[n] = (LedgerField){ fields[i].key, printable(fields[i].value, values[n]) };
        if (l->bucket[e].suppressed > 0) {
                snprintf(suppressed, sizeof(suppressed), "%" PRIu64, l->bucket[e].suppressed);
                all[n++] = (LedgerField){ "suppressed", suppressed };
        }
        r = ledger_append(l->ledger, e, all, n);
        if (r < 0) {
                if (l->error == 0)
                        log_warning_errno(r, "ledger: a %s record was not written (the next failures are counted in "
                                          "the status)", ledger_event_to_string(e));
                l->error = r;
                l->lost++;
                return;
        }
        if (l->error != 0)
                log_notice("ledger: writing again after %" PRIu64 " lost records", l->lost);
        l->error = 0;
        l->bucket[e].suppressed = 0;
        l->records++;
}

/* The boot's id, so that an auditor can tell runs of one boot from the
 * next; "unknown" where /proc does not say. */
static void read_boot_id(char *buf, size_t size) {
        ssize_t n = -1;
        int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                n = read(fd, buf, size - 1);
                close(fd);
        }
        if (n <= 0) {
                snprintf(buf, size, "unknown");
                return;
        }
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
}

void daemon_events_open(Daemon *d) {
        const char *dir = d->config.state_directory;
        char sha[2 * CONFIG_SHA256_BYTES + 1], pid[16], boot_id[64];
        _cleanup_close_ int fd = -1;
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* A configured directory not made yet (StateDirectory= and a
         * start as root make the built-in one). */
        if (fd < 0 && errno == ENOENT && mkdir(dir, 0700) == 0)
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = fd < 0 ? -errno : ledger_open(fd, NULL, &d->events.ledger);
        if (r < 0) {
                d->events.error = r;
                log_error_errno(r, "ledger in %s: not kept this run%s", dir,
                                r == -EBADMSG ? " (its newest record is damaged: check it with truerandomctl ledger "
                                                "--verify, then move the files aside)"
                                              : "");
                return;
        }
        if (ledger_cut_bytes(d->events.ledger) > 0)
                log_warning("ledger: the last record of the previous run was torn (a crash or a power cut); %zu "
                            "bytes were cut and a recovery record says so", ledger_cut_bytes(d->events.ledger));
        read_boot_id(boot_id, sizeof(boot_id));
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        DAEMON_EVENT(d, LEDGER_EVENT_START, { "version", TRUERANDOM_VERSION },
                     { "config_sha256", daemon_config_sha256(&d->config, sha) },
                     { "config", d->config_path ? d->config_path : "defaults" }, { "pid", pid },
                     { "boot_id", boot_id });
        log_head(d, "opened");
}

void daemon_events_close(Daemon *d, const char *reason) {
        if (!d->events.ledger)
                return;
        DAEMON_EVENT(d, LEDGER_EVENT_STOP, { "reason", reason });
        log_head(d, "closed");
        d->events.ledger = ledger_free(d->events.ledger);
}

void daemon_events_reseeds(Daemon *d) {
        EventLog *l = &d->events;
        SeederStats now;
        char count[24];

        seeder_get_stats(d->seeder, &now);
        for (SeedTrigger t = 0; t < _SEED_TRIGGER_MAX; t++) {
                if (now.reseeds[t] <= l->seeder.reseeds[t])
                        continue;
                snprintf(count, sizeof(count), "%" PRIu64, now.reseeds[t] - l->seeder.reseeds[t]);
                DAEMON_EVENT(d, LEDGER_EVENT_RESEED, { "reason", seed_trigger_to_string(t) }, { "count", count });
        }
        if (now.seeds > 0 && l->seeder.seeds == 0)
                DAEMON_EVENT(d, LEDGER_EVENT_RESEED, { "reason", "first-seed" }, { "count", "1" });
        l->seeder = now;
}

void daemon_events_purge(Daemon *d, const SeederStats *was, const SeederStats *now, const char *reason) {
        char blocks[24];

        if (now->vm_generation_changes == was->vm_generation_changes)
                return;
        snprintf(blocks, sizeof(blocks), "%" PRIu64, now->vm_blocks_purged - was->vm_blocks_purged);
        DAEMON_EVENT(d, LEDGER_EVENT_PURGE, { "blocks", blocks }, { "reason", reason },
                     { "crng", now->rekeys > was->rekeys ? "rekeyed" : "discarded" });
}
