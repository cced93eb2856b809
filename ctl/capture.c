/* capture.c - raw samples through the daemon or in-process (see
 * capture.h). Flow: source or daemon -> [capture] -> verb-raw, verb-assess. */
#include "capture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-build.h"
#include "config/config.h"
#include "config/sourceconf.h"
#include "client.h"
#include "pool/capture.h"
#include "util/cleanup.h"

const char *ctl_capture_sources(char *buf, size_t size) {
        size_t k = 0;

        buf[0] = '\0';
        for (const SourceOps *const *s = source_all; *s; s++)
                /* kernel is getrandom(): already conditioned, nothing raw. */
                if (*s != &source_kernel && k < size)
                        k += (size_t) snprintf(buf + k, size - k, "%s%s", k > 0 ? ", " : "", (*s)->name);
        return buf;
}

/* ---- through truerandomd ------------------------------------------------------------ */

static int capture_daemon(const CtlCapture *c, CtlProgress *p, CtlSinkFn sink, void *userdata, const char *sink_name) {
        CtlRequest req;
        uint64_t total = c->samples * c->rows, got = 0;
        _cleanup_free_ char *socket_path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -1;
        CtlReply rep;
        int code, r;

        if (strlen(c->source) > CTL_SOURCE_NAME_MAX)
                return ctl_fail(EXIT_USAGE, "source name too long");
        ctl_request_init(&req, ctl_command_from_string("raw"));
        req.samples = c->samples;
        req.rows = c->rows;
        snprintf(req.source, sizeof(req.source), "%s", c->source);
        socket_path = ctl_socket_path(c->socket_path, c->config_path);
        buf = malloc(CTL_REPLY_MAX);
        if (!socket_path || !buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        code = ctl_request(socket_path, &req, CTL_CLIENT_RAW_TIMEOUT_USEC, &fd);
        if (code == EXIT_OK)
                code = ctl_receive(fd, buf, CTL_CLIENT_RAW_TIMEOUT_USEC, &rep);
        if (code == EXIT_OK && rep.kind != CTL_REPLY_START)
                code = ctl_reply_error(&rep);
        if (code == EXIT_OK && (rep.samples != c->samples || rep.rows != c->rows))
                code = ctl_fail(EXIT_PROTOCOL,
                                "truerandomd offers %" PRIu32 " x %" PRIu64 " samples, not the ones asked for",
                                rep.rows, rep.samples);
        ctl_progress_restart(p);
        while (code == EXIT_OK) {
                code = ctl_receive(fd, buf, CTL_CLIENT_RAW_TIMEOUT_USEC, &rep);
                if (code != EXIT_OK)
                        break;
                if (rep.kind == CTL_REPLY_DATA) {
                        if (rep.payload_size > total - got) {
                                code = ctl_fail(EXIT_PROTOCOL, "truerandomd sent more samples than asked for");
                                break;
                        }
                        r = sink(userdata, rep.payload, rep.payload_size);
                        if (r < 0) {
                                ctl_progress_break(p);
                                code = ctl_fail(EXIT_FAILED, "writing %s: %s", sink_name, strerror(-r));
                                break;
                        }
                        got += rep.payload_size;
                        ctl_progress_samples(p, got, total, false);
                        continue;
                }
                ctl_progress_break(p);
                if (rep.kind == CTL_REPLY_OK && got != total)
                        code = ctl_fail(EXIT_PROTOCOL, "truerandomd ended after %" PRIu64 " of %" PRIu64 " samples",
                                        got, total);
                else if (rep.kind != CTL_REPLY_OK)
                        code = ctl_reply_error(&rep);
                break;
        }
        if (code == EXIT_OK)
                ctl_progress_samples(p, got, total, true);
        return code;
}

/* ---- in this process (--direct) -------------------------------------------------- */

typedef struct Direct {
        CtlProgress *progress;
        CtlSinkFn sink;
        void *userdata;
        uint64_t done;
        int sink_error;
} Direct;

static int direct_sink(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        Direct *d = userdata;
        int r;

        if (n > 0) {
                r = d->sink(d->userdata, samples, n);
                if (r < 0) {
                        d->sink_error = r;
                        return r;
                }
        }
        d->done = done;
        ctl_progress_samples(d->progress, done, total, false);
        return 0;
}

static int capture_direct(const CtlCapture *c, CtlProgress *p, CtlSinkFn sink, void *userdata, const char *sink_name) {
        const char *path = c->config_path ? c->config_path : CONFIG_DEFAULT_PATH;
        Direct d = { .progress = p, .sink = sink, .userdata = userdata };
        char *error = NULL, names[128];
        ConfigSource i;
        SourceParams params;
        Config config;
        int r, code = EXIT_OK;

        /* The daemon's own reading: a named file must exist, the default
         * may be absent (built-in defaults). */
        r = config_load(path, !c->config_path, &config, &error);
        if (r < 0) {
                code = ctl_fail(EXIT_FAILED, "%s", error ? error : strerror(-r));
                free(error);
                return code;
        }
        if (sourceconf_lookup(c->source, &i) < 0 || !sourceconf_ops(i))
                code = ctl_fail(EXIT_SOURCE, "unknown source '%s' (%s)", c->source,
                                ctl_capture_sources(names, sizeof(names)));
        else if (i == CONFIG_SOURCE_KERNEL)
                code = ctl_fail(EXIT_SOURCE, "source kernel is getrandom(): it has no raw samples");
        else if (!config.source[i].enable)
                code = ctl_fail(EXIT_SOURCE, "source %s is not enabled in %s (enable = no)", c->source, path);
        if (code != EXIT_OK) {
                config_done(&config);
                return code;
        }
        params = sourceconf_params(&config.source[i]);
        ctl_progress_restart(p);
        r = capture_run(sourceconf_ops(i), &params, c->samples, c->rows, direct_sink, &d);
        config_done(&config);
        if (r < 0)
                ctl_progress_break(p);
        if (r < 0 && d.sink_error)
                return ctl_fail(EXIT_FAILED, "writing %s: %s", sink_name, strerror(-r));
        if (r == -ENODATA)
                return ctl_fail(EXIT_FAILED, "source %s ended after %" PRIu64 " samples", c->source, d.done);
        if (r == -ETIMEDOUT)
                return ctl_fail(EXIT_FAILED, "source %s gave no sample for %u s", c->source,
                                (unsigned) (CAPTURE_STALL_USEC / USEC_PER_SEC));
        if (r < 0 && d.done == 0)
                return ctl_fail(EXIT_SOURCE, "cannot open source %s: %s", c->source, strerror(-r));
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "source %s after %" PRIu64 " samples: %s", c->source, d.done, strerror(-r));
        ctl_progress_samples(p, d.done, c->samples * c->rows, true);
        return EXIT_OK;
}

int ctl_capture(const CtlCapture *c, CtlProgress *p, CtlSinkFn sink, void *userdata, const char *sink_name) {
        return c->direct ? capture_direct(c, p, sink, userdata, sink_name)
                         : capture_daemon(c, p, sink, userdata, sink_name);
}
