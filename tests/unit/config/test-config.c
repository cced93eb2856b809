/* test-config.c - truerandomd.conf as an operator meets it: the defaults, a
 * file that sets everything, the exact "FILE:LINE: reason" for each kind of
 * mistake, and a bad reload that must leave the running configuration alone. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config-build.h"
#include "config/config.h"

static char dir[] = "/tmp/test-config-XXXXXX";
static char conf[sizeof(dir) + 32];

static void write_conf(const char *text) {
        FILE *f = fopen(conf, "we");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static bool streq_null(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static void assert_config_equal(const Config *a, const Config *b) {
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++) {
                assert_true(streq_null(a->device[i].name, b->device[i].name));
                assert_int_equal(a->device[i].mode, b->device[i].mode);
                assert_int_equal(a->device[i].enable, b->device[i].enable);
        }
        assert_string_equal(a->group, b->group);
        assert_int_equal(a->max_parked, b->max_parked);
        assert_int_equal(a->max_parked_per_uid, b->max_parked_per_uid);
        assert_int_equal(a->max_open_per_uid, b->max_open_per_uid);
        assert_int_equal(a->store_blocks, b->store_blocks);
        assert_int_equal(a->low_water, b->low_water);
        assert_int_equal(a->min_healthy, b->min_healthy);
        assert_int_equal(a->start_delay_usec, b->start_delay_usec);
        assert_int_equal(a->reseed_interval_usec, b->reseed_interval_usec);
        assert_int_equal(a->min_reseed_interval_usec, b->min_reseed_interval_usec);
        assert_string_equal(a->socket_path, b->socket_path);
        assert_int_equal(a->cuse, b->cuse);
        assert_int_equal(a->per_source_devices, b->per_source_devices);
        assert_int_equal(a->dropin_unrestricted_ioctl, b->dropin_unrestricted_ioctl);
        assert_int_equal(a->privileged_ioctls, b->privileged_ioctls);
        assert_true(streq_null(a->egd_socket_path, b->egd_socket_path));
        assert_int_equal(a->assess_samples, b->assess_samples);
        assert_string_equal(a->state_directory, b->state_directory);
        assert_string_equal(a->user, b->user);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *x = &a->source[i], *y = &b->source[i];
                assert_int_equal(x->enable, y->enable);
                assert_int_equal(x->credit_mbits, y->credit_mbits);
                assert_int_equal(x->credit_auto, y->credit_auto);
                assert_int_equal(x->credit_cap_mbits, y->credit_cap_mbits);
                assert_true(streq_null(x->params.path, y->params.path));
                assert_int_equal(x->params.loop, y->params.loop);
                assert_int_equal(x->params.rate, y->params.rate);
                assert_int_equal(x->params.jitter_buffer, y->params.jitter_buffer);
                assert_int_equal(x->params.jitter_accesses, y->params.jitter_accesses);
        }
}

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        snprintf(conf, sizeof(conf), "%s/truerandomd.conf", dir);
        return 0;
}

static int teardown(void **state) {
        unlink(conf);
        return rmdir(dir);
}

/* ---- defaults and missing files ------------------------------------------------- */

static void test_defaults(void **state) {
        Config c;

        assert_int_equal(config_init_defaults(&c), 0);
        assert_string_equal(c.device[CONFIG_DEVICE_TRNG].name, "truerandom");
        assert_string_equal(c.device[CONFIG_DEVICE_RANDOM].name, "truerandom-random");
        assert_string_equal(c.device[CONFIG_DEVICE_URANDOM].name, "truerandom-urandom");
        assert_null(c.device[CONFIG_DEVICE_NULL].name);
        assert_string_equal(c.group, "truerandom");
        assert_int_equal(c.device[CONFIG_DEVICE_TRNG].mode, 0440);
        assert_int_equal(c.device[CONFIG_DEVICE_RANDOM].mode, 0666);
        assert_int_equal(c.device[CONFIG_DEVICE_URANDOM].mode, 0666);
        assert_int_equal(c.device[CONFIG_DEVICE_NULL].mode, 0666);
        assert_true(c.device[CONFIG_DEVICE_RANDOM].enable && c.device[CONFIG_DEVICE_URANDOM].enable);
        assert_true(config_device_served(&c.device[CONFIG_DEVICE_TRNG]));
        assert_false(config_device_served(&c.device[CONFIG_DEVICE_NULL]));
        /* CUSE devices, no EGD socket. */
        assert_true(c.cuse);
        assert_null(c.egd_socket_path);
        assert_int_equal(c.max_parked, 16384);
        /* Unset: max_parked / 9, so that 8 uids at quota and root fit. */
        assert_int_equal(c.max_parked_per_uid, 0);
        assert_int_equal(config_max_parked_per_uid(&c), 1820);
        assert_int_equal(c.max_open_per_uid, 1024);
        assert_int_equal(c.store_blocks, 1024);
        assert_int_equal(c.low_water, 256);
        assert_int_equal(c.min_healthy, 1);
        assert_int_equal(c.start_delay_usec, 0);
        assert_int_equal(c.reseed_interval_usec, 60 * USEC_PER_SEC);
        assert_int_equal(c.min_reseed_interval_usec, 1000 * USEC_PER_MSEC);
        assert_string_equal(c.socket_path, RUNSTATEDIR "/truerandomd/control");
        assert_int_equal(c.assess_samples, 1000000);
        assert_string_equal(c.state_directory, "/var/lib/truerandomd");
        assert_string_equal(c.user, "truerandomd");

        /* Jitter is credited what it measures here, at most 1 bit. */
        assert_true(c.source[CONFIG_SOURCE_JITTER].enable);
        assert_true(c.source[CONFIG_SOURCE_JITTER].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].credit_mbits, 0);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].credit_cap_mbits, 1000);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].params.jitter_buffer, 4096 * 1024);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].params.jitter_accesses, 64);
        assert_true(c.source[CONFIG_SOURCE_RDSEED].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_RDSEED].credit_mbits, 250);
        assert_true(c.source[CONFIG_SOURCE_HWRNG].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_HWRNG].credit_mbits, 4000);
        assert_string_equal(c.source[CONFIG_SOURCE_HWRNG].params.path, "/dev/hwrng");
        assert_true(c.source[CONFIG_SOURCE_KERNEL].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_KERNEL].credit_mbits, 0);
        assert_false(c.source[CONFIG_SOURCE_RDSEED].credit_auto);
        assert_false(c.source[CONFIG_SOURCE_HWRNG].credit_auto);
        assert_false(c.source[CONFIG_SOURCE_FILE].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_mbits, 0);
        assert_false(c.source[CONFIG_SOURCE_FILE].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_cap_mbits, 8000);
        assert_null(c.source[CONFIG_SOURCE_FILE].params.path);
        assert_false(c.source[CONFIG_SOURCE_FILE].params.loop);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].params.rate, 0);

        assert_string_equal(config_source_name(CONFIG_SOURCE_JITTER), "jitter");
        assert_string_equal(config_source_name(CONFIG_SOURCE_FILE), "file");
        assert_null(config_source_name(_CONFIG_SOURCE_MAX));
        config_done(&c);
}

static void test_missing_file(void **state) {
        Config c, defaults, untouched;
        char path[sizeof(dir) + 32], *error = NULL, *expect;

        snprintf(path, sizeof(path), "%s/absent.conf", dir);
        assert_int_equal(config_init_defaults(&defaults), 0);

        assert_int_equal(config_load(path, true, &c, &error), 0);
        assert_null(error);
        assert_config_equal(&c, &defaults);
        config_done(&c);

        memset(&untouched, 0x5a, sizeof(untouched));
        memcpy(&c, &untouched, sizeof(c));
        assert_int_equal(config_load(path, false, &c, &error), -ENOENT);
        assert_int_equal(asprintf(&expect, "%s: not found", path) > 0, 1);
        assert_string_equal(error, expect);
        assert_memory_equal(&c, &untouched, sizeof(c));
        free(expect);
        free(error);

        /* A directory in the way is no configuration either, even if "missing" is fine. */
        assert_int_equal(config_load(dir, true, &c, &error), -EISDIR);
        assert_int_equal(asprintf(&expect, "%s: Is a directory", dir) > 0, 1);
        assert_string_equal(error, expect);
        assert_memory_equal(&c, &untouched, sizeof(c));
        free(expect);
        free(error);
        config_done(&defaults);
}

/* ---- a file that sets everything -------------------------------------------------- */

static const char full[] =
        "\xEF\xBB\xBF; every key, none at its default (after a byte order mark)\n"
        "[device]\n"
        "trng_name = trng0\n"
        "random_name = rnd.0\n"
        "urandom_name = urnd_0\n"
        "group = 4242\n"
        "trng_mode = 0400\n"
        "random_mode = 644\n"
        "dropin = no\n"
        "max_parked = 1000000\n"
        "max_parked_per_uid = 111111\n"
        "max_open_per_uid = 1000000\n"
        "null_name = zeros\n"
        "\n"
        "[pool]\n"
        "    store_blocks = 1048576   ; indented: a key of its own, not a continuation\n"
        "\tlow_water = 1048575\n"
        "min_healthy = 2\n"
        "start_delay_ms = 1500\n"
        "[crng]\n"
        "reseed_interval = 86400\n"
        "min_reseed_interval = 0.2509\n"
        "[control]\n"
        "socket = /run/x/ctl\n"
        "[daemon]\n"
        "user = rngd\n"
        "[assessment]\n"
        "samples = 10000000\n"
        "state_directory = /srv/trd\n"
        "# source sections\n"
        "[source.jitter]\n"
        "enable = off\n"
        "credit = 0.6\n"
        "buffer_kib = 8192\n"
        "accesses = 128\n"
        "[source.rdseed]\n"
        "enable = FALSE\n"
        "credit = 0.03125\n"
        "[source.hwrng]\n"
        "enable = 0\n"
        "credit = 8\n"
        "path = /dev/hwrng1\n"
        "[source.kernel]\n"
        "enable = no\n"
        "[source.file]\n"
        "enable = yes\n"
        "credit = auto\n"
        "credit_cap = 7.9999\n"
        "path = /var/lib/raw.bin\n"
        "loop = true\n"
        "rate = 1000000000\n"
        "[egd]\n"
        "socket = /run/x/egd\n"
        "[device]\n"
        "cuse = no\n";

static void test_full_file_overrides_everything(void **state) {
        Config c;
        char *error = NULL;

        write_conf(full);
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_null(error);

        assert_string_equal(c.device[CONFIG_DEVICE_TRNG].name, "trng0");
        assert_string_equal(c.device[CONFIG_DEVICE_NULL].name, "zeros");
        assert_string_equal(c.device[CONFIG_DEVICE_RANDOM].name, "rnd.0");
        assert_string_equal(c.device[CONFIG_DEVICE_URANDOM].name, "urnd_0");
        assert_string_equal(c.group, "4242");
        assert_int_equal(c.device[CONFIG_DEVICE_TRNG].mode, 0400);
        /* random_mode is the mode of every device but /dev/truerandom. */
        assert_int_equal(c.device[CONFIG_DEVICE_RANDOM].mode, 0644);
        assert_int_equal(c.device[CONFIG_DEVICE_URANDOM].mode, 0644);
        assert_int_equal(c.device[CONFIG_DEVICE_NULL].mode, 0644);
        assert_false(c.device[CONFIG_DEVICE_RANDOM].enable || c.device[CONFIG_DEVICE_URANDOM].enable);
        assert_true(c.device[CONFIG_DEVICE_TRNG].enable && c.device[CONFIG_DEVICE_NULL].enable);
        assert_int_equal(c.max_parked, 1000000);
        assert_int_equal(config_max_parked_per_uid(&c), 111111);
        assert_int_equal(c.max_open_per_uid, 1000000);
        assert_int_equal(c.store_blocks, 1048576);
        assert_int_equal(c.low_water, 1048575);
        assert_int_equal(c.min_healthy, 2);
        assert_int_equal(c.start_delay_usec, 1500 * USEC_PER_MSEC);
        assert_int_equal(c.reseed_interval_usec, 86400 * USEC_PER_SEC);
        /* Thousandths of a second, rounded down. */
        assert_int_equal(c.min_reseed_interval_usec, 250 * USEC_PER_MSEC);
        assert_string_equal(c.socket_path, "/run/x/ctl");
        assert_int_equal(c.assess_samples, 10000000);
        assert_string_equal(c.state_directory, "/srv/trd");
        assert_string_equal(c.user, "rngd");
        assert_int_equal(c.user_at.line, 26);

        assert_false(c.source[CONFIG_SOURCE_JITTER].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].credit_mbits, 600);
        assert_false(c.source[CONFIG_SOURCE_JITTER].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].params.jitter_buffer, 8192 * 1024);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].params.jitter_accesses, 128);
        assert_false(c.source[CONFIG_SOURCE_RDSEED].enable);
        /* 1/32 bit is 31.25 millibits: rounded down, never up. */
        assert_int_equal(c.source[CONFIG_SOURCE_RDSEED].credit_mbits, 31);
        assert_false(c.source[CONFIG_SOURCE_HWRNG].enable);
        assert_int_equal(c.source[CONFIG_SOURCE_HWRNG].credit_mbits, 8000);
        assert_string_equal(c.source[CONFIG_SOURCE_HWRNG].params.path, "/dev/hwrng1");
        assert_false(c.source[CONFIG_SOURCE_KERNEL].enable);
        assert_true(c.source[CONFIG_SOURCE_FILE].enable);
        assert_true(c.source[CONFIG_SOURCE_FILE].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_mbits, 0);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_cap_mbits, 7999);
        assert_string_equal(c.source[CONFIG_SOURCE_FILE].params.path, "/var/lib/raw.bin");
        assert_true(c.source[CONFIG_SOURCE_FILE].params.loop);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].params.rate, 1000000000);
        assert_string_equal(c.egd_socket_path, "/run/x/egd");
        assert_false(c.cuse);
        config_done(&c);
}

static void test_partial_file_keeps_other_defaults(void **state) {
        Config c, defaults;
        char *error = NULL;

        /* Only kernel enabled: valid, the daemon just never serves /dev/truerandom. */
        write_conf("[source.jitter]\nenable = no\n[source.rdseed]\nenable = no\n"
                   "[source.hwrng]\nenable = no\n[source.file]\npath = none\n");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_int_equal(config_init_defaults(&defaults), 0);
        defaults.source[CONFIG_SOURCE_JITTER].enable = false;
        defaults.source[CONFIG_SOURCE_RDSEED].enable = false;
        defaults.source[CONFIG_SOURCE_HWRNG].enable = false;
        assert_config_equal(&c, &defaults);
        config_done(&c);
        config_done(&defaults);

        write_conf("");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_int_equal(config_init_defaults(&defaults), 0);
        assert_config_equal(&c, &defaults);
        config_done(&c);
        config_done(&defaults);
}

/* ---- mistakes ------------------------------------------------------------------------ */

typedef struct BadCase {
        const char *text;
        unsigned line;
        const char *reason;     /* the message after "FILE:LINE: " starts with it */
} BadCase;

static const BadCase bad_cases[] = {
        { "[device]\nmax_parked = 50\n[bogus]\n", 3, "unknown section [bogus]" },
        { "[pool]\nstore_blocks = 10\n\nlowwater = 1\n", 4, "unknown key 'lowwater' in [pool]" },
        { "[crng]\nreseed_interval = 10\n\n[crng]\nreseed_interval = 20\n", 5,
          "duplicate key 'reseed_interval' in [crng], first set on line 2" },
        { "[device]\ndropin\n", 2, "syntax error: expected 'key = value'" },
        { "; comment\n[device\n", 2, "syntax error: '[' without ']'" },
        { "[device] trailing\n", 1, "syntax error: text after ']'" },
        { "max_parked = 50\n", 1, "key 'max_parked' outside of any [section]" },
        { "[source.jitter]\ncredit = 8.5\n", 2, "credit must be auto or a decimal number of bits in [0, 8]" },
        { "[source.jitter]\ncredit = 8.001\n", 2, "credit must be auto or a decimal number of bits in [0, 8]" },
        { "[source.jitter]\ncredit = Auto\n", 2, "credit must be auto or a decimal number of bits in [0, 8]" },
        { "[source.rdseed]\ncredit = auto\n", 2,
          "credit = auto measures raw noise, and [source.rdseed] gives conditioned output the estimators cannot "
          "judge: give a number of bits" },
        { "[source.hwrng]\ncredit = auto\n", 2, "credit = auto measures raw noise, and [source.hwrng]" },
        { "[source.jitter]\ncredit_cap = auto\n", 2, "credit_cap must be a decimal number of bits in [0, 8]" },
        { "[source.jitter]\ncredit_cap = 0.5\ncredit = 0.3\n", 3,
          "credit_cap applies to credit = auto only, and credit is a number here" },
        { "[source.jitter]\ncredit_cap = 0\n", 2, "credit_cap = 0 would credit nothing" },
        { "[source.rdseed]\ncredit_cap = 1\n", 2, "unknown key 'credit_cap' in [source.rdseed]" },
        { "[assessment]\nsamples = 9999\n", 2, "samples must be a decimal integer in [10000, 10000000]" },
        { "[assessment]\nstate_directory = var/lib\n", 2, "state_directory must be an absolute path" },
        { "[source.rdseed]\ncredit = -1\n", 2, "credit must be a decimal number of bits in [0, 8]" },
        { "[source.rdseed]\ncredit = 1e0\n", 2, "credit must be a decimal number of bits in [0, 8]" },
        { "[source.rdseed]\ncredit = .5\n", 2, "credit must be a decimal number of bits in [0, 8]" },
        { "[source.hwrng]\ncredit = 1.\n", 2, "credit must be a decimal number of bits in [0, 8]" },
        { "[source.kernel]\ncredit = 1\n", 2, "the kernel source is never credited" },
        { "[device]\ntrng_mode = 0448\n", 2, "trng_mode must be octal like 0440" },
        { "[device]\ntrng_mode = 1777\n", 2, "trng_mode must be octal like 0440" },
        { "[device]\nrandom_mode = rw-rw-rw-\n", 2, "random_mode must be octal like 0440" },
        { "[pool]\nstore_blocks = 100\nlow_water = 100\n", 3, "low_water must be < store_blocks" },
        { "[pool]\nlow_water = 100\n# shrink\nstore_blocks = 50\n", 4, "low_water must be < store_blocks" },
        { "[pool]\nstore_blocks = 200\n", 2, "low_water must be < store_blocks" },
        { "[pool]\nstore_blocks = 0\n", 2, "store_blocks must be a decimal integer in [1, 1048576]" },
        { "[pool]\nmin_healthy = 0\n", 2, "min_healthy must be a decimal integer in [1, 5]" },
        { "[device]\nmax_parked = 1000001\n", 2, "max_parked must be a decimal integer in [9, 1000000]" },
        { "[device]\nmax_parked = 99999999999999999999999\n", 2,
          "max_parked must be a decimal integer in [9, 1000000]" },
        { "[crng]\nreseed_interval = 60s\n", 2, "reseed_interval must be a decimal integer in [1, 86400]" },
        { "[crng]\nreseed_interval =\n", 2, "reseed_interval must be a decimal integer in [1, 86400]" },
        { "[device]\nmax_parked = 8\n", 2, "max_parked must be a decimal integer in [9, 1000000]" },
        { "[device]\nmax_parked = 90\nmax_parked_per_uid = 11\n", 3,
          "max_parked_per_uid must be at most max_parked / 9 (10), so that 8 uids and root can always park a read" },
        { "[device]\nmax_parked_per_uid = 2000\n", 2, "max_parked_per_uid must be at most max_parked / 9 (1820)" },
        { "[device]\nmax_parked_per_uid = 0\n", 2, "max_parked_per_uid must be a decimal integer in [1, 111111]" },
        { "[device]\nmax_open_per_uid = 0\n", 2, "max_open_per_uid must be a decimal integer in [1, 1000000]" },
        { "[crng]\nmin_reseed_interval = 1s\n", 2,
          "min_reseed_interval must be a decimal number of seconds in [0, 3600], at most 3 decimals" },
        { "[crng]\nmin_reseed_interval = 3600.001\n", 2,
          "min_reseed_interval must be a decimal number of seconds in [0, 3600], at most 3 decimals" },
        { "[crng]\nmin_reseed_interval = 3601\n", 2,
          "min_reseed_interval must be a decimal number of seconds in [0, 3600], at most 3 decimals" },
        { "[crng]\nreseed_interval = 10\nmin_reseed_interval = 10.5\n", 3,
          "min_reseed_interval must be at most reseed_interval (10.500 s > 10 s)" },
        { "[crng]\nmin_reseed_interval = 2\n\nreseed_interval = 1\n", 4,
          "min_reseed_interval must be at most reseed_interval" },
        { "[source.jitter]\nbuffer_kib = 32\n", 2, "buffer_kib must be a decimal integer in [64, 262144]" },
        { "[source.file]\nrate = 1e9\n", 2, "rate must be a decimal integer in [0, 1000000000]" },
        { "[device]\ndropin = maybe\n", 2, "dropin must be yes or no" },
        /* A comment after a value: said as such, not as a bad value, and
         * never swallowed into a path or a name. */
        { "[device]\ndropin = yes # the default\n", 2,
          "a comment after the value of dropin is read as part of the value: put it on a line of its own" },
        { "[source.file]\npath = /var/lib/x.bin # captured\n", 2,
          "a comment after the value of path is read as part of the value: put it on a line of its own" },
        { "[device]\ntrng_name = my dev\n", 2, "trng_name must be 1 to 64 characters of [A-Za-z0-9._-]" },
        { "[device]\ntrng_name = ../x\n", 2, "trng_name must be 1 to 64 characters of [A-Za-z0-9._-]" },
        { "[device]\nurandom_name = ..\n", 2, "urandom_name must be 1 to 64 characters of [A-Za-z0-9._-]" },
        { "[device]\nrandom_name = "
          "a1234567890123456789012345678901234567890123456789012345678901234\n",
          2, "random_name must be 1 to 64 characters of [A-Za-z0-9._-]" },
        { "[device]\n\nrandom_name = truerandom\n", 3, "trng_name and random_name must differ" },
        { "[device]\nnull_name = truerandom-urandom\n", 2, "null_name must differ from the other device names" },
        { "[device]\nnull_name = a/b\n", 2, "null_name must be empty, none, or 1 to 64 characters" },
        { "[device]\ngroup = -wheel\n", 2, "group must be a group name or a number" },
        { "[device]\ngroup = 4294967295\n", 2, "group must be a group name or a number" },
        { "[daemon]\nuser = -root\n", 2, "user must be a user name or a number" },
        { "[daemon]\nuser = a b\n", 2, "user must be a user name or a number" },
        { "[daemon]\nuser =\n", 2, "user must be a user name or a number" },
        { "[source.hwrng]\npath = dev/hwrng\n", 2, "path must be an absolute path" },
        { "[source.file]\npath = relative\n", 2, "path must be an absolute path or none" },
        { "[control]\nsocket = /run/"
          "0123456789012345678901234567890123456789012345678901234567890123456789"
          "0123456789012345678901234567890123456789\n",
          2, "socket must be an absolute path of at most 107 bytes" },
        { "[source.file]\nenable = yes\ncredit = 1\n", 2, "source.file is enabled but has no path" },
        { "[source.file]\nenable = yes\npath = /tmp/raw\n", 2, "source.file is enabled but its credit is 0" },
        { "[source.file]\npath = /tmp/raw\nenable = yes\ncredit = 0.000\n", 4,
          "source.file is enabled but its credit is 0" },
        { "[source.file]\npath = /tmp/raw\nenable = yes\ncredit = auto\ncredit = 0\n", 5,
          "duplicate key 'credit' in [source.file]" },
        /* A daemon must serve something; two servers, two sockets. */
        { "[device]\ncuse = no\n", 2, "[device] cuse = no and no [egd] socket: nothing would be served" },
        { "[egd]\nsocket = none\n[device]\ncuse = no\n", 4,
          "[device] cuse = no and no [egd] socket: nothing would be served" },
        { "[egd]\nsocket = /run/truerandomd/control\n", 2, "[egd] socket must differ from [control] socket" },
        /* A device per credited source (jitter, by default): its name is
         * TRNG_NAME-SOURCE, which must fit and be no other device's. */
        { "[device]\nper_source_devices = yes\nrandom_name = truerandom-jitter\n", 3,
          "random_name = truerandom-jitter is the name of source jitter's own device (per_source_devices)" },
        { "[device]\ntrng_name = t1234567890123456789012345678901234567890123456789012345678\n"
          "per_source_devices = yes\n", 3,
          "trng_name is too long for per_source_devices: "
          "t1234567890123456789012345678901234567890123456789012345678-jitter exceeds 64 characters" },
        { "[device]\nper_source_devices = maybe\n", 2, "per_source_devices must be yes or no" },
        { "[device]\ndropin_unrestricted_ioctl = sometimes\n", 2, "dropin_unrestricted_ioctl must be yes or no" },
        { "[device]\nprivileged_ioctls = root\n", 2, "privileged_ioctls must be one of capability, host-root, none" },
        { "[egd]\nsocket = egd.sock\n", 2, "socket must be an absolute path of at most 107 bytes, or none" },
        /* The first mistake is the one reported. */
        { "[device]\nmax_parked = 0\nbogus = 1\n", 2, "max_parked must be a decimal integer in [9, 1000000]" },
        /* Counting lines through comments, blank lines and indentation. */
        { "# header\n\n[device]\n  ; note\n\tdropin = yes\n\n\n[pool]\n  store_blocks = x\n", 9,
          "store_blocks must be a decimal integer in [1, 1048576]" },
        /* An empty unknown section is still a mistake. */
        { "[device]\ndropin = yes\n[devices]\n", 3, "unknown section [devices]" },
        { "[device]\n# " "0123456789012345678901234567890123456789012345678901234567890123456789"
          "0123456789012345678901234567890123456789012345678901234567890123456789"
          "0123456789012345678901234567890123456789012345678901234567890123456789\n",
          2, "line too long" },
};

static void test_bad_values_name_file_line_and_reason(void **state) {
        for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
                const BadCase *t = &bad_cases[i];
                char *error = NULL, *prefix;
                Config c;
                int r;

                write_conf(t->text);
                memset(&c, 0x5a, sizeof(c));
                r = config_load(conf, false, &c, &error);
                assert_int_equal(asprintf(&prefix, "%s:%u: %s", conf, t->line, t->reason) > 0, 1);
                if (r != -EINVAL || !error || strncmp(error, prefix, strlen(prefix)) != 0)
                        fail_msg("case %zu: got %d \"%s\", want -EINVAL \"%s...\"", i, r,
                                 error ? error : "(null)", prefix);
                free(prefix);
                free(error);
        }
}

/* credit = auto for the sources the estimators can judge; a number after
 * it in another file turns it off again. */
/* The shipped etc/truerandomd.conf shows every key at its default: with
 * each "#key = value" line uncommented it loads, and gives the defaults. */
static void test_shipped_example_is_the_defaults(void **state) {
        const char *root = getenv("TRUERANDOM_SOURCE_ROOT");
        char path[PATH_MAX], *line = NULL, *error = NULL;
        size_t size = 0, keys = 0;
        Config defaults, c;
        FILE *in, *out;

        assert_non_null(root);
        snprintf(path, sizeof(path), "%s/etc/truerandomd.conf", root);
        in = fopen(path, "re");
        assert_non_null(in);
        out = fopen(conf, "we");
        assert_non_null(out);
        while (getline(&line, &size, in) > 0) {
                bool setting = line[0] == '#' && line[1] != ' ' && line[1] != '\n' && strchr(line, '=');

                keys += setting;
                assert_true(fputs(line + setting, out) >= 0);
        }
        free(line);
        fclose(in);
        assert_int_equal(fclose(out), 0);
        assert_true(keys >= 20);

        assert_int_equal(config_init_defaults(&defaults), 0);
        if (config_load(conf, false, &c, &error) < 0)
                fail_msg("the uncommented example does not load: %s", error);
        /* The example spells out what the default derives (max_parked / 9). */
        assert_int_equal(config_max_parked_per_uid(&c), config_max_parked_per_uid(&defaults));
        c.max_parked_per_uid = defaults.max_parked_per_uid;
        assert_config_equal(&c, &defaults);
        config_done(&c);
        config_done(&defaults);
}

/* The limit the message and truerandomd.conf(5) give is the one applied:
 * 196 characters, with either line ending. */
static void test_longest_line(void **state) {
        char text[600], line[200];
        Config c;
        char *error = NULL;

        memset(line, 'x', sizeof(line));
        line[0] = '#';
        for (int len = 196; len <= 197; len++)
                for (int crlf = 0; crlf <= 1; crlf++) {
                        snprintf(text, sizeof(text), "[device]\n%.*s%s", len, line, crlf ? "\r\n" : "\n");
                        write_conf(text);
                        if (len == 196) {
                                assert_int_equal(config_load(conf, false, &c, &error), 0);
                                config_done(&c);
                        } else {
                                assert_int_equal(config_load(conf, false, &c, &error), -EINVAL);
                                assert_non_null(strstr(error, "line too long (at most 196 characters)"));
                                free(error);
                                error = NULL;
                        }
                }

        /* What the limit leaves out is the ending: a short line that ends
         * in 300 CRs (then LF, or the end of the file) fits, and only its
         * text reaches libinih's 200-byte buffer. */
        for (int lf = 0; lf <= 1; lf++) {
                int n = snprintf(text, sizeof(text), "[device]\n%.*s", 190, line);

                memset(text + n, '\r', 300);
                snprintf(text + n + 300, sizeof(text) - (size_t) n - 300, "%s", lf ? "\n" : "");
                write_conf(text);
                assert_int_equal(config_load(conf, false, &c, &error), 0);
                config_done(&c);
        }
}

static void test_credit_auto(void **state) {
        char *error = NULL;
        Config c;

        write_conf("[source.jitter]\ncredit = 0.25\n[source.file]\nenable = yes\npath = /tmp/x\ncredit = auto\n");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_false(c.source[CONFIG_SOURCE_JITTER].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].credit_mbits, 250);
        assert_true(c.source[CONFIG_SOURCE_FILE].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_mbits, 0);
        assert_int_equal(c.source[CONFIG_SOURCE_FILE].credit_cap_mbits, 8000);
        config_done(&c);

        write_conf("[source.jitter]\ncredit = auto\ncredit_cap = 0.4\n");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_true(c.source[CONFIG_SOURCE_JITTER].credit_auto);
        assert_int_equal(c.source[CONFIG_SOURCE_JITTER].credit_cap_mbits, 400);
        config_done(&c);
}

static void test_credit_is_rounded_down(void **state) {
        static const struct {
                const char *text;
                uint32_t mbits;
        } cases[] = {
                { "0", 0 }, { "0.0", 0 }, { "8", 8000 }, { "8.000000", 8000 }, { "07.5", 7500 },
                { "0.30", 300 }, { "0.3339", 333 }, { "0.0009", 0 }, { "1.999999", 1999 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char text[128], *error = NULL;
                Config c;

                snprintf(text, sizeof(text), "[source.hwrng]\ncredit = %s\n", cases[i].text);
                write_conf(text);
                assert_int_equal(config_load(conf, false, &c, &error), 0);
                assert_int_equal(c.source[CONFIG_SOURCE_HWRNG].credit_mbits, cases[i].mbits);
                config_done(&c);
        }
}

/* per_source_devices: off by default; on, each credited source's device
 * is named after trng_name; a source never credited (kernel) has none. */
static void test_per_source_devices(void **state) {
        char *error = NULL, name[CONFIG_DEVICE_NAME_MAX + 1];
        Config c;

        assert_int_equal(config_init_defaults(&c), 0);
        assert_false(c.per_source_devices);
        config_done(&c);
        write_conf("[device]\ntrng_name = trng\nper_source_devices = yes\n");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_true(c.per_source_devices);
        assert_int_equal(config_source_device_name(&c, CONFIG_SOURCE_TPM, name), 0);
        assert_string_equal(name, "trng-tpm");
        config_done(&c);
}

/* dropin_unrestricted_ioctl: on by default (RNDADDENTROPY on the drop-ins
 * works as on the kernel's devices); no turns it off. */
static void test_dropin_unrestricted_ioctl(void **state) {
        char *error = NULL;
        Config c;

        assert_int_equal(config_init_defaults(&c), 0);
        assert_true(c.dropin_unrestricted_ioctl);
        config_done(&c);
        write_conf("[device]\ndropin_unrestricted_ioctl = no\n");
        assert_int_equal(config_load(conf, false, &c, &error), 0);
        assert_false(c.dropin_unrestricted_ioctl);
        config_done(&c);
}

/* privileged_ioctls: capability (the kernel's rule) by default; each word
 * its value. */
static void test_privileged_ioctls(void **state) {
        static const char *const words[] = { "capability", "host-root", "none" };
        char *error = NULL, text[64];
        Config c;

        assert_int_equal(config_init_defaults(&c), 0);
        assert_int_equal(c.privileged_ioctls, CONFIG_PRIVILEGED_CAPABILITY);
        config_done(&c);
        for (unsigned i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
                snprintf(text, sizeof(text), "[device]\nprivileged_ioctls = %s\n", words[i]);
                write_conf(text);
                assert_int_equal(config_load(conf, false, &c, &error), 0);
                assert_int_equal(c.privileged_ioctls, i);
                assert_string_equal(config_privileged_names[i], words[i]);
                config_done(&c);
        }
}

/* Devices that share a mode key share its default; every key is one
 * device's name or some devices' mode. */
static void test_device_rows(void **state) {
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                for (int j = 0; j < i; j++) {
                        const ConfigDeviceRow *a = &config_devices[i], *b = &config_devices[j];

                        assert_string_not_equal(a->name_key, b->name_key);
                        assert_string_not_equal(a->name_key, b->mode_key);
                        if (strcmp(a->mode_key, b->mode_key) == 0)
                                assert_int_equal(a->default_mode, b->default_mode);
                }
}

/* Every key of a source row's own is read in [source.NAME] into its field,
 * from the row alone; a path key's line is kept for FILE:LINE. */
static void test_source_keys_from_rows(void **state) {
        for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                const SourceOps *ops = source_all[s];

                for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++) {
                        const SourceKey *key = &ops->keys[k];
                        char text[256], value[32], *error = NULL;
                        const uint8_t *field;
                        const char *path;
                        Config c;

                        if (key->type == SOURCE_KEY_BOOL)
                                snprintf(value, sizeof(value), "yes");
                        else if (key->type == SOURCE_KEY_PATH || key->type == SOURCE_KEY_PATH_NONE)
                                snprintf(value, sizeof(value), "/srv/x");
                        else
                                snprintf(value, sizeof(value), "%llu", (unsigned long long) key->max);
                        snprintf(text, sizeof(text), "[source.%s]\n%s = %s\n", ops->name, key->name, value);
                        write_conf(text);
                        if (config_load(conf, false, &c, &error) < 0)
                                fail_msg("[source.%s] %s: %s", ops->name, key->name, error);
                        field = (const uint8_t *) &c.source[s].params + key->offset;
                        switch (key->type) {
                        case SOURCE_KEY_BOOL:
                                assert_true(*(const bool *) field);
                                break;
                        case SOURCE_KEY_UNSIGNED:
                                assert_int_equal(*(const unsigned *) field, key->max);
                                break;
                        case SOURCE_KEY_U64:
                                assert_int_equal(*(const uint64_t *) field, key->max);
                                break;
                        case SOURCE_KEY_KIB:
                                assert_int_equal(*(const size_t *) field, key->max * 1024);
                                break;
                        case SOURCE_KEY_PATH:
                        case SOURCE_KEY_PATH_NONE:
                                memcpy(&path, field, sizeof(path));
                                assert_string_equal(path, "/srv/x");
                                assert_int_equal(c.source[s].path_at.line, 2);
                                break;
                        }
                        config_done(&c);
                }
        }
}

/* SIGHUP with a broken file: the running configuration stays as it was. */
static void test_bad_reload_keeps_previous(void **state) {
        Config running, reference;
        char *error = NULL;

        write_conf(full);
        assert_int_equal(config_load(conf, false, &running, &error), 0);
        assert_int_equal(config_load(conf, false, &reference, &error), 0);

        /* Valid keys before the mistake must not leak into the running one. */
        write_conf("[device]\ntrng_name = other\nmax_parked = 70\n[pool]\nstore_blocks = 2\n");
        assert_int_equal(config_load(conf, false, &running, &error), -EINVAL);
        assert_non_null(error);
        free(error);
        error = NULL;
        assert_config_equal(&running, &reference);

        write_conf("[device]\ntrng_name = other\nrandom_mode = 0999\n");
        assert_int_equal(config_load(conf, false, &running, &error), -EINVAL);
        free(error);
        assert_config_equal(&running, &reference);

        config_done(&running);
        config_done(&reference);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_missing_file),
                cmocka_unit_test(test_full_file_overrides_everything),
                cmocka_unit_test(test_partial_file_keeps_other_defaults),
                cmocka_unit_test(test_bad_values_name_file_line_and_reason),
                cmocka_unit_test(test_shipped_example_is_the_defaults),
                cmocka_unit_test(test_longest_line),
                cmocka_unit_test(test_credit_auto),
                cmocka_unit_test(test_credit_is_rounded_down),
                cmocka_unit_test(test_bad_reload_keeps_previous),
                cmocka_unit_test(test_device_rows),
                cmocka_unit_test(test_per_source_devices),
                cmocka_unit_test(test_dropin_unrestricted_ioctl),
                cmocka_unit_test(test_privileged_ioctls),
                cmocka_unit_test(test_source_keys_from_rows),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
