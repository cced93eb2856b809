/* seedopts.c - truerandom-seed-kernel's options (see seedopts.h). */
#include "seedopts.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-build.h"

#define SOCKET_DEFAULT RUNSTATEDIR "/truerandomd/control"

enum { OPT_POLL = 0x100, OPT_SOCKET, OPT_VERSION };

static const struct option long_options[] = {
        { "interval", required_argument, NULL, 'i' },
        { "poll", required_argument, NULL, OPT_POLL },
        { "blocks", required_argument, NULL, 'b' },
        { "device", required_argument, NULL, 'd' },
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "once", no_argument, NULL, '1' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
};

const char *seed_options_usage(void) {
        return "Usage: truerandom-seed-kernel [OPTION...]\n"
               "Feeds full-entropy blocks of /dev/truerandom to the kernel's random pool\n"
               "(RNDADDENTROPY, 8 bits of credit per byte) and reseeds its CRNG: when the\n"
               "daemon serves, then every interval, and after a VM generation change or a\n"
               "resume. Needs CAP_SYS_ADMIN and the device's group.\n"
               "\n"
               "  -i, --interval SECONDS  between feeds (default 600)\n"
               "      --poll SECONDS      between looks at the daemon's status (default 5)\n"
               "  -b, --blocks N          32-byte blocks per feed, 1..16 (default 1)\n"
               "  -d, --device PATH       the full-entropy device (default /dev/truerandom)\n"
               "      --socket PATH       truerandomd's control socket\n"
               "                          (default " SOCKET_DEFAULT ")\n"
               "  -1, --once              feed once, as soon as the device serves, and exit\n"
               "  -h, --help              this text\n"
               "      --version           the version\n";
}

/* A whole number in [min, max], digits only (no sign, no spaces). */
static int parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        uint64_t v;

        if (!s || s[0] < '0' || s[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* One option into o; -EINVAL with the reason in err. */
static int parse_one(int c, const char *arg, SeedOptions *o, char *err, size_t size) {
        uint64_t v;

        switch (c) {
        case 'i':
        case OPT_POLL:
                if (parse_number(arg, 1, SEED_SECONDS_MAX, &v) < 0)
                        return fail(err, size, "invalid number of seconds '%s' (1 to 604800)", arg);
                *(c == 'i' ? &o->interval : &o->poll) = v * USEC_PER_SEC;
                return 0;
        case 'b':
                if (parse_number(arg, 1, FEED_BLOCKS_MAX, &v) < 0)
                        return fail(err, size, "invalid number of blocks '%s' (1 to 16)", arg);
                o->blocks = (unsigned) v;
                return 0;
        case 'd':
        case OPT_SOCKET:
                if (!arg[0])
                        return fail(err, size, "empty path");
                *(c == 'd' ? &o->device : &o->socket) = arg;
                return 0;
        case '1':
                o->once = true;
                return 0;
        case 'h':
                o->action = SEED_ACTION_HELP;
                return 0;
        case OPT_VERSION:
                o->action = SEED_ACTION_VERSION;
                return 0;
        default:
                return fail(err, size, "unknown option or missing argument (see --help)");
        }
}

int seed_options_parse(int argc, char **argv, SeedOptions *ret, char *ret_error, size_t error_size) {
        SeedOptions o = {
                .action = SEED_ACTION_RUN,
                .interval = SEED_INTERVAL_DEFAULT,
                .poll = SEED_POLL_DEFAULT,
                .blocks = 1,
                .device = SEED_DEVICE_DEFAULT,
                .socket = SOCKET_DEFAULT,
        };
        int c;

        if (error_size > 0)
                ret_error[0] = '\0';
        optind = 0; /* 0: getopt starts afresh (glibc), for callers that parse twice */
        opterr = 0;
        while ((c = getopt_long(argc, argv, "i:b:d:1h", long_options, NULL)) >= 0) {
                int r = parse_one(c, optarg, &o, ret_error, error_size);

                if (r < 0)
                        return r;
        }
        if (optind < argc)
                return fail(ret_error, error_size, "unexpected argument '%s'", argv[optind]);
        *ret = o;
        return 0;
}
