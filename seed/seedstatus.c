/* seedstatus.c - one status request to truerandomd (see seedstatus.h). */
#include "seedstatus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctlcommand.h"
#include "proto/ctlproto.h"
#include "proto/ctlstatus.h"
#include "util/cleanup.h"

DEFINE_FREEP(CtlStatus, ctl_status_free);

static uint64_t counter(const CtlStatusObject *o, const char *key) {
        double v;

        if (!ctl_status_get_number(o, key, &v) || v < 0)
                return 0;
        return (uint64_t) v;
}

static const char *why_not_serving(const CtlStatusObject *root) {
        if (ctl_status_is_true(root, "stopping"))
                return "truerandomd is stopping";
        if (!ctl_status_is_true(root, "ready"))
                return "truerandomd is starting";
        return "/dev/truerandom is closed (too few healthy sources)";
}

int seed_status_from_json(const char *text, size_t n, SeedStatus *ret) {
        _cleanup_(ctl_status_freep) CtlStatus *s = NULL;
        const CtlStatusObject *root;
        SeedStatus st = { .serving = false };
        int r;

        r = ctl_status_parse(text, n, &s);
        if (r < 0)
                return r;
        root = ctl_status_root(s);
        st.serving = ctl_status_health(s) != CTL_HEALTH_NOT_SERVING;
        st.vm_generation_changes = counter(ctl_status_get_object(root, "crng"), "vm_generation_changes");
        st.resumes = counter(ctl_status_get_object(root, "resume"), "jumps");
        if (!st.serving)
                snprintf(st.why, sizeof(st.why), "%s", why_not_serving(root));
        *ret = st;
        return 0;
}

static int connect_socket(const char *path, usec_t timeout) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = (time_t) (timeout / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (timeout % USEC_PER_SEC) };
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* Before connect(): a daemon whose backlog is full makes a
         * blocking connect() wait as long as the send timeout allows. */
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        return TAKE_FD(fd);
}

/* One request, and its "ok" reply read into buf (CTL_REPLY_MAX bytes),
 * parsed into *ret (its payload inside buf). 0, or -errno: the daemon's
 * error reply as its errno, -EBADMSG for a reply not understood. */
static int ask(const char *socket_path, usec_t timeout, const CtlRequest *req, uint8_t *buf, CtlReply *ret) {
        _cleanup_close_ int fd = -1;
        char msg[128];
        ssize_t n;

        n = ctl_request_format(req, msg, sizeof(msg));
        if (n < 0)
                return (int) n;
        fd = connect_socket(socket_path, timeout);
        if (fd < 0)
                return fd;
        /* One packet: SEQPACKET sends it whole or not at all. */
        if (send(fd, msg, (size_t) n, MSG_NOSIGNAL) < 0)
                return -errno;
        do
                n = recv(fd, buf, CTL_REPLY_MAX, MSG_TRUNC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        if (n == 0 || (size_t) n > CTL_REPLY_MAX || ctl_reply_parse(buf, (size_t) n, ret) < 0)
                return -EBADMSG;
        if (ret->kind == CTL_REPLY_ERROR)
                return ctl_error_to_errno(ret->error);
        return ret->kind == CTL_REPLY_OK ? 0 : -EBADMSG;
}

int seed_status_report_fed(const char *socket_path, usec_t timeout, unsigned bits, const char *reason) {
        CtlRequest req = { .command = ctl_command_from_string("kernel-fed"), .bits = bits };
        _cleanup_free_ uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlReply reply;

        if (!buf)
                return -ENOMEM;
        if (strlen(reason) >= sizeof(req.reason))
                return -EINVAL;
        strcpy(req.reason, reason);
        return ask(socket_path, timeout, &req, buf, &reply);
}

int seed_status_fetch(const char *socket_path, usec_t timeout, SeedStatus *ret) {
        const CtlRequest req = { .command = ctl_command_from_string("status") };
        _cleanup_free_ uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlReply reply;
        int r;

        if (!buf)
                return -ENOMEM;
        r = ask(socket_path, timeout, &req, buf, &reply);
        if (r < 0)
                return r;
        return seed_status_from_json((const char *) reply.payload, reply.payload_size, ret);
}
