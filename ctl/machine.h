/* machine.h - the machine an evidence bundle was made on, and the build
 * that made it, as JSON: what an auditor needs to tell one machine's
 * noise from another's.
 *
 *   machine: {"cpu": {"vendor", "family", "model", "model_name",
 *             "stepping", "microcode", "hypervisor_flag",
 *             "hypervisor_vendor"}, "clocksource", "kernel": {"sysname",
 *             "release", "version", "machine"}, "hostname"}
 *   build:   {"version", "build_id"}
 *
 * Each value is read here, never guessed: one that cannot be read is
 * null, and "absent" names each null with the reason (no such line in
 * /proc/cpuinfo, no CPUID hypervisor leaf, no build-id note in the
 * binary). The CPU fields are the first processor's of /proc/cpuinfo;
 * the hypervisor vendor is CPUID leaf 0x40000000's (x86 only, and only
 * when cpuinfo shows the hypervisor flag).
 * Flow: /proc, /sys, uname, CPUID, the ELF notes -> [machine] -> evidence. */
#pragma once

#include <json-c/json.h>

/* New objects, or NULL when out of memory. */
struct json_object *ctl_machine_to_json(void);
struct json_object *ctl_build_to_json(void);
