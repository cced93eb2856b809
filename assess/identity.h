/* identity.h - what an assessment of a noise source holds for: the machine
 * (CPU, hypervisor, clocksource, kernel, truerandom's version) and the
 * sampler's parameters. credit = auto reuses a stored assessment only while
 * every field is the same; anything else (a VM migrated to another CPU, a
 * new clocksource or kernel, a changed buffer_kib or accesses, another
 * capture file) asks for a new one.
 *
 * Where each field comes from (docs/ENTROPY.md):
 *   cpu_vendor, cpu_family, cpu_model, cpu_name
 *            CPUID leaves 0, 1 and 0x80000002-4 on x86 (the unit's
 *            ProcSubset=pid hides /proc/cpuinfo); /proc/cpuinfo elsewhere
 *   hypervisor  CPUID leaf 0x40000000's signature when CPUID says a
 *            hypervisor runs us (as systemd-detect-virt reads it first),
 *            else /sys/hypervisor/type, else "none"
 *   clocksource /sys/devices/system/clocksource/clocksource0/current_clocksource
 *   kernel   uname's release
 * Fields are one table, which drives the comparison and the JSON alike.
 * Reads files only; no secrets. Flow: daemon -> [identity] -> assessment. */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool/source.h"

typedef struct Identity {
        char cpu_vendor[16];
        unsigned cpu_family, cpu_model;
        char cpu_name[64];
        char hypervisor[16];
        char clocksource[32];
        char kernel[65];
        char version[32];          /* truerandom's: the sampler and estimators it was measured with */
        char source[16];
        unsigned buffer_kib, accesses; /* jitter */
        char path[PATH_MAX];       /* file: the capture replayed ... */
        uint64_t file_size, file_mtime_ns; /* ... as it was */
} Identity;

/* The machine's fields. sysfs: NULL for /sys (tests point elsewhere); the
 * CPU comes from CPUID where there is one. Fields it cannot read say
 * "unknown". Never fails. */
void identity_read_machine(const char *sysfs, Identity *ret);

/* The sampler's fields for source `name` with these parameters (jitter:
 * buffer and accesses; file: the path, and the file's size and mtime, 0
 * when it cannot be read or is not a regular file). */
void identity_set_sampler(Identity *id, const char *name, const SourceParams *p);

/* True when every field is equal; otherwise false, and *why (when given)
 * says what changed: "clocksource was tsc, now hpet". */
bool identity_equal(const Identity *stored, const Identity *now, char *why, size_t why_size);

/* As one JSON object (a new reference), and back: -EBADMSG when a field is
 * missing, of the wrong type or too long, with *ret untouched. */
struct json_object *identity_to_json(const Identity *id);
int identity_from_json(const struct json_object *o, Identity *ret);
