/* identity.c - the machine and sampler an assessment holds for (see
 * identity.h). Flow: daemon -> [identity] -> assessment. */
#include "identity.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "config-build.h"
#include "util/cleanup.h"
#include "util/json-util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_CPUID 1
#endif

/* ---- the fields ----------------------------------------------------------- */

typedef enum FieldType {
        FIELD_STRING,   /* char[size] */
        FIELD_UNSIGNED, /* unsigned */
        FIELD_U64,      /* uint64_t */
} FieldType;

typedef struct Field {
        const char *name;
        FieldType type;
        size_t offset, size;
} Field;

#define STR(f) { #f, FIELD_STRING, offsetof(Identity, f), sizeof(((Identity *) NULL)->f) }
#define UNS(f) { #f, FIELD_UNSIGNED, offsetof(Identity, f), sizeof(unsigned) }
#define U64(f) { #f, FIELD_U64, offsetof(Identity, f), sizeof(uint64_t) }

static const Field fields[] = {
        STR(cpu_vendor), UNS(cpu_family), UNS(cpu_model), STR(cpu_name), STR(hypervisor), STR(clocksource),
        STR(kernel), STR(version), STR(source), UNS(buffer_kib), UNS(accesses), STR(path), U64(file_size),
        U64(file_mtime_ns),
};

static void *at(const Identity *id, const Field *f) {
        return (uint8_t *) id + f->offset;
}

/* ---- reading the machine ------------------------------------------------------- */

/* Printable ASCII without surrounding blanks, cut to size. */
static void set_text(char *dst, size_t size, const char *src) {
        size_t n = 0;

        while (*src && isspace((unsigned char) *src))
                src++;
        for (; *src && n + 1 < size; src++)
                dst[n++] = (unsigned char) *src >= 0x20 && (unsigned char) *src < 0x7f ? *src : '?';
        while (n > 0 && isspace((unsigned char) dst[n - 1]))
                n--;
        dst[n] = '\0';
}

/* The first line of a small file, or false. */
static bool read_line(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");
        bool ok;

        if (!f)
                return false;
        ok = fgets(buf, (int) size, f) != NULL;
        fclose(f);
        if (ok)
                buf[strcspn(buf, "\n")] = '\0';
        return ok && *buf;
}

#ifdef HAVE_CPUID
static void read_cpuid(Identity *id) {
        unsigned a, b, c, d, family, model;
        char text[49];

        __cpuid(0, a, b, c, d);
        memcpy(text, &b, 4);
        memcpy(text + 4, &d, 4);
        memcpy(text + 8, &c, 4);
        text[12] = '\0';
        set_text(id->cpu_vendor, sizeof(id->cpu_vendor), text);

        /* Family and model as the kernel computes them (x86_family(),
         * x86_model()). */
        __cpuid(1, a, b, c, d);
        family = (a >> 8) & 0xf;
        model = (a >> 4) & 0xf;
        if (family == 0xf)
                family += (a >> 20) & 0xff;
        if (family >= 0x6)
                model += ((a >> 16) & 0xf) << 4;
        id->cpu_family = family;
        id->cpu_model = model;

        /* Bit 31 of ECX: a hypervisor runs us and answers leaf 0x40000000. */
        if (c & (1U << 31)) {
                unsigned regs[3];

                __cpuid(0x40000000, a, regs[0], regs[1], regs[2]);
                memcpy(text, regs, 12);
                text[12] = '\0';
                set_text(id->hypervisor, sizeof(id->hypervisor), text);
                if (!*id->hypervisor)
                        snprintf(id->hypervisor, sizeof(id->hypervisor), "unnamed");
        }

        if ((unsigned) __get_cpuid_max(0x80000000U, NULL) >= 0x80000004U) {
                unsigned w[12];

                for (unsigned leaf = 0; leaf < 3; leaf++)
                        __cpuid(0x80000002U + leaf, w[leaf * 4], w[leaf * 4 + 1], w[leaf * 4 + 2], w[leaf * 4 + 3]);
                memcpy(text, w, 48);
                text[48] = '\0';
                set_text(id->cpu_name, sizeof(id->cpu_name), text);
        }
}
#endif

/* Elsewhere (or where CPUID told nothing): /proc/cpuinfo's first processor,
 * x86 and arm64 names alike. */
static void read_cpuinfo(Identity *id) {
        FILE *f = fopen("/proc/cpuinfo", "re");
        char line[512];

        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                char *colon = strchr(line, ':'), *key = line, *value;
                size_t k;

                if (line[0] == '\n' && *id->cpu_vendor)
                        break;
                if (!colon)
                        continue;
                *colon = '\0';
                value = colon + 1;
                value[strcspn(value, "\n")] = '\0';
                k = strlen(key);
                while (k > 0 && isspace((unsigned char) key[k - 1]))
                        key[--k] = '\0';
                if (!*id->cpu_vendor && (strcmp(key, "vendor_id") == 0 || strcmp(key, "CPU implementer") == 0))
                        set_text(id->cpu_vendor, sizeof(id->cpu_vendor), value);
                else if (strcmp(key, "cpu family") == 0 || strcmp(key, "CPU architecture") == 0)
                        id->cpu_family = (unsigned) strtoul(value, NULL, 0);
                else if (strcmp(key, "model") == 0 || strcmp(key, "CPU part") == 0)
                        id->cpu_model = (unsigned) strtoul(value, NULL, 0);
                else if (!*id->cpu_name && strcmp(key, "model name") == 0)
                        set_text(id->cpu_name, sizeof(id->cpu_name), value);
        }
        fclose(f);
}

void identity_read_machine(const char *sysfs, Identity *ret) {
        Identity id = { 0 };
        struct utsname u;
        char path[PATH_MAX], line[256];

        if (!sysfs)
                sysfs = "/sys";
#ifdef HAVE_CPUID
        read_cpuid(&id);
#endif
        if (!*id.cpu_vendor)
                read_cpuinfo(&id);
        snprintf(path, sizeof(path), "%s/hypervisor/type", sysfs);
        if (!*id.hypervisor && read_line(path, line, sizeof(line)))
                set_text(id.hypervisor, sizeof(id.hypervisor), line);
        snprintf(path, sizeof(path), "%s/devices/system/clocksource/clocksource0/current_clocksource", sysfs);
        if (read_line(path, line, sizeof(line)))
                set_text(id.clocksource, sizeof(id.clocksource), line);
        if (uname(&u) == 0)
                set_text(id.kernel, sizeof(id.kernel), u.release);
        set_text(id.version, sizeof(id.version), TRUERANDOM_VERSION);

        if (!*id.cpu_vendor)
                snprintf(id.cpu_vendor, sizeof(id.cpu_vendor), "unknown");
        if (!*id.cpu_name)
                snprintf(id.cpu_name, sizeof(id.cpu_name), "unknown");
        if (!*id.hypervisor)
                snprintf(id.hypervisor, sizeof(id.hypervisor), "none");
        if (!*id.clocksource)
                snprintf(id.clocksource, sizeof(id.clocksource), "unknown");
        if (!*id.kernel)
                snprintf(id.kernel, sizeof(id.kernel), "unknown");
        *ret = id;
}

void identity_set_sampler(Identity *id, const char *name, const SourceParams *p) {
        struct stat st;

        snprintf(id->source, sizeof(id->source), "%s", name);
        id->buffer_kib = id->accesses = 0;
        id->path[0] = '\0';
        id->file_size = id->file_mtime_ns = 0;
        if (strcmp(name, "jitter") == 0) {
                id->buffer_kib = (unsigned) (p->jitter_buffer / 1024);
                id->accesses = p->jitter_accesses;
        } else if (p->path) {
                snprintf(id->path, sizeof(id->path), "%s", p->path);
                /* A FIFO's mtime moves with every write: only a regular
                 * file's size and mtime say that it is the same capture. */
                if (stat(p->path, &st) == 0 && S_ISREG(st.st_mode)) {
                        id->file_size = (uint64_t) st.st_size;
                        id->file_mtime_ns = (uint64_t) st.st_mtim.tv_sec * 1000000000U + (uint64_t) st.st_mtim.tv_nsec;
                }
        }
}

/* ---- comparing ------------------------------------------------------------------ */

static void field_text(const Identity *id, const Field *f, char *buf, size_t size) {
        switch (f->type) {
        case FIELD_STRING:
                snprintf(buf, size, "%s", (const char *) at(id, f));
                break;
        case FIELD_UNSIGNED:
                snprintf(buf, size, "%u", *(const unsigned *) at(id, f));
                break;
        case FIELD_U64:
                snprintf(buf, size, "%llu", (unsigned long long) *(const uint64_t *) at(id, f));
                break;
        }
}

bool identity_equal(const Identity *stored, const Identity *now, char *why, size_t why_size) {
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                const Field *f = &fields[i];
                bool same = f->type == FIELD_STRING ? strcmp(at(stored, f), at(now, f)) == 0
                                                    : memcmp(at(stored, f), at(now, f), f->size) == 0;
                char a[96], b[96];

                if (same)
                        continue;
                if (why) {
                        field_text(stored, f, a, sizeof(a));
                        field_text(now, f, b, sizeof(b));
                        snprintf(why, why_size, "%s was %s, now %s", f->name, *a ? a : "empty", *b ? b : "empty");
                }
                return false;
        }
        return true;
}

/* ---- JSON ------------------------------------------------------------------------ */

struct json_object *identity_to_json(const Identity *id) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();

        for (size_t i = 0; o && i < sizeof(fields) / sizeof(fields[0]); i++) {
                const Field *f = &fields[i];
                struct json_object *v = NULL;

                switch (f->type) {
                case FIELD_STRING:
                        v = json_object_new_string(at(id, f));
                        break;
                case FIELD_UNSIGNED:
                        v = json_object_new_uint64(*(const unsigned *) at(id, f));
                        break;
                case FIELD_U64:
                        v = json_object_new_uint64(*(const uint64_t *) at(id, f));
                        break;
                }
                if (json_put(o, f->name, v) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

int identity_from_json(const struct json_object *o, Identity *ret) {
        Identity id = { 0 };

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                const Field *f = &fields[i];
                struct json_object *v;
                const char *s;
                uint64_t u;

                if (!json_object_object_get_ex(o, f->name, &v))
                        return -EBADMSG;
                if (f->type == FIELD_STRING) {
                        if (!json_object_is_type(v, json_type_string))
                                return -EBADMSG;
                        s = json_object_get_string(v);
                        if ((size_t) json_object_get_string_len(v) >= f->size || strlen(s) != (size_t) json_object_get_string_len(v))
                                return -EBADMSG;
                        memcpy(at(&id, f), s, strlen(s) + 1);
                        continue;
                }
                /* json-c reads "-1" as int64 -1 and big numbers as uint64:
                 * only a non-negative integer that fits is taken. */
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                        return -EBADMSG;
                u = json_object_get_uint64(v);
                if (f->type == FIELD_UNSIGNED) {
                        if (u > UINT_MAX)
                                return -EBADMSG;
                        *(unsigned *) at(&id, f) = (unsigned) u;
                } else
                        *(uint64_t *) at(&id, f) = u;
        }
        *ret = id;
        return 0;
}
