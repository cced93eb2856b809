/* autocredit.c - credit = auto in the daemon: for each source, find the
 * assessment of this machine (the state file), decide its credit
 * (credit.h), and where there is none, assess the source on a worker
 * thread (assessor.h), one source at a time, while the loop goes on
 * serving. Until its assessment is done a source is not credited; if no
 * other credited source runs, /dev/truerandom waits, and so do the CRNG's
 * seed and READY=1. The journal and STATUS= say that it assesses and how
 * long it expects; EXTEND_TIMEOUT_USEC= keeps systemd's start timeout
 * ahead of it. An explicit credit above half the stored estimate is
 * logged and shown in status.
 *
 * It decides credits and nothing else: the loop starts the collector of a
 * source whose assessment ended (autocredit_poll() says which), and ends a
 * start left with nothing credited (checkconf.c). While the daemon runs,
 * recheck.c reads the machine's identity again and sends a source whose
 * assessment no longer holds back through autocredit_resolve().
 *
 * The state directory is opened once, at start-up (before privileges are
 * dropped), and every write goes through that fd (assessment.h).
 * Flow: config -> [autocredit] -> the loop -> collectors (sources.c). */
#include "daemon-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "assess/eajson.h"
#include "config/sourceconf.h"
#include "log.h"
#include "pool/capture.h"
#include "util/cleanup.h"
#include "util/json-util.h"

/* Between two EXTEND_TIMEOUT_USEC= while an assessment holds up READY. */
#define EXTEND_INTERVAL_USEC (5 * USEC_PER_SEC)
#define EXTEND_MIN_USEC (60 * USEC_PER_SEC)

static const char *source_name(ConfigSource i) {
        return config_source_name(i);
}

/* The journal fields of source i's events, for log_fields(). */
#define FIELDS(i) (&(LogFields){ .source = source_name(i) })

/* What ended an assessment, in words. */
static const char *assess_error_text(int error, char *buf, size_t size) {
        switch (error) {
        case -ENODATA:
                return "the source ended before the samples were in (a file: set loop = yes, or fewer "
                       "[assessment] samples)";
        case -ETIMEDOUT:
                snprintf(buf, size, "no sample for %u s", (unsigned) (CAPTURE_STALL_USEC / USEC_PER_SEC));
                return buf;
        case -ECANCELED:
                return "stopped";
        default:
                snprintf(buf, size, "%s", strerror(-error));
                return buf;
        }
}

void autocredit_open(Daemon *d) {
        const char *dir = d->config.state_directory;

        d->state_dirfd = -1;
        identity_read_machine(d->hooks.sysfs_root, &d->machine);
        /* One level, as the control socket's directory: systemd's
         * StateDirectory= makes it otherwise. */
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                log_warning("cannot create the state directory %s: %s; credit = auto will assess again at every start",
                            dir, strerror(errno));
        d->state_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d->state_dirfd < 0 && errno != ENOENT)
                log_warning("cannot open the state directory %s: %s; credit = auto will assess again at every start",
                            dir, strerror(errno));
}

/* Joins every assessment: at exit the loop may wait (one estimator step
 * at most). */
void autocredit_close(Daemon *d) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                d->sources[i].assessor = assessor_free(d->sources[i].assessor);
                d->retired[i] = assessor_free(d->retired[i]);
        }
        if (d->state_dirfd >= 0)
                close(d->state_dirfd);
        d->state_dirfd = -1;
}

void autocredit_reset(Daemon *d, SourceSlot *slot) {
        ConfigSource i = (ConfigSource) (slot - d->sources);

        if (slot->assessor) {
                log_fields(LOG_NOTICE, FIELDS(i), "source %s: its assessment is stopped: its settings changed",
                           source_name(i));
                assessor_stop(slot->assessor);
                for (size_t k = 0; k < _CONFIG_SOURCE_MAX; k++)
                        if (!d->retired[k]) {
                                d->retired[k] = slot->assessor;
                                slot->assessor = NULL;
                                break;
                        }
                /* No room (cannot happen: one per source): wait for it. */
                slot->assessor = assessor_free(slot->assessor);
        }
        slot->assess_queued = false;
        slot->has_assessment = false;
        slot->assessment_fresh = false;
        slot->assess_error = 0;
        slot->assess_why[0] = '\0';
}

bool autocredit_pending(const SourceSlot *slot) {
        return slot->assess_queued || slot->assessor;
}

static void log_credit(Daemon *d, ConfigSource i, bool fresh) {
        const SourceSlot *slot = &d->sources[i];
        const CreditDecision *c = &slot->credit;
        const SourceConfig *sc = &d->config.source[i];
        char date[32];

        if (!c->has_estimate)
                return;
        assessment_format_date(slot->assessment.date, date);
        switch (c->origin) {
        case CREDIT_AUTO:
        case CREDIT_CAPPED:
                if (c->credit_mbits == 0) {
                        log_fields(LOG_ERR, FIELDS(i),
                                   "source %s: this machine's assessment (%s) found %.3f bits of min-entropy per "
                                   "sample, which justifies no credit: it is not credited",
                                   source_name(i), date, c->min_entropy);
                        break;
                }
                log_fields(LOG_INFO, FIELDS(i),
                           "source %s: credit %u.%03u bits/sample (%s%s), from %s assessment of %s: min-entropy "
                           "%.3f bits/sample (H_original %.3f, H_bitstring %.3f, %zu samples)",
                           source_name(i), c->credit_mbits / 1000, c->credit_mbits % 1000,
                           c->origin == CREDIT_CAPPED ? "capped by credit_cap; half the estimate would be "
                                                      : "auto: half the estimate",
                           c->origin == CREDIT_CAPPED ? "higher" : "", fresh ? "the new" : "the stored", date,
                           c->min_entropy, slot->assessment.report.h_original, slot->assessment.report.h_bitstring,
                           slot->assessment.report.samples);
                break;
        case CREDIT_EXPLICIT:
                if (c->above_bound)
                        log_fields(LOG_WARNING, FIELDS(i),
                                   "source %s: the configured credit %u.%03u bits/sample is above half (%u.%03u) of "
                                   "the min-entropy this machine measured (%.3f bits/sample, assessment of %s): the "
                                   "measurement does not support it (credit = auto would give %u.%03u)",
                                   source_name(i), sc->credit_mbits / 1000, sc->credit_mbits % 1000,
                                   c->bound_mbits / 1000, c->bound_mbits % 1000, c->min_entropy, date,
                                   MIN(c->bound_mbits, sc->credit_cap_mbits) / 1000,
                                   MIN(c->bound_mbits, sc->credit_cap_mbits) % 1000);
                break;
        default:
                break;
        }
}

void autocredit_resolve(Daemon *d, ConfigSource i) {
        SourceSlot *slot = &d->sources[i];
        const SourceConfig *sc = &d->config.source[i];
        SourceParams p = sourceconf_params(sc);
        Identity now = d->machine;
        char why[192] = "", changed[176];
        Assessment a;
        int r = -ENOENT;

        autocredit_reset(d, slot);
        /* Only sources whose raw noise the estimators judge have a stored
         * estimate: those whose row allows credit = auto. */
        if (sourceconf_ops(i)->credit == SOURCE_CREDIT_MEASURED) {
                identity_set_sampler(&now, source_name(i), &p);
                if (d->state_dirfd >= 0)
                        r = assessment_load(d->state_dirfd, source_name(i), &a, why, sizeof(why));
                else
                        snprintf(why, sizeof(why), "no state directory");
                if (r == 0 && !credit_assessment_holds(&a, &now, d->config.assess_samples, changed, sizeof(changed))) {
                        snprintf(why, sizeof(why), "the stored one %.170s", changed);
                        r = -ESTALE;
                }
                if (r == -EBADMSG || r == -EPERM)
                        log_fields(LOG_WARNING, FIELDS(i),
                                   "source %s: ignoring the stored assessment: %s", source_name(i), why);
                if (r == 0) {
                        slot->assessment = a;
                        slot->has_assessment = true;
                }
        }
        credit_decide(sc, slot->has_assessment ? &slot->assessment : NULL, &slot->credit);
        if (slot->credit.origin == CREDIT_PENDING) {
                slot->assess_queued = true;
                snprintf(slot->assess_why, sizeof(slot->assess_why), "%s", why);
        }
        log_credit(d, i, false);
}

/* One assessment at a time: two would measure each other's load. */
void autocredit_start_next(Daemon *d) {
        if (!d->sources_started)
                return;
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (d->sources[i].assessor || d->retired[i])
                        return;
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                SourceSlot *slot = &d->sources[i];
                const SourceConfig *sc = &d->config.source[i];
                AssessorParams p = {
                        .ops = sourceconf_ops(i),
                        .params = sourceconf_params(sc),
                        .samples = d->config.assess_samples,
                        .identity = d->machine,
                        .state_dirfd = d->state_dirfd,
                        .wake = daemon_wake,
                        .userdata = d,
                };
                int r;

                if (!slot->assess_queued)
                        continue;
                slot->assess_queued = false;
                identity_set_sampler(&p.identity, source_name(i), &p.params);
                r = assessor_start(&p, &slot->assessor);
                if (r < 0) {
                        slot->assess_error = r;
                        log_fields(LOG_ERR, FIELDS(i), "source %s: cannot start its assessment: %s",
                                   source_name(i), strerror(-r));
                        continue;
                }
                slot->progress_logged = false;
                log_fields(LOG_NOTICE, FIELDS(i),
                           "source %s: assessing it on this machine (%s): %u samples through the SP 800-90B "
                           "estimators; it is not credited until that is done",
                           source_name(i), slot->assess_why, d->config.assess_samples);
                return;
        }
}

/* The estimate is in: store and decide the credit; true when decided (the
 * loop starts the collector), false when the assessment failed. */
static bool finish(Daemon *d, ConfigSource i) {
        SourceSlot *slot = &d->sources[i];
        Assessment a;
        int save_error = 0, r;
        char eb[128];

        r = assessor_result(slot->assessor, &a, &save_error);
        slot->assessor = assessor_free(slot->assessor);
        if (r < 0) {
                slot->assess_error = r;
                log_fields(LOG_ERR, FIELDS(i),
                           "source %s: its assessment failed: %s; it is not credited (it is tried again at the next "
                           "start or reload)",
                           source_name(i), assess_error_text(r, eb, sizeof(eb)));
                return false;
        }
        if (save_error < 0)
                log_fields(LOG_WARNING, FIELDS(i),
                           "source %s: cannot store the assessment in %s/%s: %s; it will be made again at the next "
                           "start",
                           source_name(i), d->config.state_directory, ASSESSMENT_FILE, strerror(-save_error));
        else if (d->state_dirfd >= 0)
                log_fields(LOG_INFO, FIELDS(i), "source %s: assessment stored in %s/%s (%.1f s)", source_name(i),
                           d->config.state_directory, ASSESSMENT_FILE, usec_to_seconds(a.duration_usec));
        slot->assessment = a;
        slot->has_assessment = true;
        slot->assessment_fresh = true;
        credit_decide(&d->config.source[i], &slot->assessment, &slot->credit);
        log_credit(d, i, true);
        return true;
}

/* The remaining time of a running assessment, or USEC_INFINITY when not
 * known yet. */
static usec_t remaining_usec(const AssessorProgress *p) {
        if (p->expected_usec == 0)
                return USEC_INFINITY;
        return p->expected_usec > p->elapsed_usec ? p->expected_usec - p->elapsed_usec : 0;
}

static void extend_start_timeout(Daemon *d, const AssessorProgress *p) {
        usec_t now = now_usec(CLOCK_MONOTONIC), usec;
        usec_t left = remaining_usec(p);

        if (d->ready || now < d->last_extend_usec + EXTEND_INTERVAL_USEC)
                return;
        d->last_extend_usec = now;
        usec = left == USEC_INFINITY ? EXTEND_MIN_USEC : left / 2 * 3 + 30 * USEC_PER_SEC;
        sd_notifyf(false, "EXTEND_TIMEOUT_USEC=%" PRIu64, (uint64_t) MAX(usec, EXTEND_MIN_USEC));
}

_Static_assert(_CONFIG_SOURCE_MAX <= 32, "a bit per source in autocredit_poll()'s mask");

bool autocredit_poll(Daemon *d, unsigned *ret_decided) {
        unsigned decided = 0;
        bool ended = false;

        for (size_t k = 0; k < _CONFIG_SOURCE_MAX; k++)
                if (d->retired[k] && assessor_is_done(d->retired[k]))
                        d->retired[k] = assessor_free(d->retired[k]);
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                SourceSlot *slot = &d->sources[i];
                AssessorProgress p;

                if (!slot->assessor)
                        continue;
                if (assessor_is_done(slot->assessor)) {
                        if (finish(d, i))
                                decided |= 1U << i;
                        ended = true;
                        continue;
                }
                assessor_get_progress(slot->assessor, &p);
                if (p.expected_usec > 0 && !slot->progress_logged) {
                        slot->progress_logged = true;
                        log_fields(LOG_NOTICE, FIELDS(i),
                                   "source %s: its assessment should take about %.0f s in all (capturing at %.0f "
                                   "samples/s, then the estimators)",
                                   source_name(i), ceil(usec_to_seconds(p.expected_usec)), p.capture_rate);
                }
                extend_start_timeout(d, &p);
        }
        *ret_decided = decided;
        return ended;
}

bool autocredit_status(Daemon *d, char *buf, size_t size) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                SourceSlot *slot = &d->sources[i];
                AssessorProgress p;
                usec_t left;
                char pct[32];

                if (!slot->assessor)
                        continue;
                assessor_get_progress(slot->assessor, &p);
                left = remaining_usec(&p);
                if (p.phase == ASSESSOR_CAPTURING)
                        snprintf(pct, sizeof(pct), " %.0f%%", p.samples ? 100.0 * (double) p.captured / (double) p.samples : 0.0);
                else if (p.phase == ASSESSOR_ESTIMATING && p.steps_total)
                        snprintf(pct, sizeof(pct), " %u/%u", p.steps_done, p.steps_total);
                else
                        pct[0] = '\0';
                if (left != USEC_INFINITY)
                        snprintf(buf, size, "assessing %s on this machine (%s%s), about %.0f s left", source_name(i),
                                 assessor_phase_to_string(p.phase), pct, ceil(usec_to_seconds(left)));
                else
                        snprintf(buf, size, "assessing %s on this machine (%s%s)", source_name(i),
                                 assessor_phase_to_string(p.phase), pct);
                return true;
        }
        return false;
}

/* ---- status JSON -------------------------------------------------------------- */


static struct json_object *estimate_json(const SourceSlot *slot) {
        const Assessment *a = &slot->assessment;
        struct json_object *o = json_object_new_object();
        char date[32];
        int r = 0;

        if (!o)
                return NULL;
        assessment_format_date(a->date, date);
        r |= json_put(o, "min_entropy", ea_json_value(a->report.min_entropy));
        r |= json_put(o, "h_original", ea_json_value(a->report.h_original));
        r |= isnan(a->report.h_bitstring) ? json_put_nullable(o, "h_bitstring", NULL)
                                          : json_put(o, "h_bitstring", ea_json_value(a->report.h_bitstring));
        r |= json_put(o, "bound_bits", json_new_fixed(slot->credit.bound_mbits / 1000.0, 3));
        r |= json_put(o, "samples", json_object_new_uint64(a->report.samples));
        r |= json_put(o, "date", json_object_new_string(date));
        r |= json_put(o, "age_s", json_object_new_int64(MAX((int64_t) time(NULL) - a->date, (int64_t) 0)));
        r |= json_put(o, "measured", json_object_new_string(slot->assessment_fresh ? "now" : "stored"));
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static struct json_object *assessment_json(const SourceSlot *slot) {
        struct json_object *o = json_object_new_object();
        AssessorProgress p = { 0 };
        const char *phase = "queued";
        char eb[128];
        int r = 0;

        if (!o)
                return NULL;
        if (slot->assessor) {
                assessor_get_progress(slot->assessor, &p);
                phase = assessor_phase_to_string(p.phase);
        } else if (slot->assess_error)
                phase = "failed";
        r |= json_put(o, "phase", json_object_new_string(phase));
        r |= json_put(o, "reason", json_object_new_string(slot->assess_why));
        if (slot->assessor) {
                r |= json_put(o, "samples", json_object_new_uint64(p.samples));
                r |= json_put(o, "captured", json_object_new_uint64(p.captured));
                r |= json_put(o, "steps_done", json_object_new_uint64(p.steps_done));
                r |= json_put(o, "steps_total", json_object_new_uint64(p.steps_total));
                r |= json_put(o, "elapsed_s", json_new_fixed(usec_to_seconds(p.elapsed_usec), 1));
                r |= p.expected_usec > 0 ? json_put(o, "expected_s", json_new_fixed(usec_to_seconds(p.expected_usec), 1)) : json_put_nullable(o, "expected_s", NULL);
        }
        if (slot->assess_error)
                r |= json_put(o, "error", json_object_new_string(assess_error_text(slot->assess_error, eb, sizeof(eb))));
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

int autocredit_source_json(Daemon *d, ConfigSource i, struct json_object *o) {
        const SourceSlot *slot = &d->sources[i];
        const SourceConfig *sc = &d->config.source[i];
        int r = 0;

        if (!sourceconf_creditable(sc, i))
                return 0;
        r |= json_put(o, "credit_origin", json_object_new_string(credit_origin_to_string(slot->credit.origin)));
        if (sc->credit_auto)
                r |= json_put(o, "credit_cap_bits", json_new_fixed(sc->credit_cap_mbits / 1000.0, 3));
        if (slot->credit.origin == CREDIT_EXPLICIT && slot->credit.has_estimate)
                r |= json_put(o, "credit_above_estimate", json_object_new_boolean(slot->credit.above_bound));
        r |= slot->has_assessment ? json_put(o, "estimate", estimate_json(slot)) : json_put_nullable(o, "estimate", NULL);
        if (autocredit_pending(slot) || slot->assess_error)
                r |= json_put(o, "assessment", assessment_json(slot));
        return r ? -ENOMEM : 0;
}
