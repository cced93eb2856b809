/* seedstatus.h - what the kernel seeder learns from truerandomd: whether
 * /dev/truerandom serves, and the counters of VM generation changes and
 * resumes, from one "status" request over the control socket (the wire
 * format and status model of proto/).
 *
 * Why a poll: the daemon has no event command yet, and a status request
 * is cheap (one SEQPACKET round trip, a few KiB of JSON, well under a
 * millisecond of either side's CPU); at the default 5 s it is ~17,000
 * requests a day, and a change is acted on within one poll. An event
 * command can replace this file without touching the seeder's logic.
 * Flow: truerandomd -> control socket -> [seedstatus] -> feeder. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/time-util.h"

typedef struct SeedStatus {
        bool serving;                   /* /dev/truerandom serves (degraded counts: it still serves) */
        uint64_t vm_generation_changes; /* crng.vm_generation_changes */
        uint64_t resumes;               /* resume.jumps */
        char why[96];                   /* not serving: why, for the log */
} SeedStatus;

/* The parts the seeder uses, from a status JSON text. -EBADMSG when the
 * text is not a status (ctl_status_parse()), -ENOMEM. */
int seed_status_from_json(const char *text, size_t n, SeedStatus *ret);

/* Asks the daemon at socket_path; each send and receive waits at most
 * timeout. 0 and *ret, or -errno: -ENOENT/-ECONNREFUSED (no daemon),
 * -EACCES, -ETIMEDOUT, an error the daemon answered (-EBUSY, ...), or
 * -EBADMSG (a reply not understood). */
int seed_status_fetch(const char *socket_path, usec_t timeout, SeedStatus *ret);

/* Tells the daemon a feed gave the kernel bits (its "kernel-fed"
 * command, which takes root or CAP_SYS_ADMIN), so that its status shows
 * the last feed. 0, or -errno as seed_status_fetch(). */
int seed_status_report_fed(const char *socket_path, usec_t timeout, unsigned bits, const char *reason);
