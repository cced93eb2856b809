/* evidence-build.h - truerandomctl evidence -o FILE.tar: the auditor's
 * bundle (evidence/bundle.h) of one machine's noise sources, made in one
 * run.
 *
 * For each source (those named, else every credited one: the daemon's
 * status says which, or with --direct the configuration):
 *   SOURCE.bin           1,000,000 raw 8-bit samples (ea_non_iid's input)
 *   SOURCE-restart.bin   1000 rows x 1000 samples, the source restarted
 *                        before each row (ea_restart's input)
 *   SOURCE-report.txt    the estimators and the restart test, as `assess
 *                        --restart` prints them
 *   SOURCE-report.json   the same as `assess --restart --json` writes it
 * and once:
 *   status.json          the daemon's status as it came: counters since
 *                        start, each source's gate and health failures
 *   gate.json            each credited source's running gate, from it
 *   health.json          the health-test cutoffs and alpha in force, from it
 *   config.json, config/ the configuration files read, their SHA-256
 *   machine.json         CPU, hypervisor, clocksource, kernel (machine.h)
 *   build.json           truerandomctl's version and build id, the
 *                        daemon's version (its build id: absent)
 *   ledger/, ledger-verify.json   the ledger and its check
 *   README.txt           the NIST commands that reproduce each figure, and
 *                        each part, present or absent and why
 * A part this machine or daemon cannot give is a JSON object
 * {"absent": "why"} under its name, and README.txt says so: nothing is
 * made up (--direct has no daemon, so no status, gate or cutoffs).
 *
 * Captures go through truerandomd (root) or --direct in this process
 * (capture.h); FILE appears only when complete (capture-file.h).
 * Flow: capture, estimates, status, config, ledger -> [evidence-build]
 *       -> evidence/bundle -> FILE.tar. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_EVIDENCE_SOURCES_MAX 16U

typedef struct CtlEvidence {
        const char *output;                /* FILE.tar */
        const char *sources[CTL_EVIDENCE_SOURCES_MAX];
        size_t n_sources;                  /* 0: every credited source */
        bool direct;
        const uint8_t *sk;                 /* --sign's secret key (evidence/keys.h);
                                            * NULL: unsigned */
        const char *config_path;           /* --config; NULL: the default file */
        const char *socket_path;           /* --socket; NULL: the configuration's */
} CtlEvidence;

/* Makes the bundle; an exit code (client.h), after saying why when not
 * EXIT_OK. */
int ctl_evidence_build(const CtlEvidence *e);
