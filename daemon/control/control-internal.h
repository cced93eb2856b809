/* control-internal.h - what control.c (connections, on the loop) and
 * ctlexport.c (raw exports, one thread each) share. Not for other modules:
 * control.h is the interface. */
#pragma once

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "control.h"
#include "proto/ctlproto.h"

/* The collector's chunk (pool/collector.c): the export reads the source in
 * the same sizes, so the same samples come out of it. */
#define CONTROL_READ_CHUNK 4096U
#define CONTROL_BACKOFF_MIN_MS 10
#define CONTROL_BACKOFF_MAX_MS 1000
/* An error reply: its text and the framing. */
#define CONTROL_ERROR_MSG_MAX (CTL_ERROR_TEXT_MAX + 64)
/* Device errors in a row that end an export (about 0.3 s of backoff). */
#define CONTROL_EXPORT_ERRORS_MAX 5U

typedef struct Conn Conn;
typedef struct Export Export;

struct Conn {
        Control *control;
        LIST_ENTRY(Conn) link;
        int fd;
        uid_t uid;                 /* the peer's: root or not */
        uid_t charge;              /* whose connections it counts among */
        sd_event_source *io, *deadline;
        uint8_t *out;              /* a final reply waiting for socket room */
        size_t out_size;
};

struct Export {
        Control *control;
        LIST_ENTRY(Export) link;
        pthread_t thread;
        int fd;
        const SourceOps *ops;
        SourceParams params;
        SelftestResult selftest;   /* the last open's, params.selftest points here */
        char *path, *sysfs_dir;    /* copies: a reload may free the config's */
        char name[CTL_SOURCE_NAME_MAX + 1];
        uint64_t samples;
        uint32_t rows;
        uint64_t sent;
        atomic_bool done;
        uint8_t buf[CTL_DATA_PREFIX_SIZE + CONTROL_READ_CHUNK];
};

struct Control {
        sd_event *event;
        ControlCallbacks cb;
        char *socket_path;
        dev_t dev;
        ino_t ino;
        int listen_fd;
        sd_event_source *listen_source, *accept_pause;
        LIST_HEAD(, Conn) conns;
        unsigned n_conns;
        LIST_HEAD(, Export) exports;
        unsigned n_exports;
        int stop_fd;
        int done_fd;
        sd_event_source *done_source;
};

/* ---- control.c ---- */

/* Closes a connection fd, its unread requests discarded first. */
void control_close_drained(int fd);
void control_conn_free(Conn *conn);
/* strerror_r's text for an -errno or errno. */
const char *control_errno_text(int r, char *buf, size_t size);
/* An error reply with the text fmt makes (cut to CTL_ERROR_TEXT_MAX), in
 * msg: its length, or -errno from ctl_reply_format_error(). */
ssize_t control_format_error(CtlError e, char msg[static CONTROL_ERROR_MSG_MAX], const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* ---- ctlexport.c ---- */

/* Hands conn to a new export thread (conn is freed) or returns -errno
 * (conn is still the caller's, without its io sources). */
int control_export_start(Conn *conn, const CtlRequest *req, const SourceOps *ops, const SourceParams *params);
/* Joins the exports that are done, or all of them. */
void control_join_exports(Control *c, bool all);
