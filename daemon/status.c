/* status.c - the daemon's state as one JSON object, for `truerandomctl
 * status`, built with json-c. The schema is documented in truerandomctl(1)
 * (version: CTL_STATUS_VERSION); fields are only ever added, never renamed.
 *
 * Invariant: it reads and never acts (no pump, no log, no collector
 * started), and it shows one moment: the collectors' stats are read once,
 * now, and whether /dev/truerandom serves is judged on those, so a stop a
 * source counted shows with /dev/truerandom not serving even before the
 * loop's turn took it in. Reads counters only: no secrets. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config-build.h"
#include "config/sourceconf.h"
#include "pool/hwrng.h"
#include "proto/ctlstatus.h"
#include "util/json-util.h"

#include "status-json.h"

/* The moment a status shows. */
typedef struct Moment {
        usec_t now;
        CollectorStats stats[_CONFIG_SOURCE_MAX]; /* of the sources with a collector */
        bool trng_serving;
} Moment;

static struct json_object *source_json(Daemon *d, ConfigSource i, const Moment *m) {
        const SourceConfig *sc = &d->config.source[i];
        SourceSlot *slot = &d->sources[i];
        struct json_object *o = json_object_new_object(), *f;
        const CollectorStats *st = &m->stats[i];
        StoreSourceStats ss;
        usec_t now = m->now;
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "name", json_object_new_string(config_source_name(i)));
        ADD(o, "enabled", json_object_new_boolean(sc->enable));
        if (!slot->collector) {
                /* kernel: mixed into CRNG seeds, never credited; others:
                 * off. */
                ADD(o, "credited", json_object_new_boolean(false));
                if (sc->enable && sourceconf_ops(i)->credit == SOURCE_CREDIT_NEVER)
                        ADD(o, "state", json_object_new_string("mixed"));
                else
                        ADD(o, "state", json_object_new_string("disabled"));
                goto done;
        }
        /* The figures trng_serving is judged on in this moment. */
        ADD(o, "credited", json_object_new_boolean(true));
        ADD(o, "state", json_object_new_string(source_state_to_string(st->state)));
        ADD(o, "running", json_object_new_boolean(st->running));
        /* In force: the last window's grant (0 before the first verdict, or
         * refused). How it is set: "auto" (each window's half estimate, at
         * most credit_cap_bits) or "explicit" (a window needs twice
         * credit_cap_bits); the most a window may get is as configured, or
         * the source's own limit (an hwrng's rng_quality) where lower. */
        ADD(o, "credit_bits", json_new_fixed(st->gate.credit_mbits / 1000.0, 3));
        ADD(o, "credit_origin", json_object_new_string(sc->credit_auto ? "auto" : "explicit"));
        ADD(o, "credit_cap_bits", json_new_fixed(gate_policy_most(&st->gate.policy) / 1000.0, 3));
        ADD(o, "samples", json_object_new_uint64(st->samples));
        ADD(o, "blocks", json_object_new_uint64(st->blocks));
        ADD(o, "credited_bits", json_object_new_uint64(st->credited_mbits / 1000));
        ADD(o, "credited_bits_per_s", json_new_fixed(rate_window_bits_per_s(&slot->rate, st->credited_mbits, now), 1));
        /* Its blocks in the store, and served from any device (schema 7):
         * an auditor's per-source account. */
        store_get_source_stats(d->store, i, &ss);
        ADD(o, "store_fill", json_object_new_uint64(ss.fill));
        ADD(o, "blocks_served", json_object_new_uint64(ss.blocks_served));
        ADD(o, "bytes_served", json_object_new_uint64(ss.bytes_served));
        f = json_object_new_object();
        if (f) {
                ADD(f, "rct", json_object_new_uint64(st->fail_rct));
                ADD(f, "apt", json_object_new_uint64(st->fail_apt));
                ADD(f, "permanent_rct", json_object_new_uint64(st->permanent_rct));
                ADD(f, "permanent_apt", json_object_new_uint64(st->permanent_apt));
        }
        ADD(o, "failures", f);
        ADD(o, "induce", status_induce_json(&st->induce));
        ADD(o, "read_errors", json_object_new_uint64(st->read_errors));
        /* null is a value here: "no error yet", "no self-test", "never ran". */
        if (json_put_nullable(o, "last_error",
                                   st->last_error ? json_object_new_string(daemon_source_error(st->last_error)) : NULL) < 0 ||
            json_put_nullable(o, "selftest", status_selftest_json(&st->selftest)) < 0 ||
            json_put_nullable(o, "gate", status_gate_json(st)) < 0)
                r = -ENOMEM;
done:
        return finish(o, r);
}

static struct json_object *store_json(Daemon *d) {
        struct json_object *o = json_object_new_object();
        StoreStats st;
        int r = 0;

        if (!o)
                return NULL;
        store_get_stats(d->store, &st);
        ADD(o, "fill", json_object_new_uint64(st.fill));
        ADD(o, "capacity", json_object_new_uint64(st.capacity));
        ADD(o, "blocks_in", json_object_new_uint64(st.blocks_in));
        ADD(o, "blocks_served", json_object_new_uint64(st.blocks_served));
        ADD(o, "blocks_seeded", json_object_new_uint64(st.blocks_seeded));
        ADD(o, "blocks_purged", json_object_new_uint64(st.blocks_purged));
        /* Of them: erased for a source whose own device's readers waited. */
        ADD(o, "blocks_displaced", json_object_new_uint64(st.blocks_displaced));
        ADD(o, "bytes_served", json_object_new_uint64(st.bytes_served));
        ADD(o, "credited_bits_in", json_object_new_uint64(st.credited_mbits_in / 1000));
        ADD(o, "credited_bits_taken", json_object_new_uint64(st.credited_mbits_taken / 1000));
        return finish(o, r);
}

/* The EGD socket's figures; NULL (null in the JSON) when there is none. */
static struct json_object *egd_json(Daemon *d) {
        struct json_object *o;
        EgdStats st;
        int r = 0;

        if (!d->egd)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        egd_get_stats(d->egd, &st);
        ADD(o, "socket", json_object_new_string(egd_path(d->egd)));
        ADD(o, "connections", json_object_new_uint64(st.connections));
        ADD(o, "waiting", json_object_new_uint64(st.waiting));
        ADD(o, "waiting_uids", json_object_new_uint64(st.waiting_uids));
        ADD(o, "accepted", json_object_new_uint64(st.accepted));
        ADD(o, "refused", json_object_new_uint64(st.refused));
        ADD(o, "dropped", json_object_new_uint64(st.dropped));
        ADD(o, "requests", json_object_new_uint64(st.requests));
        ADD(o, "bytes_served", json_object_new_uint64(st.bytes_served));
        ADD(o, "bytes_written", json_object_new_uint64(st.bytes_written));
        return finish(o, r);
}

static struct json_object *device_json(DeviceSlot *slot) {
        struct json_object *o = json_object_new_object();
        CuseDevStats ds;
        int r = 0;

        if (!o)
                return NULL;
        cusedev_get_stats(slot->dev, &ds);
        ADD(o, "name", json_object_new_string(cusedev_name(slot->dev)));
        ADD(o, "kind", json_object_new_string(cusedev_kind_to_string(ds.kind)));
        /* A source's own device (schema 7): whose blocks alone it serves. */
        if (json_put_nullable(o, "source", ds.per_source ? json_object_new_string(config_source_name(ds.source))
                                                         : NULL) < 0)
                r = -ENOMEM;
        ADD(o, "up", json_object_new_boolean(ds.up));
        /* Whether the daemon may read and write its ioctl callers' memory
         * (schema 9). */
        ADD(o, "unrestricted_ioctl", json_object_new_boolean(ds.unrestricted_ioctl));
        ADD(o, "open_files", json_object_new_uint64(ds.open_files));
        ADD(o, "waiting", json_object_new_uint64(ds.parked));
        ADD(o, "waiting_uids", json_object_new_uint64(ds.parked_uids));
        ADD(o, "reads", json_object_new_uint64(ds.reads));
        ADD(o, "bytes_served", json_object_new_uint64(ds.bytes_served));
        ADD(o, "eagain", json_object_new_uint64(ds.eagain));
        ADD(o, "interrupted", json_object_new_uint64(ds.interrupted));
        return finish(o, r);
}

/* A past CLOCK_MONOTONIC time as an age in seconds, or JSON null (0: never). */
static struct json_object *age(usec_t then, usec_t now) {
        return then ? json_new_fixed((double) (now - then) / 1e6, 1) : NULL;
}

/* One trigger of the seeding policy: how often it asked, how often a
 * reseed served it. */
static struct json_object *trigger_json(const SeederStats *st, SeedTrigger t) {
        struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "name", json_object_new_string(seed_trigger_to_string(t)));
        ADD(o, "requests", json_object_new_uint64(st->requests[t]));
        ADD(o, "reseeds", json_object_new_uint64(st->reseeds[t]));
        return finish(o, r);
}

static struct json_object *crng_json(Daemon *d, usec_t now) {
        struct json_object *o = json_object_new_object(), *a;
        SeederStats st;
        int r = 0;

        if (!o)
                return NULL;
        seeder_get_stats(d->seeder, &st);
        ADD(o, "seeded", json_object_new_boolean(crng_is_seeded(d->crng)));
        ADD(o, "generation", json_object_new_uint64(crng_generation(d->crng)));
        ADD(o, "reseeds", json_object_new_uint64(st.seeds));
        if (json_put_nullable(o, "seed_age_s", age(st.last_reseed_usec, now)) < 0)
                r = -ENOMEM;
        ADD(o, "reseed_pending", json_object_new_boolean(st.pending));
        ADD(o, "vm_generation_changes", json_object_new_uint64(st.vm_generation_changes));
        ADD(o, "vm_blocks_purged", json_object_new_uint64(st.vm_blocks_purged));
        ADD(o, "rekeys", json_object_new_uint64(st.rekeys));
        a = json_object_new_array();
        for (SeedTrigger t = 0; a && t < _SEED_TRIGGER_MAX; t++)
                append(a, trigger_json(&st, t), &r);
        ADD(o, "triggers", a);
        return finish(o, r);
}

static struct json_object *reload_json(Daemon *d, usec_t now) {
        struct json_object *o = json_object_new_object();
        bool never = d->last_reload_usec == 0;
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "count", json_object_new_uint64(d->reloads));
        ADD(o, "result", json_object_new_string(never ? "none" : d->last_reload_ok ? "ok" : "refused"));
        /* null: no reload yet, or the last one was taken. */
        if (json_put_nullable(o, "age_s", never ? NULL : json_new_fixed((double) (now - d->last_reload_usec) / 1e6, 1)) < 0 ||
            json_put_nullable(o, "error", never || d->last_reload_ok ? NULL
                                                                         : json_object_new_string(d->last_reload_error)) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

static struct json_object *vm_generation_json(Daemon *d, usec_t now) {
        struct json_object *o = json_object_new_object();
        char detail[160];
        VmgenStats st;
        int r = 0;

        if (!o)
                return NULL;
        vmgen_get_stats(d->vmgen, &st);
        ADD(o, "detection", json_object_new_string(vmgen_detection_to_string(st.detection)));
        ADD(o, "detail", json_object_new_string(vmgen_describe(&st, detail, sizeof(detail))));
        ADD(o, "kernel_log", json_object_new_boolean(st.channel[VMGEN_CHANNEL_KERNEL_LOG]));
        ADD(o, "uevents", json_object_new_boolean(st.channel[VMGEN_CHANNEL_UEVENT]));
        /* How many changes were acted on is the seeder's count (crng). */
        ADD(o, "lost_records", json_object_new_uint64(st.maybe));
        /* null is a value here: no device, never a change. */
        if (json_put_nullable(o, "device", st.device[0] ? json_object_new_string(st.device) : NULL) < 0 ||
            json_put_nullable(o, "last_change_age_s", age(st.last_usec, now)) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

/* What the kernel seeder reported; NULL (null) before its first feed. */
static struct json_object *kernel_feed_json(Daemon *d, usec_t now) {
        const KernelFeed *k = &d->kernel_feed;
        struct json_object *o;
        int r = 0;

        if (k->feeds == 0)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        ADD(o, "feeds", json_object_new_uint64(k->feeds));
        ADD(o, "last_bits", json_object_new_uint64(k->last_bits));
        ADD(o, "last_reason", json_object_new_string(k->last_reason));
        if (json_put_nullable(o, "last_age_s", age(k->last_usec, now)) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

/* One device of rng_available: tpm is its TPM's number, null for others. */
static struct json_object *hwrng_device_json(const HwrngDevice *dev) {
        struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "name", json_object_new_string(dev->name));
        ADD(o, "current", json_object_new_boolean(dev->current));
        if (json_put_nullable(o, "tpm", dev->tpm >= 0 ? json_object_new_int(dev->tpm) : NULL) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

/* Every hardware RNG the kernel's hw_random core lists (pool/hwrng.h),
 * read now: at most four small sysfs files, each in one read(), and only
 * when a status is asked for. The daemon reads the current one through
 * /dev/hwrng (the hwrng source) and never writes rng_current: that choice
 * is global. No core is no error: core false, the rest empty. */
static struct json_object *hwrng_json(Daemon *d) {
        struct json_object *o = json_object_new_object(), *a;
        HwrngList l = { .quality = -1, .selected = -1 };
        char dir[PATH_MAX];
        int r = 0, rl;

        if (!o)
                return NULL;
        snprintf(dir, sizeof(dir), "%s" HWRNG_SYSFS_SUBDIR, d->hooks.sysfs_root ? d->hooks.sysfs_root : "/sys");
        rl = hwrng_list_read(dir, &l);
        ADD(o, "core", json_object_new_boolean(rl != -ENOENT));
        if (json_put_nullable(o, "error", rl < 0 && rl != -ENOENT ? json_object_new_string(strerror(-rl)) : NULL) < 0 ||
            json_put_nullable(o, "current", l.current[0] ? json_object_new_string(l.current) : NULL) < 0 ||
            json_put_nullable(o, "quality", l.quality >= 0 ? json_object_new_int(l.quality) : NULL) < 0 ||
            json_put_nullable(o, "selected", l.selected >= 0 ? json_object_new_boolean(l.selected) : NULL) < 0)
                r = -ENOMEM;
        ADD(o, "truncated", json_object_new_boolean(l.truncated));
        a = json_object_new_array();
        for (size_t i = 0; a && i < l.n; i++)
                append(a, hwrng_device_json(&l.devices[i]), &r);
        ADD(o, "devices", a);
        return finish(o, r);
}

static struct json_object *resume_json(Daemon *d, usec_t now) {
        struct json_object *o = json_object_new_object();
        ClockJumpStats st;
        int r = 0;

        if (!o)
                return NULL;
        clockjump_get_stats(d->clockjump, &st);
        ADD(o, "jumps", json_object_new_uint64(st.jumps));
        ADD(o, "slept_s", json_new_fixed((double) st.slept_usec / 1e6, 1));
        if (json_put_nullable(o, "last_age_s", age(st.last_jump_usec, now)) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

static int status_build(Daemon *d, struct json_object *o, const Moment *m) {
        usec_t now = m->now;
        struct json_object *a;
        int r = 0;

        ADD(o, "version", json_object_new_int(CTL_STATUS_VERSION));
        ADD(o, "daemon_version", json_object_new_string(TRUERANDOM_VERSION));
        ADD(o, "uptime_s", json_new_fixed((double) (now - d->started_usec) / 1e6, 1));
        ADD(o, "ready", json_object_new_boolean(d->ready));
        ADD(o, "stopping", json_object_new_boolean(d->stopping));
        ADD(o, "trng_serving", json_object_new_boolean(m->trng_serving && !d->stopping));
        ADD(o, "min_healthy", json_object_new_uint64(d->config.min_healthy));
        ADD(o, "reload", reload_json(d, now));
        a = json_object_new_array();
        for (ConfigSource i = 0; a && i < _CONFIG_SOURCE_MAX; i++)
                append(a, source_json(d, i, m), &r);
        ADD(o, "sources", a);
        ADD(o, "store", store_json(d));
        a = json_object_new_array();
        for (size_t i = 0; a && i < d->n_devices; i++)
                append(a, device_json(&d->devices[i]), &r);
        ADD(o, "devices", a);
        if (json_put_nullable(o, "egd", egd_json(d)) < 0 ||
            json_put_nullable(o, "kernel_feed", kernel_feed_json(d, now)) < 0)
                r = -ENOMEM;
        ADD(o, "hwrng", hwrng_json(d));
        ADD(o, "crng", crng_json(d, now));
        ADD(o, "vm_generation", vm_generation_json(d, now));
        ADD(o, "resume", resume_json(d, now));
        return r;
}

int daemon_status_json(Daemon *d, char **ret_json) {
        struct json_object *o = json_object_new_object();
        Moment m = { .now = now_usec(CLOCK_MONOTONIC) };
        const char *text;
        char *copy;
        int r;

        if (!o)
                return -ENOMEM;
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (d->sources[i].collector)
                        collector_get_stats(d->sources[i].collector, &m.stats[i]);
        m.trng_serving = daemon_sources_serving(d, m.stats);
        r = status_build(d, o, &m);
        text = r < 0 ? NULL : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        copy = text ? strdup(text) : NULL;
        json_object_put(o);
        if (!copy)
                return -ENOMEM;
        *ret_json = copy;
        return 0;
}
