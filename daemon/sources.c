/* sources.c - the loop's side of the sources: a collector created for each
 * credited source (at the credit autocredit.c decided) and started, and on
 * every wake-up their stats read, changes logged (self-test, health tests,
 * running check) and whether /dev/truerandom may serve decided.
 *
 * Invariant: /dev/truerandom serves only once every credited source that
 * can run has passed its startup test, and while at least min_healthy are
 * healthy. The collectors' threads only fill the store and wake the loop;
 * everything here runs on the loop.
 * Flow: config -> autocredit -> [sources] -> pool -> CRNG -> CUSE. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/sourceconf.h"
#include "log.h"
#include "pool/collector.h"

const char *daemon_source_error(int error) {
        if (error == -EPERM || error == 0)
                return "no credit justified (virtio-rng, rng_quality 0)";
        if (error == -EDOM)
                return "sampler self-test failed";
        return strerror(-error);
}

/* The self-test a source ran when its collector opened it. */
static void log_selftest(ConfigSource id, const CollectorStats *st) {
        const char *name = config_source_name(id);
        LogFields f = { .source = name, .selftest = selftest_reason_to_string(st->selftest.reason) };
        char what[256];

        if (!st->selftest.run)
                return;
        selftest_describe(&st->selftest, what, sizeof(what));
        if (st->selftest.reason == SELFTEST_PASSED)
                log_fields(LOG_INFO, &f, "source %s: sampler self-test %s", name, what);
        else
                log_fields(LOG_ERR, &f, "source %s: sampler self-test failed: %s; the source is unavailable and "
                           "never credited", name, what);
}

/* The running check's events between two looks at the stats. */
static void log_running_check(const char *name, uint32_t credit, const OnlineStats *was, const OnlineStats *now) {
        LogFields f = { .source = name, .health_test = "MCV" };
        double h = online_estimate_bits(now->last_max), c = credit / 1000.0, bound = fmin(2 * c, 8.0);
        char why[96];

        if (now->stops > was->stops) {
                /* Why it stopped is the stopping window's: later windows
                 * may have ended before the loop looked. */
                h = online_estimate_bits(now->stop_max);
                if (now->stop_max > now->cutoff_stop)
                        snprintf(why, sizeof(why), "below its credit (%.3f)", c);
                else
                        snprintf(why, sizeof(why), "below twice its credit (%.3f) for %u windows in a row", bound,
                                 ONLINE_STOP_WINDOWS);
                log_fields(LOG_ERR, &f,
                           "source %s: running estimate %.3f bits/sample (most common value in %u samples) %s; "
                           "crediting stopped and its unserved blocks purged until %u windows in a row are clean",
                           name, h, ONLINE_WINDOW, why, ONLINE_RECOVER_WINDOWS);
        } else if (now->flagged > was->flagged && (was->state == ONLINE_OK || was->state == ONLINE_PENDING))
                log_fields(LOG_WARNING, &f,
                           "source %s: running estimate %.3f bits/sample (most common value in %u samples) is below "
                           "twice its credit (%.3f); still credited, stopped after %u such windows in a row",
                           name, h, ONLINE_WINDOW, bound, ONLINE_STOP_WINDOWS);
        if (was->state == ONLINE_STOPPED && now->state != ONLINE_STOPPED && now->stops == was->stops)
                log_fields(LOG_NOTICE, &f, "source %s: running estimate back to %.3f bits/sample for %u windows; "
                           "credited again", name, h, ONLINE_RECOVER_WINDOWS);
}

static void log_source_changes(Daemon *d, ConfigSource id, SourceSlot *slot, const CollectorStats *now) {
        const char *name = config_source_name(id);
        const CollectorStats *was = &slot->last;
        LogFields f = { .source = name };

        log_running_check(name, now->credit_mbits, &was->online, &now->online);

        if (now->fail_rct > was->fail_rct || now->fail_apt > was->fail_apt) {
                f.health_test = now->fail_rct > was->fail_rct ? "RCT" : "APT";
                log_fields(LOG_WARNING, &f,
                           "source %s: intermittent %s health test failure (%" PRIu64 " RCT, %" PRIu64
                           " APT so far); its pending data was discarded and its startup test runs again",
                           name, f.health_test, now->fail_rct, now->fail_apt);
        }
        if (now->state == SOURCE_FAILED_PERMANENT && was->state != SOURCE_FAILED_PERMANENT) {
                f.health_test = now->permanent_rct ? "RCT" : "APT";
                log_fields(LOG_ERR, &f, "source %s failed permanently (%s health test); source disabled",
                           name, f.health_test);
        }
        f.health_test = NULL;
        if (now->state == SOURCE_UNAVAILABLE && was->state != SOURCE_UNAVAILABLE)
                log_fields(LOG_WARNING, &f, "source %s unavailable: %s", name, daemon_source_error(now->last_error));
        if (now->state == SOURCE_HEALTHY && was->state != SOURCE_HEALTHY) {
                if (!slot->passed_startup)
                        log_fields(LOG_INFO, &f, "source %s passed its startup health test (credit %u.%03u bits/sample)",
                                   name, now->credit_mbits / 1000, now->credit_mbits % 1000);
                else
                        log_fields(LOG_NOTICE, &f, "source %s healthy again", name);
                slot->passed_startup = true;
        }
        slot->last = *now;
}

/* /dev/truerandom serves only once every credited source that can run has
 * passed its startup test, and while at least min_healthy are healthy. A
 * source healthy now has passed it, whether or not the loop saw it yet. */
bool daemon_sources_serving(const Daemon *d, const CollectorStats stats[static _CONFIG_SOURCE_MAX]) {
        unsigned healthy = 0;
        bool waiting_startup = false;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const CollectorStats *st = &stats[i];

                if (!d->sources[i].collector)
                        continue;
                if (st->state == SOURCE_HEALTHY)
                        healthy++;
                else if (!d->sources[i].passed_startup &&
                         (st->state == SOURCE_STARTUP || st->state == SOURCE_FAILED_INTERMITTENT))
                        waiting_startup = true;
        }
        return d->sources_started && !waiting_startup && healthy >= d->config.min_healthy;
}

void daemon_refresh_sources(Daemon *d) {
        CollectorStats now[_CONFIG_SOURCE_MAX] = { 0 };

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                SourceSlot *slot = &d->sources[i];

                if (!slot->collector)
                        continue;
                collector_get_stats(slot->collector, &now[i]);
                log_source_changes(d, i, slot, &now[i]);
                rate_window_advance(&slot->rate, now[i].credited_mbits, now_usec(CLOCK_MONOTONIC));
        }
        d->trng_serving = daemon_sources_serving(d, now);
        cusehub_set_trng_open(d->hub, d->trng_serving);
}

int daemon_source_start(Daemon *d, ConfigSource i) {
        SourceSlot *slot = &d->sources[i];
        SourceParams p = sourceconf_params(&d->config.source[i]);
        int r;

        if (slot->credit.credit_mbits == 0 || slot->collector)
                return 0;
        r = collector_new(sourceconf_ops(i), &p, slot->credit.credit_mbits, i, d->store, daemon_wake, d,
                          &slot->collector);
        if (r < 0)
                return log_error_errno(r, "source %s%s", config_source_name(i), daemon_memlock_hint(r));
        collector_get_stats(slot->collector, &slot->last);
        log_selftest(i, &slot->last);
        slot->passed_startup = false;
        if (d->sources_started && (r = collector_start(slot->collector)) < 0)
                return log_error_errno(r, "starting source %s", config_source_name(i));
        return 0;
}

int daemon_create_collectors(Daemon *d) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                int r;

                if (!sourceconf_creditable(&d->config.source[i], i))
                        continue;
                autocredit_resolve(d, i);
                r = daemon_source_start(d, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* And the first assessment, with them. */
int daemon_start_collectors(Daemon *d) {
        d->sources_started = true;
        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                int r;
                if (!d->sources[i].collector)
                        continue;
                r = collector_start(d->sources[i].collector);
                if (r < 0)
                        return log_error_errno(r, "starting source %s", config_source_name(i));
        }
        daemon_post_change(d);
        return 0;
}
