/* control.h - truerandomd's control socket (truerandomctl's peer).
 *
 * An AF_UNIX SOCK_SEQPACKET socket, mode 0666: anyone may connect and ask
 * for status; privilege is decided per request from the peer's SO_PEERCRED
 * uid (0 = root), never from the file mode. raw and reseed are root only.
 * The protocol is in ctlproto.h and truerandomctl(1).
 *
 * Everything but raw exports runs on the caller's sd-event loop and never
 * blocks it: requests are single packets read non-blockingly, a connection
 * that sends nothing within CONTROL_DEADLINE_USEC is answered "timeout" and
 * closed, at most CONTROL_MAX_CONNECTIONS wait at once, the last few kept
 * for root and at most CONTROL_MAX_PER_UID of any other uid (more get
 * "busy", whatever they would have asked). Peers in user namespaces count
 * as one uid together (CUSE_UID_USERNS, as on the devices): subordinate
 * uids do not add up to more.
 * A raw export runs in a thread of its own (export.h) with its own
 * instance of the source, captured as pool/capture.h captures (the
 * collector's chunk size, its backoff), so the bytes are the very samples
 * the health tests would see; it never touches the store or the CRNG, so
 * readers are not disturbed. At most CONTROL_MAX_EXPORTS run at once.
 * What each command does is commands.c's table; this file's objects are
 * the socket and its connections.
 * Nothing here logs: errors go up as -errno; the loop logs.
 * Flow: truerandomctl -> socket -> [control] -> commands -> callbacks into
 * the daemon. */
#pragma once

#include <systemd/sd-event.h>

#include "pool/source.h"
#include "proto/ctlproto.h"
#include "util/time-util.h"

#define CONTROL_DEADLINE_USEC (5U * USEC_PER_SEC)
#define CONTROL_MAX_CONNECTIONS 16U
/* Of those, only root may take the last CONTROL_ROOT_RESERVED, and no
 * other uid more than CONTROL_MAX_PER_UID: a user who keeps connections
 * open (each lives CONTROL_DEADLINE_USEC) locks neither root nor the other
 * users out. */
#define CONTROL_ROOT_RESERVED 4U
#define CONTROL_MAX_PER_UID 4U
#define CONTROL_MAX_EXPORTS 2U
/* An export whose client takes nothing for this long is ended (as one
 * whose source yields nothing for capture.h's stall limit, also a
 * minute). */
#define CONTROL_EXPORT_STALL_USEC (60U * USEC_PER_SEC)

typedef struct Control Control;

typedef struct ControlCallbacks {
        /* Status as one JSON object (schema in truerandomctl(1)); malloc'd. */
        int (*status_json)(void *userdata, char **ret_json);
        /* Every command with no handler of the socket's own (commands.c:
         * status and raw are the socket's): the daemon's answer to req,
         * whose root-only row control.c has already enforced. 0 with
         * *ret_payload malloc'd (or left NULL: a bare "ok"); or -errno with
         * text (text_size bytes) saying why, the reply's code following the
         * errno (ctl_error_from_errno()). */
        int (*command)(void *userdata, const CtlRequest *req, char **ret_payload, char *text, size_t text_size);
        /* The configured parameters of a source for a raw export: -ENOENT
         * unknown name, -ENODEV not enabled. The strings in *ret_params are
         * borrowed only until the call returns (control copies them). */
        int (*raw_source)(void *userdata, const char *name, const SourceOps **ret_ops, SourceParams *ret_params);
        void *userdata;
        /* Where a peer's user namespace is looked up (privilege.h); NULL:
         * /proc. */
        const char *proc_root;
        /* Spends one of uid's looks at /proc: false when it has none left,
         * and then the peer is charged to the account user namespaces
         * share, with no look. NULL: no budget. */
        bool (*proc_budget)(void *userdata, uint32_t uid);
} ControlCallbacks;

/* Creates socket_path's directory if missing (0755, one level), refuses
 * (-EADDRINUSE) when a live daemon answers there, replaces a stale socket,
 * and starts serving on event. */
int control_new(sd_event *event, const char *socket_path, const ControlCallbacks *cb, Control **ret);

/* Stops exports (each within one source read or backoff wait, about 1 s
 * at most) and joins their threads, closes every connection, unlinks the socket if it is still ours.
 * Takes NULL; returns NULL. */
Control *control_free(Control *c);
