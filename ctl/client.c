/* client.c - truerandomctl's side of the control socket (see client.h).
 * Flow: truerandomctl -> [client] -> socket -> control. */
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "config-build.h"
#include "config/config.h"
#include "util/cleanup.h"

#define DEFAULT_SOCKET RUNSTATEDIR "/truerandomd/control"

static char last_failure[512];

int ctl_fail(int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(last_failure, sizeof(last_failure), fmt, ap);
        va_end(ap);
        fprintf(stderr, "truerandomctl: %s\n", last_failure);
        return code;
}

const char *ctl_last_failure(void) {
        return last_failure;
}

char *ctl_configured_socket(const char *config_path) {
        Config config;
        char *error = NULL, *path = NULL;

        if (config_load(config_path ? config_path : CONFIG_DEFAULT_PATH, true, &config, &error) == 0) {
                path = config.socket_path;
                config.socket_path = NULL;
                config_done(&config);
        }
        free(error);
        return path ? path : strdup(DEFAULT_SOCKET);
}

char *ctl_socket_path(const char *socket, const char *config_path) {
        return socket ? strdup(socket) : ctl_configured_socket(config_path);
}

static int connect_daemon(const char *path, usec_t timeout, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = (time_t) (timeout / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (timeout % USEC_PER_SEC) };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return ctl_fail(EXIT_USAGE, "socket path too long: %s", path);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return ctl_fail(EXIT_FAILED, "socket: %s", strerror(errno));
        /* Both timeouts before connect(): on a listener whose backlog is
         * full (a stuck daemon, a flood), a blocking connect() waits for
         * as long as the send timeout allows, and then fails EAGAIN. */
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;
                close(fd);
                if (e == EAGAIN || e == ETIMEDOUT)
                        return ctl_fail(EXIT_FAILED, "busy: truerandomd accepted no connection within %d s (%s)",
                                        (int) (timeout / USEC_PER_SEC), path);
                if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR)
                        return ctl_fail(EXIT_NOT_RUNNING, "truerandomd is not running (%s: %s)", path, strerror(e));
                if (e == EACCES || e == EPERM)
                        return ctl_fail(EXIT_PERMISSION, "permission denied on the control socket %s", path);
                return ctl_fail(EXIT_FAILED, "cannot connect to %s: %s", path, strerror(e));
        }
        *ret_fd = fd;
        return EXIT_OK;
}

/* The send of the request failed with e. A daemon that turns connections
 * away ("busy") answers and closes as it accepts, before a request can
 * arrive: that answer is still there to read, and says more than EPIPE. */
static int answer_after_failed_send(int fd, int e) {
        _cleanup_free_ uint8_t *buf = malloc(CTL_REPLY_MAX);
        ssize_t n = buf ? recv(fd, buf, CTL_REPLY_MAX, MSG_DONTWAIT | MSG_TRUNC) : -1;
        CtlReply r;

        if ((e == EPIPE || e == ECONNRESET) && n > 0 && (size_t) n <= CTL_REPLY_MAX &&
            ctl_reply_parse(buf, (size_t) n, &r) == 0)
                return ctl_reply_error(&r);
        return ctl_fail(EXIT_FAILED, "sending to truerandomd: %s", strerror(e));
}

int ctl_request(const char *socket_path, const CtlRequest *req, usec_t timeout, int *ret_fd) {
        char msg[CTL_REQUEST_MAX];
        ssize_t n = ctl_request_format(req, msg, sizeof(msg));
        _cleanup_close_ int fd = -1;
        int code;

        if (n < 0)
                return ctl_fail(EXIT_USAGE, "invalid source name '%s'", req->source);
        code = connect_daemon(socket_path, timeout, &fd);
        if (code != EXIT_OK)
                return code;
        if (send(fd, msg, (size_t) n, MSG_NOSIGNAL) != n)
                return answer_after_failed_send(fd, errno);
        *ret_fd = fd;
        fd = -1;
        return EXIT_OK;
}

int ctl_receive(int fd, uint8_t *buf, usec_t timeout, CtlReply *ret) {
        unsigned resets = 0;
        ssize_t n;

        /* A daemon that turns the connection away ("busy") answers and
         * closes at once; if our request was still unread there, the reset
         * this causes is reported before the answer queued ahead of it. */
        do
                n = recv(fd, buf, CTL_REPLY_MAX, MSG_TRUNC);
        while (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ == 0)));
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return ctl_fail(EXIT_FAILED, "no answer from truerandomd within %d s",
                                (int) (timeout / USEC_PER_SEC));
        if (n < 0)
                return ctl_fail(EXIT_FAILED, "reading from truerandomd: %s", strerror(errno));
        if (n == 0)
                return ctl_fail(EXIT_PROTOCOL, "truerandomd closed the connection without an answer");
        if ((size_t) n > CTL_REPLY_MAX || ctl_reply_parse(buf, (size_t) n, ret) < 0)
                return ctl_fail(EXIT_PROTOCOL, "malformed reply from truerandomd");
        return EXIT_OK;
}

int ctl_reply_error(const CtlReply *r) {
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
                return ctl_fail(EXIT_PROTOCOL, "unexpected '%s' reply from truerandomd",
                                r->kind == CTL_REPLY_OK ? "ok" : r->kind == CTL_REPLY_START ? "start" : "data");
        if (len > 0)
                return ctl_fail(map[r->error].code, "%s: %.*s", map[r->error].what, len, (const char *) r->payload);
        return ctl_fail(map[r->error].code, "%s", map[r->error].what);
}

int ctl_request_ok(const char *socket_path, const CtlRequest *req, uint8_t *buf, CtlReply *ret) {
        int fd = -1, code;

        if (!buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        code = ctl_request(socket_path, req, CTL_CLIENT_TIMEOUT_USEC, &fd);
        if (code == EXIT_OK)
                code = ctl_receive(fd, buf, CTL_CLIENT_TIMEOUT_USEC, ret);
        if (code == EXIT_OK && ret->kind != CTL_REPLY_OK)
                code = ctl_reply_error(ret);
        if (fd >= 0)
                close(fd);
        return code;
}
