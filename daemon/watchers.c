/* watchers.c - clones, restores and resumes, as the daemon sees them: the
 * VM generation watcher (vmgenid.h) and the suspend detector (clockjump.h)
 * started during set-up, and what each reports logged and turned into one
 * reseed trigger of the seeder (crng/seeder.h has what each does); each
 * also has the machine's identity read again (recheck.c), whose timer
 * starts here too.
 *
 * Invariant: a VM generation change is never refused: the seeder purges,
 * discards or rekeys before daemon_reseed() returns, so no byte of the old
 * state is served after it. The watchers start before privileges go (the
 * kernel log may take CAP_SYSLOG to open).
 * Flow: kernel (vmgenid, clocks) -> [watchers] -> seeder -> CRNG, store. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
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
        if (now.rekeys > was.rekeys)
                log_info("%" PRIu64 " stored blocks purged, CRNG rekeyed from getrandom(); it reseeds from the next "
                         "fresh block", now.vm_blocks_purged - was.vm_blocks_purged);
        else
                log_warning("%" PRIu64 " stored blocks purged, CRNG buffer discarded, but getrandom() failed: until "
                            "the next fresh block reseeds it, the drop-ins' stream is the one every copy holds",
                            now.vm_blocks_purged - was.vm_blocks_purged);
}

static void trigger_resume(Daemon *d) {
        /* -ENODATA: not seeded yet; the first seed comes anyway. */
        (void)daemon_reseed(d, SEED_TRIGGER_RESUME);
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
        if (event == VMGEN_EVENT_MAYBE)
                log_warning("kernel log records were lost before they were read; one may have announced a VM "
                            "generation change, so this is handled as one");
        else
                log_notice("VM generation changed (%s): this machine was cloned or restored from a snapshot",
                           via == VMGEN_CHANNEL_UEVENT ? "uevent" : "kernel log");
        trigger_vm_generation(d);
}

static void on_clock_jump(void *userdata, uint64_t slept_usec) {
        Daemon *d = userdata;

        log_notice("resumed after %" PRIu64 ".%01" PRIu64 " s asleep (CLOCK_BOOTTIME moved ahead of CLOCK_MONOTONIC): "
                   "reseeding the CRNG", slept_usec / USEC_PER_SEC, slept_usec / (USEC_PER_SEC / 10) % 10);
        trigger_resume(d);
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
