/* egd.h - the EGD socket: full-entropy blocks for hypervisors and tools
 * that speak the Entropy Gathering Daemon's protocol (proto/egdwire.h):
 * QEMU's rng-egd backend behind a guest's virtio-rng, libvirt's
 * <backend model='egd'>, OpenSSL's RAND_egd().
 *
 * An AF_UNIX SOCK_STREAM socket, mode 0660, group [device] group: who may
 * connect is the file's business, as with /dev/truerandom's node. The bytes
 * are /dev/truerandom's: store blocks (32 bytes of full entropy each),
 * each handed to one request once, the unserved tail of a block erased;
 * nothing when /dev/truerandom does not serve (fail closed: a waiting read
 * waits). Waiting reads are dealt the store's blocks one at a time, as
 * /dev/truerandom's are: round robin across the peers' uids (SO_PEERCRED;
 * callers in user namespaces count as one uid, CUSE_UID_USERNS, as on the
 * devices), FIFO within a uid; each block's bytes go to the peer at once
 * (EGD is a byte stream: a read of LEN bytes is answered by LEN bytes in
 * as many pieces as blocks came), so no block is held back across a VM
 * generation change's purge. A waiting read costs its connection's
 * record, no thread. Bounds, as the devices': connections per
 * uid ([device] max_open_per_uid) and in all ([device] max_parked, the last
 * ninth kept for root); waiting reads per uid ([device] max_parked_per_uid);
 * a peer over a bound, sending what is not EGD, or writing without being
 * root is disconnected. A peer that hangs up is dropped at once, waiting
 * read and all. Writes (0x03) from root are mixed into the CRNG and never
 * credited; nobody else's bytes are taken in.
 *
 * Runs on the loop thread. Nothing here logs: counters go up in EgdStats,
 * errors as -errno.
 * Flow: store -> [egd: fair queue -> reply] -> hypervisor -> guest. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "crng/crng.h"
#include "crng/seeder.h"
#include "pool/store.h"

typedef struct Egd Egd;

typedef struct EgdLimits {
        unsigned max_connections;      /* in all; root alone may take the last ninth */
        unsigned max_per_uid;          /* connections of one uid but root's */
        unsigned max_waiting_per_uid;  /* waiting reads of one uid but root's */
} EgdLimits;

typedef struct EgdParams {
        const char *path;
        gid_t gid;                     /* the file's group; (gid_t)-1 keeps the daemon's */
        EgdLimits limits;
        /* Where a peer's user namespace is looked up (cuse/privilege.h);
         * NULL: /proc. */
        const char *proc_root;
} EgdParams;

typedef struct EgdCallbacks {
        /* A read started waiting, or one was served: the loop's turn
         * (demand for the sources, and its one pump). */
        void (*changed)(void *userdata);
        /* Spends one of uid's looks at /proc: false when it has none left,
         * and then the peer is charged to the account user namespaces
         * share, with no look. NULL: no budget. */
        bool (*proc_budget)(void *userdata, uint32_t uid);
        void *userdata;
} EgdCallbacks;

typedef struct EgdStats {
        unsigned connections;          /* now */
        unsigned waiting;              /* reads waiting now */
        unsigned waiting_uids;
        uint64_t accepted;
        uint64_t refused;              /* connections over a bound */
        uint64_t dropped;              /* disconnected: not EGD, a write not root's, a waiting bound */
        uint64_t requests;
        uint64_t bytes_served;
        uint64_t bytes_written;        /* root's writes mixed into the CRNG */
} EgdStats;

/* Listens on params->path (its directory made if missing, one level; a
 * stale socket replaced, a live one refused: -EADDRINUSE) and serves on
 * event. store, crng and seeder are borrowed and outlive it. */
int egd_new(sd_event *event, const EgdParams *params, Store *store, Crng *crng, Seeder *seeder,
            const EgdCallbacks *cb, Egd **ret);
/* Closes every connection and removes the socket if it is still ours.
 * Takes NULL, returns NULL. */
Egd *egd_free(Egd *e);

/* Whether /dev/truerandom serves: closed, reads wait and bits ready is 0. */
void egd_set_open(Egd *e, bool open);
/* Deals the store's blocks to the waiting reads; a due CRNG seed must have
 * been taken first (the loop pumps the hub before). */
void egd_pump(Egd *e);
/* Reads are waiting: the sources should run. */
bool egd_wants_blocks(const Egd *e);
/* Disconnects every peer (SIGTERM): a guest's reads then stall. */
void egd_shutdown(Egd *e);
/* Reloaded bounds; what peers hold already stays. -EINVAL: a zero bound. */
int egd_set_limits(Egd *e, const EgdLimits *limits);
void egd_get_stats(const Egd *e, EgdStats *ret);
const char *egd_path(const Egd *e);
