/* status.c - the daemon's state as one JSON object, for `truerandomctl
 * status`. The schema (version 1) is documented in truerandomctl(1); fields
 * are only ever added, never renamed. Reads counters only: no secrets. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE_WINDOW_USEC (5ULL * 1000000ULL)

uint64_t daemon_now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

const char *daemon_source_error(int error) {
        if (error == -EPERM || error == 0)
                return "no credit justified (virtio-rng, rng_quality 0)";
        return strerror(-error);
}

static void json_string(FILE *f, const char *s) {
        fputc('"', f);
        for (; s && *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

/* Credited bits per second over the last window of at least 5 s that ended
 * at a status request (the first window starts with the daemon). */
static double credit_rate(Daemon *d, SourceSlot *slot, uint64_t mbits, uint64_t now) {
        if (slot->rate_usec == 0) {
                slot->rate_usec = d->started_usec;
                slot->rate_mbits = 0;
        }
        if (now - slot->rate_usec >= RATE_WINDOW_USEC) {
                slot->rate_bits_per_s = (double)(mbits - slot->rate_mbits) / 1000.0 /
                                        ((double)(now - slot->rate_usec) / 1e6);
                slot->rate_usec = now;
                slot->rate_mbits = mbits;
        }
        return slot->rate_bits_per_s;
}

static void write_source(Daemon *d, FILE *f, ConfigSource i, uint64_t now) {
        const SourceConfig *sc = &d->config.source[i];
        SourceSlot *slot = &d->sources[i];
        CollectorStats st;

        fputs("{\"name\":", f);
        json_string(f, config_source_name(i));
        fprintf(f, ",\"enabled\":%s", sc->enable ? "true" : "false");
        if (!slot->collector) {
                /* kernel: mixed into CRNG seeds, never credited; others: off. */
                fprintf(f, ",\"credited\":false,\"state\":\"%s\"}",
                        sc->enable && i == CONFIG_SOURCE_KERNEL ? "mixed" : "disabled");
                return;
        }
        collector_get_stats(slot->collector, &st);
        fprintf(f, ",\"credited\":true,\"state\":\"%s\",\"running\":%s,\"credit_bits\":%u.%03u",
                source_state_to_string(st.state), st.running ? "true" : "false", st.credit_mbits / 1000,
                st.credit_mbits % 1000);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"credited_bits\":%" PRIu64
                   ",\"credited_bits_per_s\":%.1f",
                st.samples, st.blocks, st.credited_mbits / 1000, credit_rate(d, slot, st.credited_mbits, now));
        fprintf(f, ",\"failures\":{\"rct\":%" PRIu64 ",\"apt\":%" PRIu64 ",\"permanent_rct\":%" PRIu64
                   ",\"permanent_apt\":%" PRIu64 "}",
                st.fail_rct, st.fail_apt, st.permanent_rct, st.permanent_apt);
        fprintf(f, ",\"read_errors\":%" PRIu64 ",\"last_error\":", st.read_errors);
        if (st.last_error)
                json_string(f, daemon_source_error(st.last_error));
        else
                fputs("null", f);
        fputc('}', f);
}

int daemon_status_json(Daemon *d, char **ret_json) {
        uint64_t now = daemon_now_usec();
        char *buf = NULL;
        size_t size = 0;
        StoreStats st;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        store_get_stats(d->store, &st);
        fprintf(f, "{\"version\":1,\"uptime_s\":%.1f,\"ready\":%s,\"stopping\":%s", (double)(now - d->started_usec) / 1e6,
                d->ready ? "true" : "false", d->stopping ? "true" : "false");
        fputs(",\"sources\":[", f);
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                if (i > 0)
                        fputc(',', f);
                write_source(d, f, i, now);
        }
        fprintf(f, "],\"store\":{\"fill\":%zu,\"capacity\":%zu,\"blocks_in\":%" PRIu64 ",\"blocks_served\":%" PRIu64
                   ",\"blocks_seeded\":%" PRIu64 ",\"blocks_purged\":%" PRIu64 ",\"bytes_served\":%" PRIu64
                   ",\"credited_bits_in\":%" PRIu64 ",\"credited_bits_taken\":%" PRIu64 "}",
                st.fill, st.capacity, st.blocks_in, st.blocks_served, st.blocks_seeded, st.blocks_purged,
                st.bytes_served, st.credited_mbits_in / 1000, st.credited_mbits_taken / 1000);
        fputs(",\"devices\":[", f);
        for (size_t i = 0; i < d->n_devices; i++) {
                CuseDevStats ds;
                cusedev_get_stats(d->devices[i].dev, &ds);
                if (i > 0)
                        fputc(',', f);
                fputs("{\"name\":", f);
                json_string(f, cusedev_name(d->devices[i].dev));
                fprintf(f, ",\"kind\":\"%s\",\"up\":%s,\"open_files\":%u,\"waiting\":%u,\"waiting_uids\":%u"
                           ",\"reads\":%" PRIu64 ",\"bytes_served\":%" PRIu64 ",\"eagain\":%" PRIu64
                           ",\"interrupted\":%" PRIu64 "}",
                        cusedev_kind_to_string(ds.kind), ds.up ? "true" : "false", ds.open_files, ds.parked,
                        ds.parked_uids, ds.reads, ds.bytes_served, ds.eagain, ds.interrupted);
        }
        fprintf(f, "],\"crng\":{\"seeded\":%s,\"generation\":%" PRIu64 ",\"reseeds\":%" PRIu64 ",\"seed_age_s\":",
                crng_is_seeded(d->crng) ? "true" : "false", crng_generation(d->crng), d->reseeds);
        if (d->last_reseed_usec)
                fprintf(f, "%.1f", (double)(now - d->last_reseed_usec) / 1e6);
        else
                fputs("null", f);
        fputs("}}", f);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret_json = buf;
        return 0;
}
