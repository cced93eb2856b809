/* watchers.c - clones, restores and resumes, as the daemon sees them: the
 * VM generation watcher (vmgenid.h) and the suspend detector (clockjump.h)
 * started during set-up, and what each reports logged and turned into one
 * reseed trigger of the seeder (crng/seeder.h has what each does); each
 * also has the machine's identity read again (recheck.c), whose timer
 * starts here too.
 *
 * Invariant: a VM generation change is never refused: the seeder purges,
 * discards or rekeys before daemon_reseed() returns, so no byte of the old
 * state is served after it. Lost kernel log records (a possible change) are
 * rekeyed at once too, and purge the store at most once per
 * SEEDER_LOST_PURGE_USEC (the seeder's limit: a user can flood the log);
 * they are logged once per burst, not once each (LostBurst). The watchers
 * start before privileges go (the kernel log may take CAP_SYSLOG to open).
 * Flow: kernel (vmgenid, clocks) -> [watchers] -> seeder -> CRNG, store. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

/* The seam to the seeding policy: what the watchers saw becomes one
 * trigger of the seeder (crng/seeder.h has what each does). */
static void trigger_vm_generation(Daemon *d) {
        SeederStats was, now;

        seeder_get_stats(d->seeder, &was);
        /* Never refused: purges, discards or rekeys before it returns, so
         * no byte of the old state is served after this. */
        (void)daemon_reseed(d, SEED_TRIGGER_VM_GENERATION);
        seeder_get_stats(d->seeder, &now);
        daemon_events_purge(d, &was, &now, "vm-generation");
        if (now.rekeys > was.rekeys)
                log_info("%" PRIu64 " stored blocks purged, CRNG rekeyed from getrandom(); it reseeds from the next "
                         "fresh block", now.vm_blocks_purged - was.vm_blocks_purged);
        else
                log_warning("%" PRIu64 " stored blocks purged, CRNG buffer discarded, but getrandom() failed: until "
                            "the next fresh block reseeds it, the drop-ins' stream is the one every copy holds",
                            now.vm_blocks_purged - was.vm_blocks_purged);
}

static void trigger_resume(Daemon *d, uint64_t slept_usec) {
        char slept[32];

        snprintf(slept, sizeof(slept), "%" PRIu64 ".%01" PRIu64, slept_usec / USEC_PER_SEC,
                 slept_usec / (USEC_PER_SEC / 10) % 10);
        DAEMON_EVENT(d, LEDGER_EVENT_RESUME, { "slept_s", slept });
        /* -ENODATA: not seeded yet; the first seed comes anyway. */
        (void)daemon_reseed(d, SEED_TRIGGER_RESUME);
}

static const char *crng_done(const SeederStats *was, const SeederStats *now) {
        return now->rekeys > was->rekeys ? "CRNG rekeyed from getrandom()"
                                         : "CRNG buffer discarded, but getrandom() failed";
}

/* The burst's end: SEEDER_LOST_PURGE_USEC without a loss. At the lowest
 * priority, so that a held purge due at the same time (the seed-due timer,
 * then the change's pump) is done and counted before. A burst of one loss
 * was said whole when it started. */
static int on_lost_burst_end(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        LostBurst *b = &d->lost;
        SeederStats now;

        seeder_get_stats(d->seeder, &now);
        if (b->losses > 1)
                log_notice("the burst of lost kernel log records ended: %" PRIu64 " losses over %.1f s; the CRNG "
                           "was rekeyed %" PRIu64 " times, the store purged %" PRIu64 " times (%" PRIu64 " blocks)",
                           b->losses, usec_to_seconds(b->last_usec - b->first_usec),
                           now.rekeys - b->before.rekeys, now.vm_generation_changes - b->before.vm_generation_changes,
                           now.vm_blocks_purged - b->before.vm_blocks_purged);
        b->losses = 0;
        return 0;
}

/* Records lost before they were read: one may have announced a change. The
 * seeder rekeys and purges unless its limit holds the purge; the first
 * loss of a burst is logged, the rest when it ends. */
static void lost_records(Daemon *d) {
        LostBurst *b = &d->lost;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        SeederStats was, st;
        int r = 0;

        seeder_get_stats(d->seeder, &was);
        (void)daemon_reseed(d, SEED_TRIGGER_LOST_RECORDS);
        seeder_get_stats(d->seeder, &st);
        daemon_events_purge(d, &was, &st, "lost-kernel-log-records");
        if (b->losses++ == 0) {
                b->before = was;
                b->first_usec = now;
                if (st.vm_generation_changes > was.vm_generation_changes)
                        log_warning("kernel log records were lost before they were read; one may have announced a "
                                    "VM generation change: %" PRIu64 " stored blocks purged, %s. Until %" PRIu64
                                    " s pass without a loss, each loss rekeys the CRNG, the store is purged at most "
                                    "once per %" PRIu64 " s, and the burst is logged when it ends",
                                    st.vm_blocks_purged - was.vm_blocks_purged, crng_done(&was, &st),
                                    SEEDER_LOST_PURGE_USEC / USEC_PER_SEC, SEEDER_LOST_PURGE_USEC / USEC_PER_SEC);
                else
                        log_warning("kernel log records were lost before they were read; one may have announced a "
                                    "VM generation change: %s; the store was purged less than %" PRIu64 " s ago "
                                    "and is purged again when that time is up. Until %" PRIu64 " s pass without "
                                    "a loss, each loss rekeys the CRNG, and the burst is logged when it ends",
                                    crng_done(&was, &st), SEEDER_LOST_PURGE_USEC / USEC_PER_SEC,
                                    SEEDER_LOST_PURGE_USEC / USEC_PER_SEC);
        }
        b->last_usec = now;
        if (!b->end_timer) {
                r = sd_event_add_time(d->event, &b->end_timer, CLOCK_MONOTONIC, 0, SEED_DUE_ACCURACY_USEC,
                                      on_lost_burst_end, d);
                if (r >= 0)
                        (void)sd_event_source_set_priority(b->end_timer, SD_EVENT_PRIORITY_IDLE);
        }
        if (r >= 0)
                r = sd_event_source_set_time(b->end_timer, now + SEEDER_LOST_PURGE_USEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->end_timer, SD_EVENT_ONESHOT);
        if (r < 0) {
                /* No end to wait for: this loss is its own burst. */
                log_debug("the burst's end timer: %s", strerror(-r));
                b->losses = 0;
        }
}

static void on_vm_generation(void *userdata, VmgenEvent event, VmgenChannel via) {
        Daemon *d = userdata;
        VmgenStats st;
        char why[160];

        if (event == VMGEN_EVENT_LOST) {
                vmgen_get_stats(d->vmgen, &st);
                log_warning("the kernel log stopped (%s): vm fork detection: %s", strerror(-st.kmsg_error),
                            vmgen_describe(&st, why, sizeof(why)));
                return;
        }
        if (event == VMGEN_EVENT_MAYBE) {
                lost_records(d);
                return;
        }
        log_notice("VM generation changed (%s): this machine was cloned or restored from a snapshot",
                   via == VMGEN_CHANNEL_UEVENT ? "uevent" : "kernel log");
        DAEMON_EVENT(d, LEDGER_EVENT_VM_GENERATION, { "via", via == VMGEN_CHANNEL_UEVENT ? "uevent" : "kernel log" });
        trigger_vm_generation(d);
}

static void on_clock_jump(void *userdata, uint64_t slept_usec) {
        Daemon *d = userdata;

        log_notice("resumed after %" PRIu64 ".%01" PRIu64 " s asleep (CLOCK_BOOTTIME moved ahead of CLOCK_MONOTONIC): "
                   "reseeding the CRNG", slept_usec / USEC_PER_SEC, slept_usec / (USEC_PER_SEC / 10) % 10);
        trigger_resume(d, slept_usec);
}

int daemon_start_watchers(Daemon *d) {
        VmgenStats st;
        char why[160];
        int r;

        r = clockjump_new(d->event, CLOCKJUMP_THRESHOLD_USEC, on_clock_jump, d, &d->clockjump);
        if (r < 0)
                return log_error_errno(r, "resume detection");
        r = vmgen_new(d->event,
                      &(VmgenParams){ .sysfs = d->hooks.sysfs_root,
                                      .open_kmsg = d->hooks.open_kmsg,
                                      .open_userdata = d->hooks.userdata,
                                      .uevents = true },
                      on_vm_generation, d, &d->vmgen);
        if (r < 0)
                return log_error_errno(r, "VM fork detection");
        vmgen_get_stats(d->vmgen, &st);
        if (st.detection == VMGEN_AVAILABLE || st.detection == VMGEN_NO_DEVICE)
                log_info("vm fork detection: %s%s%s%s", vmgen_describe(&st, why, sizeof(why)),
                         st.device[0] ? ", device " : "", st.device,
                         st.kmsg_inherited ? ", kernel log from standard input" : "");
        else
                log_warning("vm fork detection: %s: a clone or restored snapshot of this machine would hand out "
                            "the same stored blocks and CRNG output as the original until the next reseed%s",
                            vmgen_describe(&st, why, sizeof(why)),
                            st.kmsg_error == -EPERM || st.kmsg_error == -EACCES
                                    ? " (start truerandomd as root, or under systemd with "
                                      "StandardInput=file:/dev/kmsg and DeviceAllow=/dev/kmsg r, as its unit does)"
                                    : "");
        if (st.uevent_error && st.detection != VMGEN_NO_DEVICE)
                log_debug("vmgenid uevents not watched: %s", strerror(-st.uevent_error));
        return 0;
}
