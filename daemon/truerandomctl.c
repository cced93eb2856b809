/* truerandomctl.c - the command-line client of truerandomd's control socket:
 * status, raw sample export for SP 800-90B assessment, reseed.
 *
 * One request per connection (ctlproto.h). Every failure is one line on
 * stderr and a documented exit code (truerandomctl(1)), so scripts can tell
 * "not root" from "no daemon" from "no such source". A raw capture goes to
 * a temporary file beside -o FILE once the daemon has opened the source,
 * and is renamed to FILE only when complete: a capture that fails half-way,
 * or is ended by SIGINT, SIGTERM or SIGHUP, removes it, so an auditor never
 * assesses a truncated capture by mistake (and an older FILE stays). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config-build.h"
#include "config.h"
#include "ctlproto.h"
#include "ctlrender.h"

enum {
        EXIT_OK = 0,
        EXIT_PERMISSION = 1,  /* the daemon refused (not root), or the socket did */
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3, /* no socket, or nothing listening on it */
        EXIT_SOURCE = 4,      /* unknown source, or not enabled/available */
        EXIT_PROTOCOL = 5,    /* the two sides do not understand each other */
        EXIT_FAILED = 6,      /* the operation itself failed */
};

#define DEFAULT_SOCKET RUNSTATEDIR "/truerandomd/control"
#define TIMEOUT_S 30
/* Longer than the daemon's own stall limit, which then reports first. */
#define RAW_TIMEOUT_S 90
#define PROGRESS_WIDTH 30

typedef enum StatusFormat {
        FORMAT_TEXT,
        FORMAT_JSON,
        FORMAT_OPENMETRICS,
} StatusFormat;

/* status: the verdicts (CtlHealth), and 3 when there is none to give. */
#define EXIT_UNREACHABLE 3

typedef struct Options {
        const char *socket;
        CtlRequest req;
        StatusFormat format;
        bool format_set;
        bool restart;
        bool samples_set;
        const char *output;
} Options;

static void usage(FILE *f) {
        fprintf(f,
                "Usage: truerandomctl [--socket PATH] COMMAND [OPTIONS]\n"
                "Query and control truerandomd.\n\n"
                "Commands:\n"
                "  status [--json|--format=F] sources, store, devices, CRNG; exit 0 serving,\n"
                "                           1 degraded, 2 not serving, 3 unreachable\n"
                "  raw SOURCE [--samples N] [--restart] [-o FILE]\n"
                "                           raw 8-bit samples for SP 800-90B tools (root)\n"
                "  reseed                   reseed the CRNG now (root)\n\n"
                "Options:\n"
                "  -s, --socket PATH   control socket (default: [control] socket of\n"
                "                      %s, else %s)\n"
                "      --json          status as JSON (stable, see truerandomctl(1))\n"
                "      --format=F      status as text, json, or openmetrics (Prometheus)\n"
                "  -n, --samples N     samples to export (default %u)\n"
                "      --restart       %u rows of %u samples, the source restarted\n"
                "                      before each row (ea_restart's input)\n"
                "  -o, --output FILE   write samples to FILE (default: stdout)\n"
                "  -h, --help          this help\n"
                "      --version       print the version\n",
                CONFIG_DEFAULT_PATH, DEFAULT_SOCKET, CTL_RAW_SAMPLES_DEFAULT, CTL_RESTART_ROWS,
                CTL_RESTART_SAMPLES);
}

/* The last message fail() printed: status --json and --format=openmetrics
 * say it on stdout too when they have no status to show. */
static char last_failure[512];

__attribute__((format(printf, 2, 3)))
static int fail(int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(last_failure, sizeof(last_failure), fmt, ap);
        va_end(ap);
        fprintf(stderr, "truerandomctl: %s\n", last_failure);
        return code;
}

static int parse_samples(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end || v < 1 || v > CTL_RAW_SAMPLES_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* Returns EXIT_OK, or the exit code after printing why. */
static int parse_args(int argc, char *argv[], Options *o) {
        enum { ARG_JSON = 0x100, ARG_FORMAT, ARG_RESTART, ARG_VERSION };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "json", no_argument, NULL, ARG_JSON },
                { "format", required_argument, NULL, ARG_FORMAT },
                { "samples", required_argument, NULL, 'n' },
                { "restart", no_argument, NULL, ARG_RESTART },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { 0 },
        };
        const char *command;
        int c;

        o->req.samples = CTL_RAW_SAMPLES_DEFAULT;
        o->req.rows = 1;
        while ((c = getopt_long(argc, argv, "s:n:o:h", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        o->socket = optarg;
                        break;
                case ARG_JSON:
                        o->format = FORMAT_JSON;
                        o->format_set = true;
                        break;
                case ARG_FORMAT:
                        if (strcmp(optarg, "text") == 0)
                                o->format = FORMAT_TEXT;
                        else if (strcmp(optarg, "json") == 0)
                                o->format = FORMAT_JSON;
                        else if (strcmp(optarg, "openmetrics") == 0)
                                o->format = FORMAT_OPENMETRICS;
                        else
                                return fail(EXIT_USAGE, "--format takes text, json or openmetrics, not '%s'", optarg);
                        o->format_set = true;
                        break;
                case 'n':
                        if (parse_samples(optarg, &o->req.samples) < 0)
                                return fail(EXIT_USAGE, "--samples must be a number in [1, %u]", CTL_RAW_SAMPLES_MAX);
                        o->samples_set = true;
                        break;
                case ARG_RESTART:
                        o->restart = true;
                        break;
                case 'o':
                        o->output = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        exit(EXIT_OK);
                case ARG_VERSION:
                        printf("truerandomctl %s\n", TRUERANDOM_VERSION);
                        exit(EXIT_OK);
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc)
                return fail(EXIT_USAGE, "missing command (status, raw or reseed); see --help");
        command = argv[optind++];

        if (strcmp(command, "status") == 0)
                o->req.command = CTL_COMMAND_STATUS;
        else if (strcmp(command, "reseed") == 0)
                o->req.command = CTL_COMMAND_RESEED;
        else if (strcmp(command, "raw") == 0) {
                o->req.command = CTL_COMMAND_RAW;
                if (optind >= argc)
                        return fail(EXIT_USAGE, "raw needs a SOURCE (jitter, rdseed, hwrng, file)");
                if (strlen(argv[optind]) > CTL_SOURCE_NAME_MAX)
                        return fail(EXIT_USAGE, "source name too long");
                snprintf(o->req.source, sizeof(o->req.source), "%s", argv[optind++]);
        } else
                return fail(EXIT_USAGE, "unknown command '%s' (status, raw or reseed)", command);
        if (optind < argc)
                return fail(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);

        if (o->format_set && o->req.command != CTL_COMMAND_STATUS)
                return fail(EXIT_USAGE, "--json and --format apply to status only");
        if ((o->samples_set || o->restart || o->output) && o->req.command != CTL_COMMAND_RAW)
                return fail(EXIT_USAGE, "--samples, --restart and --output apply to raw only");
        if (o->restart && o->samples_set)
                return fail(EXIT_USAGE, "--restart always takes %u x %u samples; drop --samples",
                            CTL_RESTART_ROWS, CTL_RESTART_SAMPLES);
        if (o->restart) {
                o->req.rows = CTL_RESTART_ROWS;
                o->req.samples = CTL_RESTART_SAMPLES;
        }
        if (o->req.command == CTL_COMMAND_RAW && !o->output && isatty(STDOUT_FILENO))
                return fail(EXIT_USAGE, "refusing to write binary samples to a terminal; use -o FILE or redirect");
        return EXIT_OK;
}

/* The configured socket, so a moved [control] socket needs no option. Any
 * trouble with the file (absent, unreadable, bad) means the default. */
static char *configured_socket(void) {
        Config config;
        char *error = NULL, *path = NULL;

        if (config_load(CONFIG_DEFAULT_PATH, true, &config, &error) == 0) {
                path = config.socket_path;
                config.socket_path = NULL;
                config_done(&config);
        }
        free(error);
        return path ? path : strdup(DEFAULT_SOCKET);
}

static int connect_daemon(const char *path, int timeout_s, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = timeout_s };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return fail(EXIT_USAGE, "socket path too long: %s", path);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return fail(EXIT_FAILED, "socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;
                close(fd);
                if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR)
                        return fail(EXIT_NOT_RUNNING, "truerandomd is not running (%s: %s)", path, strerror(e));
                if (e == EACCES || e == EPERM)
                        return fail(EXIT_PERMISSION, "permission denied on the control socket %s", path);
                return fail(EXIT_FAILED, "cannot connect to %s: %s", path, strerror(e));
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        *ret_fd = fd;
        return EXIT_OK;
}

/* One reply packet into buf; EXIT_OK or the exit code after saying why. */
static int receive(int fd, uint8_t *buf, int timeout_s, CtlReply *ret) {
        unsigned resets = 0;
        ssize_t n;

        /* A daemon that turns the connection away ("busy") answers and
         * closes at once; if our request was still unread there, the reset
         * this causes is reported before the answer queued ahead of it. */
        do
                n = recv(fd, buf, CTL_REPLY_MAX, MSG_TRUNC);
        while (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ == 0)));
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return fail(EXIT_FAILED, "no answer from truerandomd within %d s", timeout_s);
        if (n < 0)
                return fail(EXIT_FAILED, "reading from truerandomd: %s", strerror(errno));
        if (n == 0)
                return fail(EXIT_PROTOCOL, "truerandomd closed the connection without an answer");
        if ((size_t) n > CTL_REPLY_MAX || ctl_reply_parse(buf, (size_t) n, ret) < 0)
                return fail(EXIT_PROTOCOL, "malformed reply from truerandomd");
        return EXIT_OK;
}

static int reply_error(const CtlReply *r) {
        static const struct {
                const char *what;
                int code;
        } map[_CTL_ERROR_MAX] = {
                [CTL_ERROR_MALFORMED] = { "protocol error", EXIT_PROTOCOL },
                [CTL_ERROR_TOO_LARGE] = { "protocol error", EXIT_PROTOCOL },
                [CTL_ERROR_VERSION] = { "protocol version mismatch", EXIT_PROTOCOL },
                [CTL_ERROR_PERMISSION] = { "permission denied", EXIT_PERMISSION },
                [CTL_ERROR_UNKNOWN_SOURCE] = { "unknown source", EXIT_SOURCE },
                [CTL_ERROR_UNAVAILABLE] = { "source unavailable", EXIT_SOURCE },
                [CTL_ERROR_BUSY] = { "busy", EXIT_FAILED },
                [CTL_ERROR_TIMEOUT] = { "timed out", EXIT_FAILED },
                [CTL_ERROR_NO_DATA] = { "no data", EXIT_FAILED },
                [CTL_ERROR_FAILED] = { "failed", EXIT_FAILED },
        };
        int len = (int) (r->payload_size < CTL_ERROR_TEXT_MAX ? r->payload_size : CTL_ERROR_TEXT_MAX);

        if (r->kind != CTL_REPLY_ERROR)
                return fail(EXIT_PROTOCOL, "unexpected '%s' reply from truerandomd",
                            r->kind == CTL_REPLY_OK ? "ok" : r->kind == CTL_REPLY_START ? "start" : "data");
        if (len > 0)
                return fail(map[r->error].code, "%s: %.*s", map[r->error].what, len, (const char *) r->payload);
        return fail(map[r->error].code, "%s", map[r->error].what);
}

/* The send of the request failed with e. A daemon that turns connections
 * away ("busy") answers and closes as it accepts, before a request can
 * arrive: that answer is still there to read, and says more than EPIPE. */
static int answer_after_failed_send(int fd, uint8_t *buf, int e) {
        ssize_t n = recv(fd, buf, CTL_REPLY_MAX, MSG_DONTWAIT | MSG_TRUNC);
        CtlReply r;

        if ((e == EPIPE || e == ECONNRESET) && n > 0 && (size_t) n <= CTL_REPLY_MAX &&
            ctl_reply_parse(buf, (size_t) n, &r) == 0)
                return reply_error(&r);
        return fail(EXIT_FAILED, "sending to truerandomd: %s", strerror(e));
}

/* The verdict on the status, after printing it; or, when there is no
 * status to judge, an exit code other than a verdict's. */
static int do_status(int fd, const Options *o, uint8_t *buf, bool *ret_judged) {
        CtlStatus *status = NULL;
        CtlReply r;
        int code, verdict;

        code = receive(fd, buf, TIMEOUT_S, &r);
        if (code != EXIT_OK)
                return code;
        if (r.kind != CTL_REPLY_OK)
                return reply_error(&r);
        if (ctl_status_parse((const char *) r.payload, r.payload_size, &status) < 0)
                return fail(EXIT_PROTOCOL, "truerandomd sent a status this version cannot read");
        verdict = (int) ctl_status_health(status);
        if (o->format == FORMAT_JSON) {
                fwrite(r.payload, 1, r.payload_size, stdout);
                fputc('\n', stdout);
        } else if (o->format == FORMAT_OPENMETRICS)
                code = ctl_render_openmetrics(status, stdout) < 0 ? EXIT_FAILED : EXIT_OK;
        else
                ctl_render_text(status, stdout);
        ctl_status_free(status);
        if (code != EXIT_OK || fflush(stdout) != 0)
                return fail(EXIT_FAILED, "writing the status: %s", strerror(errno));
        *ret_judged = true;
        return verdict;
}

/* No status to show: the daemon is not there, refused, or answered
 * nothing readable. The machine-readable forms still say so on stdout, so
 * a monitor reading them never mistakes silence for an old reading. */
static int status_unreachable(const Options *o) {
        if (o->format == FORMAT_JSON) {
                struct json_object *j = json_object_new_object();

                if (j) {
                        json_object_object_add(j, "version", json_object_new_int(CTL_STATUS_VERSION));
                        json_object_object_add(j, "reachable", json_object_new_boolean(false));
                        json_object_object_add(j, "error", json_object_new_string(last_failure));
                        puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
                        json_object_put(j);
                }
        } else if (o->format == FORMAT_OPENMETRICS)
                (void) ctl_render_openmetrics(NULL, stdout);
        fflush(stdout);
        return EXIT_UNREACHABLE;
}

static int do_reseed(int fd, uint8_t *buf) {
        CtlReply r;
        int code = receive(fd, buf, TIMEOUT_S, &r);

        if (code != EXIT_OK)
                return code;
        return r.kind == CTL_REPLY_OK ? EXIT_OK : reply_error(&r);
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000U + (uint64_t) ts.tv_nsec / 1000000U;
}

/* 12.3 MB/s style; bytes, as a sample is one. */
static void fmt_rate(double per_s, char buf[static 16]) {
        static const char units[] = " kMGT";
        int u = 0;

        while (per_s >= 1000 && u < (int) sizeof(units) - 2) {
                per_s /= 1000;
                u++;
        }
        snprintf(buf, 16, u ? "%.1f %cB/s" : "%.0f B/s", per_s, units[u]);
}

static void fmt_left(double s, char buf[static 32]) {
        uint64_t t = (uint64_t) (s + 0.5);

        if (!(s >= 0) || s > 359999)
                snprintf(buf, 32, "--:--");
        else if (t >= 3600)
                snprintf(buf, 32, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, t / 3600, t / 60 % 60, t % 60);
        else
                snprintf(buf, 32, "%" PRIu64 ":%02" PRIu64, t / 60, t % 60);
}

/* [####.....]  45% 450000/1000000  1.2 MB/s  0:05 left */
static void progress(const Options *o, uint64_t done, uint64_t total, bool last) {
        static uint64_t shown, started;
        unsigned filled = total ? (unsigned) (done * PROGRESS_WIDTH / total) : PROGRESS_WIDTH;
        char bar[PROGRESS_WIDTH + 1], rate[16], left[32];
        uint64_t t = now_ms();
        double per_s;

        if (!started)
                started = t;
        if (!last && t - shown < 100)
                return;
        shown = t;
        per_s = t > started ? (double) done * 1000.0 / (double) (t - started) : 0;
        fmt_rate(per_s, rate);
        fmt_left(per_s > 0 ? (double) (total - done) / per_s : -1, left);
        memset(bar, '#', filled);
        memset(bar + filled, '.', PROGRESS_WIDTH - filled);
        bar[PROGRESS_WIDTH] = '\0';
        /* Trailing blanks: a shorter line must cover a longer one. */
        fprintf(stderr, "\r%-8.8s [%s] %3u%% %" PRIu64 "/%" PRIu64 " %s %s%s", o->req.source, bar,
                total ? (unsigned) (done * 100 / total) : 100, done, total, rate, last ? "done" : left,
                last ? "     \n" : " left  ");
}

/* The capture's temporary file, removed by the signal handler: set only
 * while it exists. */
static char partial_path[PATH_MAX];
static volatile sig_atomic_t partial_exists;

static void on_fatal_signal(int sig) {
        /* unlink() and raise() are async-signal-safe. */
        if (partial_exists)
                (void) unlink(partial_path);
        signal(sig, SIG_DFL);
        raise(sig);
}

/* A temporary file beside path (same directory: the rename is atomic),
 * mode 0644 less the umask as a plain creat() would give. */
static int partial_create(const char *path) {
        static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
        struct sigaction sa = { .sa_handler = on_fatal_signal };
        mode_t mask;
        int fd;

        if ((size_t) snprintf(partial_path, sizeof(partial_path), "%s.partial-XXXXXX", path) >= sizeof(partial_path))
                return -ENAMETOOLONG;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
                sigaction(signals[i], &sa, NULL);
        fd = mkostemp(partial_path, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        partial_exists = 1;
        mask = umask(0);
        umask(mask);
        (void) fchmod(fd, 0644 & ~mask);
        return fd;
}

static void partial_remove(void) {
        if (partial_exists) {
                partial_exists = 0;
                (void) unlink(partial_path);
        }
}

static int write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int do_raw(int fd, const Options *o, uint8_t *buf) {
        uint64_t total = o->req.samples * o->req.rows, got = 0;
        bool bar = isatty(STDERR_FILENO);
        int out = STDOUT_FILENO, code, r;
        CtlReply rep;

        code = receive(fd, buf, RAW_TIMEOUT_S, &rep);
        if (code != EXIT_OK)
                return code;
        if (rep.kind != CTL_REPLY_START)
                return reply_error(&rep);
        if (rep.samples != o->req.samples || rep.rows != o->req.rows)
                return fail(EXIT_PROTOCOL, "truerandomd offers %" PRIu32 " x %" PRIu64 " samples, not the ones asked for",
                            rep.rows, rep.samples);
        if (o->output) {
                out = partial_create(o->output);
                if (out < 0)
                        return fail(EXIT_FAILED, "cannot create a file beside %s: %s", o->output, strerror(-out));
        }

        for (;;) {
                code = receive(fd, buf, RAW_TIMEOUT_S, &rep);
                if (code != EXIT_OK)
                        break;
                if (rep.kind == CTL_REPLY_DATA) {
                        if (rep.payload_size > total - got) {
                                code = fail(EXIT_PROTOCOL, "truerandomd sent more samples than asked for");
                                break;
                        }
                        r = write_all(out, rep.payload, rep.payload_size);
                        if (r < 0) {
                                code = fail(EXIT_FAILED, "writing %s: %s", o->output ? o->output : "stdout",
                                            strerror(-r));
                                break;
                        }
                        got += rep.payload_size;
                        if (bar)
                                progress(o, got, total, false);
                        continue;
                }
                if (rep.kind == CTL_REPLY_OK && got != total)
                        code = fail(EXIT_PROTOCOL, "truerandomd ended after %" PRIu64 " of %" PRIu64 " samples", got,
                                    total);
                else if (rep.kind != CTL_REPLY_OK) {
                        if (bar)
                                fputc('\n', stderr);
                        code = reply_error(&rep);
                }
                break;
        }
        if (code == EXIT_OK && bar)
                progress(o, got, total, true);
        if (o->output) {
                if (code == EXIT_OK && fsync(out) < 0)
                        code = fail(EXIT_FAILED, "writing %s: %s", o->output, strerror(errno));
                if (close(out) < 0 && code == EXIT_OK)
                        code = fail(EXIT_FAILED, "writing %s: %s", o->output, strerror(errno));
                if (code == EXIT_OK && rename(partial_path, o->output) < 0)
                        code = fail(EXIT_FAILED, "renaming the capture to %s: %s", o->output, strerror(errno));
                if (code == EXIT_OK)
                        partial_exists = 0;
                else {
                        partial_remove();
                        fprintf(stderr, "truerandomctl: removed the incomplete capture; %s was not written\n",
                                o->output);
                }
        }
        return code;
}

int main(int argc, char *argv[]) {
        Options o = { 0 };
        char request[CTL_REQUEST_MAX], *socket_path = NULL;
        uint8_t *buf = NULL;
        bool judged = false;
        ssize_t n;
        int fd = -1, code;

        code = parse_args(argc, argv, &o);
        if (code != EXIT_OK)
                return code;
        n = ctl_request_format(&o.req, request, sizeof(request));
        if (n < 0)
                return fail(EXIT_USAGE, "invalid source name '%s'", o.req.source);
        socket_path = o.socket ? strdup(o.socket) : configured_socket();
        buf = malloc(CTL_REPLY_MAX);
        if (!socket_path || !buf) {
                code = fail(EXIT_FAILED, "out of memory");
                goto out;
        }

        code = connect_daemon(socket_path, o.req.command == CTL_COMMAND_RAW ? RAW_TIMEOUT_S : TIMEOUT_S, &fd);
        if (code != EXIT_OK)
                goto out;
        if (send(fd, request, (size_t) n, MSG_NOSIGNAL) != n) {
                code = answer_after_failed_send(fd, buf, errno);
                goto out;
        }
        switch (o.req.command) {
        case CTL_COMMAND_STATUS:
                code = do_status(fd, &o, buf, &judged);
                break;
        case CTL_COMMAND_RESEED:
                code = do_reseed(fd, buf);
                break;
        case CTL_COMMAND_RAW:
                code = do_raw(fd, &o, buf);
                break;
        default:
                abort();
        }
out:
        if (o.req.command == CTL_COMMAND_STATUS && !judged && code != EXIT_USAGE)
                code = status_unreachable(&o);
        if (fd >= 0)
                close(fd);
        free(buf);
        free(socket_path);
        return code;
}
