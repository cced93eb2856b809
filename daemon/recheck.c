/* recheck.c - credit = auto while the daemon runs: the machine's identity
 * (identity.h) read again, on a timer (every minute), on reload, on a VM
 * generation change and on resume, and every assessment in force checked
 * against it and against [assessment] samples (credit_assessment_holds()).
 *
 * A source credited from an assessment that no longer holds stops being
 * credited at once: its collector stops, its unserved blocks are purged
 * (the change happened at some point since the last look, and blocks made
 * after it were credited at a rate nothing measured), and it is pending,
 * as at a first start, until the worker has assessed it again with the
 * identity now read; autocredit.c then credits it from that new result,
 * stored with the new identity. An assessment still running for the
 * machine as it was is stopped and started again.
 *
 * Why a timer: a clocksource switch (the kernel marks the TSC unstable and
 * falls back to hpet) or a live migration tells no one. Reading a few
 * sysfs files, uname() and CPUID once a minute is cheap enough for the
 * loop. No secret, no estimator here.
 * Flow: kernel (sysfs, CPUID) -> [recheck] -> autocredit -> sources. */
#include "daemon-internal.h"

#include <inttypes.h>
#include <stdio.h>

#include "config/sourceconf.h"
#include "log.h"

#define IDENTITY_CHECK_USEC USEC_PER_MINUTE

/* Why source i's credit or running assessment no longer holds (into why),
 * or false. moved: the machine changed at this look. */
static bool stale(Daemon *d, ConfigSource i, bool moved, char *why, size_t size) {
        SourceSlot *slot = &d->sources[i];
        SourceParams p = sourceconf_params(&d->config.source[i]);
        Identity now = d->machine;
        AssessorProgress pr;
        char how[176];

        if (slot->has_assessment) {
                identity_set_sampler(&now, config_source_name(i), &p);
                if (credit_assessment_holds(&slot->assessment, &now, d->config.assess_samples, how, sizeof(how)))
                        return false;
                snprintf(why, size, "the assessment in force %.176s", how);
                return true;
        }
        if (!slot->assessor)
                return false;
        assessor_get_progress(slot->assessor, &pr);
        if (moved)
                snprintf(why, size, "the running assessment was started on the machine as it was");
        else if (pr.samples < d->config.assess_samples)
                snprintf(why, size, "the running assessment captures %" PRIu64 " samples, fewer than [assessment] "
                         "samples = %u", pr.samples, d->config.assess_samples);
        else
                return false;
        return true;
}

void autocredit_recheck(Daemon *d, const char *event) {
        char changed[128], why[224];
        bool moved, any = false;
        Identity m;

        if (d->stopping)
                return;
        identity_read_machine(d->hooks.sysfs_root, &m);
        moved = !identity_equal(&d->machine, &m, changed, sizeof(changed));
        if (moved) {
                log_notice("%s: this machine's identity changed: %s", event, changed);
                d->machine = m;
        }
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                SourceSlot *slot = &d->sources[i];
                const SourceConfig *sc = &d->config.source[i];
                const LogFields f = { .source = config_source_name(i) };
                size_t purged;

                if (!sourceconf_creditable(sc, i) || !stale(d, i, moved, why, sizeof(why)))
                        continue;
                any = true;
                if (!sc->credit_auto) {
                        /* The credit is the operator's: it stays; only the
                         * comparison with a measurement goes. */
                        log_fields(LOG_NOTICE, &f, "source %s: %s: %s; its configured credit is no longer checked "
                                   "against a measurement of this machine", f.source, event, why);
                        autocredit_resolve(d, i);
                        continue;
                }
                if (slot->collector) {
                        slot->collector = collector_free(slot->collector);
                        slot->last = (CollectorStats){ 0 };
                        slot->passed_startup = false;
                        purged = store_purge(d->store, (unsigned)i);
                        log_fields(LOG_WARNING, &f, "source %s: %s (%s): crediting stopped and %zu unserved blocks "
                                   "purged", f.source, why, event, purged);
                } else
                        log_fields(LOG_NOTICE, &f, "source %s: %s (%s)", f.source, why, event);
                autocredit_resolve(d, i);
                if (slot->credit.origin == CREDIT_PENDING)
                        snprintf(slot->assess_why, sizeof(slot->assess_why), "%.24s: %.160s", event, why);
                (void)daemon_source_start(d, i);
        }
        if (any)
                daemon_post_change(d);
}

static int on_identity_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        autocredit_recheck(d, "identity check");
        return sd_event_source_set_time_relative(s, d->hooks.identity_check_usec ? d->hooks.identity_check_usec
                                                                                 : IDENTITY_CHECK_USEC);
}

int autocredit_start_recheck(Daemon *d) {
        usec_t every = d->hooks.identity_check_usec ? d->hooks.identity_check_usec : IDENTITY_CHECK_USEC;
        int r;

        r = sd_event_add_time_relative(d->event, &d->identity_timer, CLOCK_MONOTONIC, every, every / 10,
                                       on_identity_timer, d);
        if (r < 0)
                return log_error_errno(r, "identity check timer");
        return sd_event_source_set_enabled(d->identity_timer, SD_EVENT_ON);
}
