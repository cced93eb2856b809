/* ctlproto.h - the control protocol between truerandomd and truerandomctl,
 * version 1 (documented for other clients in truerandomctl(1)).
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket, one request per connection.
 * Every message is one packet, so the daemon can bound a request by its
 * size alone and never has to reassemble a stream.
 *
 *   request  "truerandom-control/1" SP verb *(SP key "=" value) [LF]
 *            at most CTL_REQUEST_MAX bytes, printable ASCII tokens; the
 *            verbs and their keys are ctlcommand.h's table:
 *              status
 *              reseed
 *              raw source=NAME [samples=N] [rows=R]
 *   replies  one or more packets, each  kind [SP payload]
 *              ok [SP payload]          final; status carries its JSON
 *              error SP code [SP text]  final
 *              start SP samples=N SP rows=R   raw: source opened, data follows
 *              data SP bytes            raw: samples, in order, any sizes
 *
 * A raw export of R rows opens the source afresh for each row and sends N
 * samples of it, so the bytes form the row-major R x N matrix that
 * SP 800-90B's restart test (ea_restart) reads.
 *
 * This module is the wire format only; the status payload is read by
 * ctlstatus.h and shown by ctl/render.h. Pure functions, no I/O.
 * Flow: truerandomctl -> [ctlproto] -> socket -> control -> daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctlcommand.h"

#define CTL_PROTOCOL "truerandom-control"
#define CTL_PROTOCOL_VERSION 1
#define CTL_REQUEST_MAX 4096U
/* One reply packet, kind included; a status larger than this is an error. */
#define CTL_REPLY_MAX 65536U
#define CTL_ERROR_TEXT_MAX 256U
#define CTL_SOURCE_NAME_MAX 32U
#define CTL_DATA_PREFIX "data "
#define CTL_DATA_PREFIX_SIZE (sizeof(CTL_DATA_PREFIX) - 1)

#define CTL_RAW_SAMPLES_DEFAULT 1000000U
#define CTL_RAW_SAMPLES_MAX 1000000000U
#define CTL_RAW_ROWS_MAX 1000000U
/* kernel-fed: the most bits one feed may report (16 blocks, the kernel's
 * whole input pool: truerandom-seed-kernel's FEED_BLOCKS_MAX). */
#define CTL_FED_BITS_MAX 4096U
/* SP 800-90B §3.1.4: 1000 restarts of 1000 samples each. */
#define CTL_RESTART_ROWS 1000U
#define CTL_RESTART_SAMPLES 1000U

/* A request: its command (a row of ctl_commands[]) and the values of the
 * arguments (ctl_args[]): those the request did not give hold their
 * fallback. */
typedef struct CtlRequest {
        const CtlCommand *command;
        char source[CTL_SOURCE_NAME_MAX + 1]; /* raw */
        uint64_t samples;                     /* raw: per row, 1..CTL_RAW_SAMPLES_MAX */
        uint64_t rows;                        /* raw: 1 = one stream; more = restarts */
        uint64_t bits;                        /* kernel-fed: bits given to the kernel */
        char reason[CTL_SOURCE_NAME_MAX + 1]; /* kernel-fed: why (boot, interval, ...) */
        char kind[CTL_SOURCE_NAME_MAX + 1];   /* induce: stuck, bias, repeat, selftest */
        uint64_t force;                       /* induce: 1 even if no healthy credited source stays */
} CtlRequest;

/* The error codes of "error" replies, and the errno each stands for. */
typedef enum CtlError {
        CTL_ERROR_MALFORMED,          /* -EBADMSG */
        CTL_ERROR_TOO_LARGE,          /* -EMSGSIZE */
        CTL_ERROR_VERSION,            /* -EPROTONOSUPPORT */
        CTL_ERROR_PERMISSION,         /* -EPERM, -EACCES */
        CTL_ERROR_UNKNOWN_SOURCE,     /* -ENOENT */
        CTL_ERROR_UNAVAILABLE,        /* -ENODEV */
        CTL_ERROR_BUSY,               /* -EBUSY */
        CTL_ERROR_TIMEOUT,            /* -ETIMEDOUT */
        CTL_ERROR_NO_DATA,            /* -ENODATA */
        CTL_ERROR_FAILED,             /* anything else */
        _CTL_ERROR_MAX,
} CtlError;

typedef enum CtlReplyKind {
        CTL_REPLY_OK,
        CTL_REPLY_ERROR,
        CTL_REPLY_START,
        CTL_REPLY_DATA,
        _CTL_REPLY_KIND_MAX,
} CtlReplyKind;

typedef struct CtlReply {
        CtlReplyKind kind;
        CtlError error;               /* error */
        const uint8_t *payload;       /* ok, data: the payload; error: the text; points into the message */
        size_t payload_size;
        uint64_t samples;             /* start */
        uint32_t rows;                /* start */
} CtlReply;

const char *ctl_error_to_string(CtlError e);
/* Unknown codes (a newer daemon) read as CTL_ERROR_FAILED: the text still says why. */
CtlError ctl_error_from_string(const char *s, size_t n);
CtlError ctl_error_from_errno(int r);
int ctl_error_to_errno(CtlError e);

/* A request for command (NULL: none yet) with every argument at its
 * fallback. */
void ctl_request_init(CtlRequest *req, const CtlCommand *command);

/* Writes the request packet into buf, every argument of its command in
 * the table's order; returns its length or -EINVAL (no such command, a
 * value out of its bounds), -ENOBUFS (buf too small). */
ssize_t ctl_request_format(const CtlRequest *req, char *buf, size_t size);

/* Why a request was refused: what the daemon's "error" reply says. */
#define CTL_REASON_MAX 64U

/* Parses one request packet. Returns 0, or -EMSGSIZE (over CTL_REQUEST_MAX),
 * -EPROTONOSUPPORT (another protocol version), -EBADMSG (anything else
 * malformed). On error reason (if not NULL) gets a text saying why, cut to
 * reason_size bytes (CTL_REASON_MAX hold every one). */
int ctl_request_parse(const void *msg, size_t size, CtlRequest *ret, char *reason, size_t reason_size);

/* Reply packets into buf; return the length, or -ENOBUFS. */
ssize_t ctl_reply_format(CtlReplyKind kind, const void *payload, size_t n, void *buf, size_t size);
/* text may be NULL; it is cut at CTL_ERROR_TEXT_MAX bytes and made printable. */
ssize_t ctl_reply_format_error(CtlError e, const char *text, void *buf, size_t size);
ssize_t ctl_reply_format_start(uint64_t samples, uint32_t rows, void *buf, size_t size);

/* Parses one reply packet; ret points into msg. -EMSGSIZE, -EBADMSG. */
int ctl_reply_parse(const void *msg, size_t size, CtlReply *ret);
