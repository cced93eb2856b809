/* client.h - truerandomctl's side of the control socket (ctlproto.h),
 * and how every command fails: one line on stderr, "truerandomctl: why",
 * and a documented exit code (truerandomctl(1)), so a script can tell "not
 * root" from "no daemon" from "no such source".
 * Flow: truerandomctl -> [client] -> socket -> control -> daemon. */
#pragma once

#include <stdint.h>

#include "proto/ctlproto.h"
#include "util/time-util.h"

enum {
        EXIT_OK = 0,
        EXIT_PERMISSION = 1,  /* the daemon refused (not root), or the socket did */
        EXIT_NOT_RUNNING = 3, /* no socket, or nothing listening on it */
        EXIT_SOURCE = 4,      /* unknown source, or not enabled/available */
        EXIT_PROTOCOL = 5,    /* the two sides do not understand each other */
        EXIT_FAILED = 6,      /* the operation itself failed */
        EXIT_RESTART = 7,     /* assess --restart: the restart test failed */
        EXIT_VERIFY = 8,      /* ledger --verify: the chain does not hold */
        /* sysexits.h's EX_USAGE: apart from status's verdicts (2 is "not
         * serving"), so a typo in a check script does not page as one. */
        EXIT_USAGE = 64,
};

#define CTL_CLIENT_TIMEOUT_USEC (30U * USEC_PER_SEC)
/* Longer than the daemon's own stall limit, which then reports first. */
#define CTL_CLIENT_RAW_TIMEOUT_USEC (90U * USEC_PER_SEC)

/* Prints "truerandomctl: " and the message, keeps it for
 * ctl_last_failure(), and returns code. */
int ctl_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ctl_last_failure(void);

/* The socket of the configuration at config_path (NULL: the default
 * file): any trouble with the file means the built-in default. malloc'd. */
char *ctl_configured_socket(const char *config_path);
/* socket (--socket) if not NULL, else the configuration's; malloc'd. */
char *ctl_socket_path(const char *socket, const char *config_path);

/* Connects (replies time out after timeout) and sends req; EXIT_OK with
 * *ret_fd, or the exit code after saying why. */
int ctl_request(const char *socket_path, const CtlRequest *req, usec_t timeout, int *ret_fd);
/* One reply packet into buf (CTL_REPLY_MAX bytes); EXIT_OK or the exit
 * code after saying why. */
int ctl_receive(int fd, uint8_t *buf, usec_t timeout, CtlReply *ret);
/* The exit code of an error reply, after saying it; EXIT_PROTOCOL for a
 * reply of a kind not expected here. */
int ctl_reply_error(const CtlReply *r);

/* One request, one "ok" reply into buf (CTL_REPLY_MAX bytes; NULL: out of
 * memory); EXIT_OK or the exit code after saying why. */
int ctl_request_ok(const char *socket_path, const CtlRequest *req, uint8_t *buf, CtlReply *ret);
