/* machine.c - the machine and the build, as JSON (see machine.h).
 * Flow: /proc, /sys, uname, CPUID, the ELF notes -> [machine] -> evidence. */
#include "machine.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "config-build.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/json-util.h"

#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define BUILD_ID_MAX 64U
#define TEXT_MAX (1024U * 1024U)

/* "absent": {key: why} for each value that could not be read. */
static int put_read(struct json_object *o, struct json_object *absent, const char *key, const char *value,
                    const char *why) {
        if (value)
                return json_put(o, key, json_object_new_string(value));
        return json_put_nullable(o, key, NULL) | json_put(absent, key, json_object_new_string(why));
}

/* ---- /proc/cpuinfo ---------------------------------------------------------------- */

typedef struct CpuField {
        const char *cpuinfo;   /* the line's name in /proc/cpuinfo */
        const char *key;       /* ours */
} CpuField;

static const CpuField cpu_fields[] = {
        { "vendor_id", "vendor" },
        { "cpu family", "family" },
        { "model", "model" },
        { "model name", "model_name" },
        { "stepping", "stepping" },
        { "microcode", "microcode" },
};

/* The value of the first processor's line "name\t: value", trimmed, or
 * NULL; malloc'd. */
static char *cpuinfo_value(const char *text, const char *name) {
        size_t n = strlen(name);

        for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                const char *end = strchrnul(line, '\n'), *v;

                if (end == line)
                        break; /* the first processor ends at an empty line */
                if (strncmp(line, name, n) != 0 || (line[n] != '\t' && line[n] != ' ' && line[n] != ':'))
                        continue;
                v = memchr(line, ':', (size_t) (end - line));
                if (!v)
                        continue;
                for (v++; v < end && *v == ' '; v++)
                        ;
                return strndup(v, (size_t) (end - v));
        }
        return NULL;
}

/* The whole of a small file from /proc or /sys, NUL-terminated; NULL
 * if it cannot be read. */
static char *read_text(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        char *text;
        size_t n;

        if (fd < 0 || fd_read_all(fd, TEXT_MAX, &text, &n) < 0)
                return NULL;
        return text;
}

static bool has_flag(const char *flags, const char *flag) {
        size_t n = strlen(flag);

        for (const char *p = flags; p && (p = strstr(p, flag)); p += n)
                if ((p == flags || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
                        return true;
        return false;
}

/* CPUID 0x40000000's vendor signature ("KVMKVMKVM", "VMwareVMware"), or
 * NULL where there is none to ask. */
static char *hypervisor_vendor(void) {
#if defined(__x86_64__) || defined(__i386__)
        unsigned a, b, c, d;
        char v[13];

        __cpuid(0x40000000U, a, b, c, d);
        (void) a;
        memcpy(v, &b, 4);
        memcpy(v + 4, &c, 4);
        memcpy(v + 8, &d, 4);
        v[12] = '\0';
        /* Trailing NULs and spaces pad short signatures. */
        for (size_t i = strlen(v); i > 0 && v[i - 1] == ' '; i--)
                v[i - 1] = '\0';
        return v[0] ? strdup(v) : NULL;
#else
        return NULL;
#endif
}

static struct json_object *cpu_json(struct json_object *absent) {
        _cleanup_free_ char *text = read_text("/proc/cpuinfo"), *flags = NULL, *hv = NULL;
        struct json_object *o = json_object_new_object();
        bool hypervisor;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(cpu_fields); i++) {
                _cleanup_free_ char *v = text ? cpuinfo_value(text, cpu_fields[i].cpuinfo) : NULL;

                r |= put_read(o, absent, cpu_fields[i].key, v,
                              text ? "no such line in /proc/cpuinfo" : "/proc/cpuinfo unreadable");
        }
        flags = text ? cpuinfo_value(text, "flags") : NULL;
        hypervisor = has_flag(flags, "hypervisor");
        if (flags)
                r |= json_put(o, "hypervisor_flag", json_object_new_boolean(hypervisor));
        else
                r |= put_read(o, absent, "hypervisor_flag", NULL, "no flags line in /proc/cpuinfo");
        hv = hypervisor ? hypervisor_vendor() : NULL;
        r |= put_read(o, absent, "hypervisor_vendor", hv,
                      !hypervisor ? "no hypervisor flag" : "no CPUID hypervisor leaf on this architecture");
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static struct json_object *kernel_json(void) {
        struct json_object *o;
        struct utsname u;
        int r = 0;

        if (uname(&u) < 0 || !(o = json_object_new_object()))
                return NULL;
        r |= json_put(o, "sysname", json_object_new_string(u.sysname));
        r |= json_put(o, "release", json_object_new_string(u.release));
        r |= json_put(o, "version", json_object_new_string(u.version));
        r |= json_put(o, "machine", json_object_new_string(u.machine));
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

struct json_object *ctl_machine_to_json(void) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        struct json_object *absent = json_object_new_object();
        _cleanup_free_ char *clock = read_text(CLOCKSOURCE_PATH);
        char host[256];
        int r = 0;

        if (!o || !absent) {
                json_object_put(absent);
                return NULL;
        }
        r |= json_put(o, "cpu", cpu_json(absent));
        if (clock)
                clock[strcspn(clock, "\n")] = '\0';
        r |= put_read(o, absent, "clocksource", clock, "unreadable: " CLOCKSOURCE_PATH);
        r |= json_put(o, "kernel", kernel_json());
        r |= put_read(o, absent, "hostname", gethostname(host, sizeof(host)) == 0 ? host : NULL, "gethostname failed");
        r |= json_put(o, "absent", absent);
        if (r)
                return NULL;
        return json_object_get(o);
}

/* ---- the build ----------------------------------------------------------------------- */

typedef struct BuildId {
        char hex[2 * BUILD_ID_MAX + 1];
} BuildId;

/* The main program's NT_GNU_BUILD_ID note: the first object
 * dl_iterate_phdr() reports is the executable. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *userdata) {
        BuildId *id = userdata;

        (void) size;
        for (unsigned i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                const uint8_t *p = (const uint8_t *) (info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

                if (ph->p_type != PT_NOTE)
                        continue;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *) (const void *) p;
                        const uint8_t *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3U) & ~3U);

                        if (desc + n->n_descsz > end)
                                break;
                        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                            n->n_descsz > 0 && n->n_descsz <= BUILD_ID_MAX) {
                                for (unsigned k = 0; k < n->n_descsz; k++)
                                        snprintf(id->hex + 2 * k, 3, "%02x", desc[k]);
                                return 1;
                        }
                        p = desc + ((n->n_descsz + 3U) & ~3U);
                }
        }
        return 1; /* the executable only */
}

struct json_object *ctl_build_to_json(void) {
        struct json_object *o = json_object_new_object(), *absent = json_object_new_object();
        BuildId id = { "" };
        int r = 0;

        if (!o || !absent) {
                json_object_put(o);
                json_object_put(absent);
                return NULL;
        }
        dl_iterate_phdr(find_build_id, &id);
        r |= json_put(o, "program", json_object_new_string("truerandomctl"));
        r |= json_put(o, "version", json_object_new_string(TRUERANDOM_VERSION));
        r |= put_read(o, absent, "build_id", id.hex[0] ? id.hex : NULL, "no GNU build-id note in the binary");
        r |= json_put(o, "absent", absent);
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}
