/* fuzz-config.c - config_load() on arbitrary files.
 *
 * The input is the file, written to a memfd and loaded by its /proc path.
 * Checks: an error leaves the caller's Config untouched and says
 * "PATH:LINE: reason" (a line the file has) or "PATH: reason"; an accepted
 * file satisfies every rule config.h documents; and it round-trips: the
 * Config written back as INI loads to the same Config. config_done() runs
 * on every loaded Config, so LeakSanitizer sees every string.
 * Flow: libFuzzer -> [harness] -> config (libinih). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/config.h"
#include "fuzz.h"

static int input_fd = -1, copy_fd = -1;
static char input_path[64], copy_path[64];

static int open_memfd(const char *name, char path[static 64]) {
        int fd = memfd_create(name, MFD_CLOEXEC);

        if (fd < 0)
                abort();
        snprintf(path, 64, "/proc/self/fd/%d", fd);
        return fd;
}

static void store(int fd, const void *data, size_t size) {
        if (ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size))
                abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        input_fd = open_memfd("fuzz-config", input_path);
        copy_fd = open_memfd("fuzz-config-copy", copy_path);
        return 0;
}

static bool str_eq(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool name_ok(const char *s) {
        size_t n = s ? strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") : 0;

        return n > 0 && n <= 64 && s[n] == '\0' && s[0] != '.' && s[0] != '-';
}

/* What config.h promises about any Config it hands out. */
static void check_valid(const Config *c) {
        const DeviceConfig *dev = c->device;

        FUZZ_CHECK(name_ok(dev[CONFIG_DEVICE_TRNG].name) && name_ok(dev[CONFIG_DEVICE_RANDOM].name) &&
                   name_ok(dev[CONFIG_DEVICE_URANDOM].name));
        FUZZ_CHECK(!dev[CONFIG_DEVICE_NULL].name || name_ok(dev[CONFIG_DEVICE_NULL].name));
        /* Every two devices that have a name have different ones. */
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                for (int j = i + 1; j < _CONFIG_DEVICE_MAX; j++)
                        FUZZ_CHECK(!dev[i].name || !dev[j].name || strcmp(dev[i].name, dev[j].name) != 0);
        FUZZ_CHECK(c->group && *c->group);
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                FUZZ_CHECK(dev[i].mode <= 0777);
        /* random_mode is one value for the drop-ins and the null device;
         * dropin one for both drop-ins. */
        FUZZ_CHECK(dev[CONFIG_DEVICE_RANDOM].mode == dev[CONFIG_DEVICE_URANDOM].mode &&
                   dev[CONFIG_DEVICE_RANDOM].mode == dev[CONFIG_DEVICE_NULL].mode);
        FUZZ_CHECK(dev[CONFIG_DEVICE_RANDOM].enable == dev[CONFIG_DEVICE_URANDOM].enable);
        FUZZ_CHECK(dev[CONFIG_DEVICE_TRNG].enable && dev[CONFIG_DEVICE_NULL].enable);
        FUZZ_CHECK(c->max_parked >= 9);
        FUZZ_CHECK(c->max_parked_per_uid == 0 || c->max_parked_per_uid <= c->max_parked / 9);
        FUZZ_CHECK(config_max_parked_per_uid(c) >= 1 && config_max_parked_per_uid(c) < c->max_parked);
        FUZZ_CHECK(c->max_open_per_uid >= 1);
        FUZZ_CHECK(c->min_reseed_interval_usec <= c->reseed_interval_usec);
        FUZZ_CHECK(c->min_reseed_interval_usec % USEC_PER_MSEC == 0 && c->reseed_interval_usec % USEC_PER_SEC == 0 &&
                   c->start_delay_usec % USEC_PER_MSEC == 0);
        FUZZ_CHECK(c->store_blocks >= 1 && c->low_water < c->store_blocks);
        FUZZ_CHECK(c->min_healthy >= 1 && c->min_healthy < _CONFIG_SOURCE_MAX);
        FUZZ_CHECK(c->reseed_interval_usec >= USEC_PER_SEC);
        FUZZ_CHECK(c->socket_path && c->socket_path[0] == '/');
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *s = &c->source[i];

                FUZZ_CHECK(s->credit_mbits <= 8000);
                FUZZ_CHECK(!s->credit_auto || (s->credit_mbits == 0 && s->credit_cap_mbits > 0 &&
                                               s->credit_cap_mbits <= 8000));
                FUZZ_CHECK(!s->params.path || s->params.path[0] == '/');
        }
        FUZZ_CHECK(!c->source[CONFIG_SOURCE_RDSEED].credit_auto && !c->source[CONFIG_SOURCE_HWRNG].credit_auto &&
                   !c->source[CONFIG_SOURCE_KERNEL].credit_auto);
        FUZZ_CHECK(c->assess_samples >= CONFIG_ASSESS_SAMPLES_MIN && c->assess_samples <= CONFIG_ASSESS_SAMPLES_MAX);
        FUZZ_CHECK(c->state_directory && c->state_directory[0] == '/');
        FUZZ_CHECK(c->source[CONFIG_SOURCE_KERNEL].credit_mbits == 0);
        FUZZ_CHECK(c->source[CONFIG_SOURCE_HWRNG].params.path);
        FUZZ_CHECK(c->source[CONFIG_SOURCE_JITTER].params.jitter_buffer % 1024 == 0);
        if (c->source[CONFIG_SOURCE_FILE].enable)
                FUZZ_CHECK(c->source[CONFIG_SOURCE_FILE].params.path &&
                           (c->source[CONFIG_SOURCE_FILE].credit_mbits > 0 ||
                            c->source[CONFIG_SOURCE_FILE].credit_auto));
        /* And what every row promises, whichever source it is. */
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceOps *ops = source_all[i];
                const SourceConfig *s = &c->source[i];

                FUZZ_CHECK(ops->credit == SOURCE_CREDIT_MEASURED || !s->credit_auto);
                FUZZ_CHECK(ops->credit != SOURCE_CREDIT_NEVER || s->credit_mbits == 0);
                FUZZ_CHECK(!s->enable || !ops->credit_required || s->credit_mbits > 0 || s->credit_auto);
                for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++)
                        if (ops->keys[k].type == SOURCE_KEY_PATH ||
                            (ops->keys[k].type == SOURCE_KEY_PATH_NONE && s->enable))
                                FUZZ_CHECK(s->params.path);
        }
}

static void check_equal(const Config *a, const Config *b) {
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                FUZZ_CHECK(str_eq(a->device[i].name, b->device[i].name) && a->device[i].mode == b->device[i].mode &&
                           a->device[i].enable == b->device[i].enable);
        FUZZ_CHECK(str_eq(a->group, b->group) && str_eq(a->socket_path, b->socket_path) &&
                   str_eq(a->state_directory, b->state_directory) && a->assess_samples == b->assess_samples);
        FUZZ_CHECK(a->max_parked == b->max_parked);
        FUZZ_CHECK(a->store_blocks == b->store_blocks && a->low_water == b->low_water &&
                   a->min_healthy == b->min_healthy && a->start_delay_usec == b->start_delay_usec &&
                   a->reseed_interval_usec == b->reseed_interval_usec);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *x = &a->source[i], *y = &b->source[i];

                FUZZ_CHECK(x->enable == y->enable && x->credit_mbits == y->credit_mbits &&
                           x->credit_auto == y->credit_auto && x->credit_cap_mbits == y->credit_cap_mbits &&
                           str_eq(x->params.path, y->params.path) && x->params.loop == y->params.loop &&
                           x->params.rate == y->params.rate && x->params.jitter_buffer == y->params.jitter_buffer &&
                           x->params.jitter_accesses == y->params.jitter_accesses);
        }
}

static const char *yn(bool b) {
        return b ? "yes" : "no";
}

/* [device] from its rows: each name, each mode key once, dropin. */
static void write_devices(FILE *out, const Config *c) {
        int dropin = -1;

        fprintf(out, "[device]\ngroup=%s\nmax_parked=%u\n", c->group, c->max_parked);
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++) {
                const ConfigDeviceRow *row = &config_devices[i];
                bool first = true;

                fprintf(out, "%s=%s\n", row->name_key, c->device[i].name ? c->device[i].name : "none");
                for (int j = 0; j < i; j++)
                        first = first && strcmp(config_devices[j].mode_key, row->mode_key) != 0;
                if (first)
                        fprintf(out, "%s=%04o\n", row->mode_key, (unsigned) c->device[i].mode);
                if (row->dropin && dropin < 0)
                        dropin = i;
        }
        if (dropin >= 0)
                fprintf(out, "dropin=%s\n", yn(c->device[dropin].enable));
}

/* [source.NAME] from source s's row: enable, credit as the row allows
 * (with its cap when auto), then its keys of its own. */
static void write_source(FILE *out, ConfigSource s, const SourceConfig *sc) {
        const SourceOps *ops = source_all[s];

        fprintf(out, "[source.%s]\nenable=%s\n", ops->name, yn(sc->enable));
        if (sc->credit_auto)
                fprintf(out, "credit=auto\ncredit_cap=%u.%03u\n", sc->credit_cap_mbits / 1000,
                        sc->credit_cap_mbits % 1000);
        else if (ops->credit != SOURCE_CREDIT_NEVER)
                fprintf(out, "credit=%u.%03u\n", sc->credit_mbits / 1000, sc->credit_mbits % 1000);
        for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++) {
                const SourceKey *key = &ops->keys[k];
                const uint8_t *field = (const uint8_t *) &sc->params + key->offset;
                const char *path;

                fprintf(out, "%s=", key->name);
                switch (key->type) {
                case SOURCE_KEY_BOOL:
                        fprintf(out, "%s\n", yn(*(const bool *) field));
                        break;
                case SOURCE_KEY_UNSIGNED:
                        fprintf(out, "%u\n", *(const unsigned *) field);
                        break;
                case SOURCE_KEY_U64:
                        fprintf(out, "%llu\n", (unsigned long long) *(const uint64_t *) field);
                        break;
                case SOURCE_KEY_KIB:
                        fprintf(out, "%zu\n", *(const size_t *) field / 1024);
                        break;
                case SOURCE_KEY_PATH:
                case SOURCE_KEY_PATH_NONE:
                        memcpy(&path, field, sizeof(path));
                        fprintf(out, "%s\n", path ? path : "none");
                        break;
                }
        }
}

/* The Config as a file that sets every key. */
static char *write_back(const Config *c, size_t *ret_size) {
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        FUZZ_CHECK(out);
        write_devices(out, c);
        fprintf(out, "[pool]\nstore_blocks=%u\nlow_water=%u\nmin_healthy=%u\nstart_delay_ms=%llu\n",
                c->store_blocks, c->low_water, c->min_healthy,
                (unsigned long long) (c->start_delay_usec / USEC_PER_MSEC));
        fprintf(out, "[crng]\nreseed_interval=%llu\n[control]\nsocket=%s\n",
                (unsigned long long) (c->reseed_interval_usec / USEC_PER_SEC), c->socket_path);
        fprintf(out, "[assessment]\nsamples=%u\nstate_directory=%s\n", c->assess_samples, c->state_directory);
        for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++)
                write_source(out, s, &c->source[s]);
        FUZZ_CHECK(fclose(out) == 0);
        *ret_size = size;
        return text;
}

static unsigned count_lines(const uint8_t *data, size_t size) {
        unsigned n = 0;

        for (size_t i = 0; i < size; i++)
                n += data[i] == '\n';
        return n + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Config c, untouched, again;
        char *error = NULL, *text;
        size_t text_size, plen = strlen(input_path);
        int r;

        store(input_fd, data, size);
        memset(&c, 0x5a, sizeof(c));
        untouched = c;
        r = config_load(input_path, false, &c, &error);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
                FUZZ_CHECK(memcmp(&c, &untouched, sizeof(c)) == 0);
                FUZZ_CHECK(error && strncmp(error, input_path, plen) == 0 && error[plen] == ':');
                if (error[plen + 1] != ' ') {
                        char *end;
                        unsigned long line = strtoul(error + plen + 1, &end, 10);

                        FUZZ_CHECK(end != error + plen + 1 && end[0] == ':' && end[1] == ' ');
                        FUZZ_CHECK(line >= 1 && line <= count_lines(data, size));
                }
                free(error);
                return 0;
        }
        FUZZ_CHECK(r == 0 && !error);
        check_valid(&c);

        /* Every accepted value survives being written back. A string value
         * goes back as "key=value", no longer than the line it came from,
         * so the copy cannot trip the line length limit. */
        text = write_back(&c, &text_size);
        store(copy_fd, text, text_size);
        r = config_load(copy_path, false, &again, &error);
        if (r < 0)
                fprintf(stderr, "written back:\n%s\nrefused: %s\n", text, error ? error : "?");
        FUZZ_CHECK(r == 0);
        check_equal(&c, &again);
        free(text);
        config_done(&again);
        config_done(&c);
        return 0;
}
