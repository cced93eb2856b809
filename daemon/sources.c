/* sources.c - the loop's side of the sources: a collector created for each
 * credited source (its windows judged by the daemon's gate under the
 * configured credit or auto's cap) and started, and on every wake-up their
 * stats read, changes logged (self-test, the gate's verdicts, health
 * tests) and whether /dev/truerandom may serve decided.
 *
 * Invariant: /dev/truerandom serves only once every credited source that
 * can run has passed its startup test, and while at least min_healthy are
 * healthy. The collectors' threads only fill the store and wake the loop;
 * everything here runs on the loop.
 * Flow: config -> [sources] -> pool -> CRNG -> CUSE. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/sourceconf.h"
#include "log.h"
#include "pool/collector.h"

const char *daemon_source_error(int error) {
        if (error == -EPERM || error == 0)
                return "no credit justified (a virtio-rng, a TPM's RNG, rng_quality 0)";
        if (error == -EDOM)
                return "sampler self-test failed";
        return strerror(-error);
}

static void record_selftest(Daemon *d, ConfigSource id, const CollectorStats *st) {
        const char *name = config_source_name(id);
        char what[256];

        selftest_describe(&st->selftest, what, sizeof(what));
        DAEMON_EVENT(d, LEDGER_EVENT_SELF_TEST, { "source", name },
                     { "result", selftest_reason_to_string(st->selftest.reason) }, { "detail", what });
}

void daemon_record_selftests(Daemon *d) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (d->sources[i].collector && d->sources[i].last.selftest.run)
                        record_selftest(d, i, &d->sources[i].last);
}

/* The self-test a source ran when its collector opened it. */
static void log_selftest(Daemon *d, ConfigSource id, const CollectorStats *st) {
        const char *name = config_source_name(id);
        LogFields f = { .source = name, .selftest = selftest_reason_to_string(st->selftest.reason) };
        char what[256];

        if (!st->selftest.run)
                return;
        selftest_describe(&st->selftest, what, sizeof(what));
        record_selftest(d, id, st);
        if (st->selftest.reason == SELFTEST_PASSED)
                log_fields(LOG_INFO, &f, "source %s: sampler self-test %s", name, what);
        else
                log_fields(LOG_ERR, &f, "source %s: sampler self-test failed: %s; the source is unavailable and "
                           "never credited", name, what);
}

/* The gate's verdicts between two looks at the stats: its first credited
 * window, a refusal once per burst (the first refused window after a
 * credited one), and the way back. Under credit = auto the credit moves
 * with every window: status shows it, the journal would drown in it. */
static void log_gate(Daemon *d, const char *name, const CollectorStats *was, const CollectorStats *now) {
        LogFields f = { .source = name, .health_test = "GATE" };
        const GateStats *g = &now->gate;
        char need[64] = "", estimate[32], credit[32], window[16], refused[24];

        snprintf(estimate, sizeof(estimate), "%.6f", g->estimate);
        snprintf(credit, sizeof(credit), "%u.%03u", g->credit_mbits / 1000, g->credit_mbits % 1000);
        snprintf(window, sizeof(window), "%u", g->window);
        snprintf(refused, sizeof(refused), "%" PRIu64, g->refused);

        if (!g->policy.auto_credit)
                snprintf(need, sizeof(need), " (credit %u.%03u needs %u.%03u)", g->policy.credit_mbits / 1000,
                         g->policy.credit_mbits % 1000, 2 * g->policy.credit_mbits / 1000,
                         2 * g->policy.credit_mbits % 1000);
        if (g->refusals > was->gate.refusals) {
                DAEMON_EVENT(d, LEDGER_EVENT_GATE_REFUSAL, { "source", name }, { "estimate", estimate },
                             { "window", window }, { "refused", refused }, { "purged", "unserved blocks" });
                log_fields(LOG_ERR, &f,
                           "source %s: the running gate refused a window of %u samples: SP 800-90B estimate %.3f "
                           "bits/sample%s; its samples are not credited and the source's unserved blocks were "
                           "purged until a window passes",
                           name, g->window, g->estimate, need);
        } else if (g->credited > was->gate.credited && was->state == SOURCE_REFUSED && now->state != SOURCE_REFUSED) {
                DAEMON_EVENT(d, LEDGER_EVENT_CREDIT_CHANGE, { "source", name }, { "credit", credit },
                             { "estimate", estimate }, { "reason", "credited again" });
                log_fields(LOG_NOTICE, &f,
                           "source %s: the running gate credits it again: estimate %.3f bits/sample, credit "
                           "%u.%03u bits/sample (%" PRIu64 " windows refused so far)",
                           name, g->estimate, g->credit_mbits / 1000, g->credit_mbits % 1000, g->refused);
        } else if (g->credited > 0 && was->gate.credited == 0) {
                DAEMON_EVENT(d, LEDGER_EVENT_CREDIT_CHANGE, { "source", name }, { "credit", credit },
                             { "estimate", estimate }, { "reason", "first window" });
                log_fields(LOG_INFO, &f,
                           "source %s: the running gate credited its first window: estimate %.3f bits/sample, "
                           "credit %u.%03u bits/sample",
                           name, g->estimate, g->credit_mbits / 1000, g->credit_mbits % 1000);
        }
}

/* An induced failure's steps (pool/induce.h): begun, caught (by what,
 * after how many samples) or not within its bound; and the evidence that
 * none of its samples reached the store, or a loud line if one did. */
static void log_induce(Daemon *d, const char *name, const CollectorInduce *was, const CollectorInduce *now) {
        const char *kind = induce_kind_to_string(now->kind);
        char after[24], blocks[24];

        snprintf(after, sizeof(after), "%" PRIu64, now->detected_after);
        snprintf(blocks, sizeof(blocks), "%" PRIu64, now->blocks);
        if (now->episodes > was->episodes) {
                DAEMON_EVENT(d, LEDGER_EVENT_INDUCE, { "source", name }, { "kind", kind }, { "phase", "begun" });
                log_notice("source %s: the induced %s failure begins at a window's first sample", name, kind);
        }
        if (now->caught > was->caught) {
                DAEMON_EVENT(d, LEDGER_EVENT_INDUCE, { "source", name }, { "kind", kind }, { "phase", "caught" },
                             { "by", now->caught_by }, { "samples", after }, { "blocks_stored", blocks });
                log_notice("source %s: the induced %s failure was caught by the %s after %" PRIu64
                           " degraded samples; it ended there", name, kind, now->caught_by, now->detected_after);
        }
        if (now->uncaught > was->uncaught) {
                snprintf(after, sizeof(after), "%" PRIu64, now->degraded);
                DAEMON_EVENT(d, LEDGER_EVENT_INDUCE, { "source", name }, { "kind", kind }, { "phase", "uncaught" },
                             { "samples", after }, { "blocks_stored", blocks });
                log_error("source %s: the induced %s failure was not caught within its %" PRIu64
                          " samples (the credit in force lets it through); it ended there", name, kind, now->degraded);
        }
        if (now->blocks > was->blocks)
                log_error("source %s: %" PRIu64 " stored blocks hold samples of an induced failure", name,
                          now->blocks - was->blocks);
}

static void log_source_changes(Daemon *d, ConfigSource id, SourceSlot *slot, const CollectorStats *now) {
        const char *name = config_source_name(id);
        const CollectorStats *was = &slot->last;
        LogFields f = { .source = name };
        char count[24];

        log_gate(d, name, was, now);
        log_induce(d, name, &was->induce, &now->induce);

        if (now->fail_rct > was->fail_rct || now->fail_apt > was->fail_apt) {
                f.health_test = now->fail_rct > was->fail_rct ? "RCT" : "APT";
                snprintf(count, sizeof(count), "%" PRIu64, now->fail_rct + now->fail_apt);
                DAEMON_EVENT(d, LEDGER_EVENT_HEALTH_FAILURE, { "source", name }, { "test", f.health_test },
                             { "severity", "intermittent" }, { "failures", count });
                log_fields(LOG_WARNING, &f,
                           "source %s: intermittent %s health test failure (%" PRIu64 " RCT, %" PRIu64
                           " APT so far); its pending data was discarded and its startup test runs again",
                           name, f.health_test, now->fail_rct, now->fail_apt);
        }
        if (now->state == SOURCE_FAILED_PERMANENT && was->state != SOURCE_FAILED_PERMANENT) {
                f.health_test = now->permanent_rct ? "RCT" : "APT";
                DAEMON_EVENT(d, LEDGER_EVENT_HEALTH_FAILURE, { "source", name }, { "test", f.health_test },
                             { "severity", "permanent" });
                log_fields(LOG_ERR, &f, "source %s failed permanently (%s health test); source disabled",
                           name, f.health_test);
        }
        f.health_test = NULL;
        if (now->state == SOURCE_UNAVAILABLE && was->state != SOURCE_UNAVAILABLE)
                log_fields(LOG_WARNING, &f, "source %s unavailable: %s", name, daemon_source_error(now->last_error));
        if (now->state == SOURCE_HEALTHY && was->state != SOURCE_HEALTHY) {
                if (!slot->passed_startup)
                        log_fields(LOG_INFO, &f, "source %s passed its startup health test (credit %u.%03u "
                                   "bits/sample)", name, now->gate.credit_mbits / 1000,
                                   now->gate.credit_mbits % 1000);
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
        cusehub_set_sources_open(d->hub, daemon_sources_open(d, now));
        egd_set_open(d->egd, d->trng_serving);
}

unsigned daemon_gate_threads(const Config *c) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned n = 0;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                n += sourceconf_creditable(&c->source[i], i);
        /* A source has at most one window with the gate at a time. */
        if (cpus > 0 && n > (unsigned long) cpus)
                n = (unsigned) cpus;
        return MAX(n, 1U);
}

int daemon_source_start(Daemon *d, ConfigSource i, bool selftest_induce) {
        SourceSlot *slot = &d->sources[i];
        const SourceConfig *sc = &d->config.source[i];
        SourceParams p = sourceconf_params(sc);
        CollectorGate gate = {
                .gate = d->gate,
                .policy = { .auto_credit = sc->credit_auto, .credit_mbits = sc->credit_mbits,
                            .cap_mbits = sc->credit_cap_mbits },
                .window = d->config.gate_window,
        };
        int r;

        if (!sourceconf_creditable(sc, i) || slot->collector)
                return 0;
        p.selftest_induce = selftest_induce;
        r = collector_new(sourceconf_ops(i), &p, &gate, i, d->store, daemon_wake, d, &slot->collector);
        if (r < 0)
                return log_error_errno(r, "source %s%s", config_source_name(i), daemon_memlock_hint(r));
        collector_get_stats(slot->collector, &slot->last);
        log_selftest(d, i, &slot->last);
        slot->passed_startup = false;
        if (d->sources_started && (r = collector_start(slot->collector)) < 0)
                return log_error_errno(r, "starting source %s", config_source_name(i));
        return 0;
}

int daemon_create_collectors(Daemon *d) {
        if (d->config.assess_samples != CONFIG_ASSESS_SAMPLES_DEFAULT)
                log_notice("[assessment] samples is no longer used: no stored assessment grants credit; the running "
                           "gate judges every window of %u samples ([pool] gate_window)", d->config.gate_window);
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                int r;

                r = daemon_source_start(d, i, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

int daemon_start_collectors(Daemon *d) {
        /* Its workers only now: root was given up first, which a process
         * with threads cannot do. */
        int r = gate_start(d->gate);

        if (r < 0)
                return log_error_errno(r, "starting the running gate's threads");
        d->sources_started = true;
        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                if (!d->sources[i].collector)
                        continue;
                r = collector_start(d->sources[i].collector);
                if (r < 0)
                        return log_error_errno(r, "starting source %s", config_source_name(i));
        }
        daemon_post_change(d);
        return 0;
}
