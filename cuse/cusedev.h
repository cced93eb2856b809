/* cusedev.h - the CUSE devices: /dev/truerandom and the drop-in /dev/random
 * and /dev/urandom (DESIGN §3, §6), all behind one hub.
 *
 * The hub owns one libfuse session per device and everything a request can
 * touch: open files, parked reads, poll handles. It never waits: a read that
 * cannot be answered is parked (its fuse_req_t kept, no thread per reader)
 * and answered by cusehub_pump() when blocks arrive, by its interrupt, or at
 * shutdown. Exactly one reply per request: whoever takes a request off a park
 * list sends it.
 *
 * The loop (daemon/) owns the fds: it calls cusedev_process() when a session
 * fd is readable, cusehub_pump() when the store may have new blocks or a
 * reseed was asked for, and cusehub_serve_backlog() once per turn while
 * replies wait to go out a batch at a time (so no turn holds the loop).
 * When and from what the CRNG is seeded is the Seeder's policy
 * (crng/seeder.h): the hub pumps it before any reader and
 * passes RNDRESEEDCRNG and ioctl credit to it. The hub reports upward only
 * through the callbacks below and cusedev_get_stats(); it never logs.
 * Single-threaded: everything runs on the loop thread.
 * Flow: store -> seeder -> CRNG (seeds first) -> fair queue -> [CUSE replies]. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "crng/crng.h"
#include "crng/seeder.h"
#include "cuse/privilege.h"
#include "pool/store.h"

struct fuse_custom_io;

typedef enum CuseDevKind {
        CUSEDEV_TRNG,    /* /dev/truerandom: full-entropy blocks, blocking, fair */
        CUSEDEV_RANDOM,  /* drop-in /dev/random: CRNG, blocks until seeded */
        CUSEDEV_URANDOM, /* drop-in /dev/urandom: CRNG, never blocks */
        CUSEDEV_NULL,    /* zeros through the same loop: the benchmarks' floor */
        _CUSEDEV_KIND_MAX,
} CuseDevKind;

typedef enum CuseEvent {
        CUSE_EVENT_UP,            /* the kernel accepted the device; node set up */
        CUSE_EVENT_REJECTED,      /* the kernel refused it (e.g. the name exists) */
        CUSE_EVENT_NODE_ERROR,    /* chown/chmod of the node failed: error says why */
        CUSE_EVENT_SEEDED,        /* the CRNG got its first credited seed */
} CuseEvent;

/* Most devices one hub serves: the four of the configuration's rows and
 * a /dev/truerandom-SOURCE for each of up to 12 credited sources. */
#define CUSE_MAX_DEVICES 16

typedef struct CuseHub CuseHub;
typedef struct CuseDev CuseDev;

/* Any member may be NULL: nothing to tell. */
typedef struct CuseHubCallbacks {
        /* A device changed state (see CuseEvent); error is -errno or 0. */
        void (*event)(void *userdata, CuseDev *dev, CuseEvent event, int error);
        /* Readers started or stopped waiting: the loop re-evaluates demand. */
        void (*demand)(void *userdata);
        /* Replies wait to go out that the hub answers a batch at a time
         * (the drop-in random's readers at its first seed, long reads'
         * later requests): the loop calls cusehub_serve_backlog() once on
         * each later turn until it returns false. */
        void (*backlog)(void *userdata);
        /* Called before every request a session hands the hub, inside a
         * drain of several too (cusedev_process()): what must be looked at
         * before any request is served (a resume, a VM fork) is. */
        void (*before_request)(void *userdata);
        /* Spends one of uid's looks at /proc (the request's uid, root's
         * too), before a privileged ioctl's check or an open's account:
         * false when it has none left, and then nothing is read: the ioctl
         * is told EAGAIN, the open charged to CUSE_UID_USERNS. NULL: no
         * budget. */
        bool (*proc_budget)(void *userdata, uint32_t uid);
        void *userdata;
} CuseHubCallbacks;

/* The account that every caller outside the daemon's user namespace is
 * charged to, whatever its uid: containers, and the subordinate uids
 * (/etc/subuid, newuidmap) with which one account runs processes as
 * thousands of host uids. Together they hold one uid's quota of waiting
 * reads and open files and one uid's turn in the fair queue, so they
 * cannot crowd out the host's users. Decided at open (cusedev_charge()),
 * for the file's whole life. (uid_t)-2: no user has it; a host process
 * running as it would share their account. */
#define CUSE_UID_USERNS UINT32_C(0xFFFFFFFE)

/* Bounds on what callers hold (DESIGN §6). Root's waiting reads are held
 * to max_parked_per_uid as every uid's are, and the waiting reads of every
 * other uid together stop that many short of max_parked: root's reserve.
 * Root's open files are not bounded. */
typedef struct CuseHubLimits {
        unsigned max_parked;          /* waiting reads per device; beyond: EAGAIN */
        unsigned max_parked_per_uid;  /* of them, one uid's (root's too; CUSE_UID_USERNS one) */
        unsigned max_open_per_uid;    /* /dev/truerandom files of one uid but root; beyond: EMFILE */
        unsigned max_dropin_open_per_uid; /* the same for each other device */
        PrivilegeMode privileged_ioctls; /* who the drop-ins' privileged ioctls admit */
} CuseHubLimits;

typedef struct CuseHubParams {
        CuseHubLimits limits;     /* each >= 1, max_parked_per_uid < max_parked */
        const char *proc_root;    /* for privilege checks; NULL = /proc */
} CuseHubParams;

typedef struct CuseDevParams {
        const char *name;         /* CUSE DEVNAME */
        const char *dev_dir;      /* where the node appears ("/dev"); NULL: leave it alone */
        uid_t uid;                /* applied in init_done; (uid_t)-1 keeps */
        gid_t gid;                /* (gid_t)-1 keeps */
        mode_t mode;
        /* CUSEDEV_TRNG only: serve the blocks of store source id source
         * (< STORE_SOURCES_MAX) alone, /dev/truerandom-SOURCE; false: any. */
        bool per_source;
        unsigned source;
        /* A kind whose ioctls carry buffers (the drop-ins' RNDADDENTROPY)
         * registers with CUSE_UNRESTRICTED_IOCTL unless this is set; then
         * RNDADDENTROPY fails with EOPNOTSUPP. The other kinds never do. */
        bool restricted_ioctl;
} CuseDevParams;

typedef struct CuseDevStats {
        CuseDevKind kind;
        bool up;
        bool per_source;          /* serves the blocks of source alone */
        unsigned source;
        bool unrestricted_ioctl;  /* registered with CUSE_UNRESTRICTED_IOCTL */
        unsigned open_files;
        unsigned parked;
        unsigned parked_uids;
        uint64_t reads;
        uint64_t bytes_served;
        uint64_t eagain;
        uint64_t interrupted;
} CuseDevStats;

/* store, crng and seeder are borrowed; they outlive the hub. */
int cusehub_new(const CuseHubParams *params, Store *store, Crng *crng, Seeder *seeder,
                const CuseHubCallbacks *cb, CuseHub **ret);
/* Frees every device (closing their sessions; parked reads must have been
 * failed with cusehub_shutdown() first). Takes NULL, returns NULL. */
CuseHub *cusehub_free(CuseHub *hub);

/* Creates a device of kind (its row in cuse/cusekinds.c) with its session
 * on fd, served by hub from then on. With io == NULL fd is an open
 * /dev/cuse (non-blocking) and the session adopts it; with io, a custom
 * transport (the protocol tests' socketpair). The session owns fd from here
 * on, even on error. -EINVAL: no such kind, a bad name, per_source on
 * another kind than CUSEDEV_TRNG or with a source out of range, or the hub
 * has CUSE_MAX_DEVICES already. */
int cusedev_new(CuseHub *hub, CuseDevKind kind, const CuseDevParams *params, int fd,
                const struct fuse_custom_io *io, CuseDev **ret);

int cusedev_fd(const CuseDev *dev);
CuseDevKind cusedev_kind(const CuseDev *dev);
const char *cusedev_name(const CuseDev *dev);

/* Reads and handles one request; while long reads' later requests wait
 * (see cusedev.c) it reads on, up to CUSEDEV_DRAIN_MAX more, so their
 * interrupts come first. before_request runs before each. 0: handled;
 * -EAGAIN: nothing there; -ENODEV: the session is over (unmounted, kernel
 * gone); other -errno: fatal. */
#define CUSEDEV_DRAIN_MAX 64
int cusedev_process(CuseDev *dev);

/* Re-applies owner and mode to the node (after a reload). */
int cusedev_set_node(CuseDev *dev, uid_t uid, gid_t gid, mode_t mode);

/* Serves what the store holds: a due CRNG seed first (seeder_pump()), then
 * waiting /dev/truerandom readers, block by block, round robin across uids.
 * Run it after seeder_trigger(). */
void cusehub_pump(CuseHub *hub);

/* Most bytes one cusehub_serve_backlog() hands a device's waiting replies
 * (at least one reply): at the TCG guest's ~60 MB/s of CRNG output 1 MiB
 * is ~17 ms, so the loop turns (watchdog, signals, other readers) between
 * batches however many reads waited for the first seed. */
#define CUSEHUB_BACKLOG_BYTES (1U << 20)

/* Answers one batch of the replies that wait (CuseHubCallbacks.backlog);
 * true while more wait. */
bool cusehub_serve_backlog(CuseHub *hub);

/* Whether /dev/truerandom may hand out blocks (enough healthy sources).
 * Closed: readers stay parked and O_NONBLOCK gets EAGAIN: it fails closed.
 * Opened: waiting readers are served at the next cusehub_pump() (the
 * loop's one pump of its turn comes after it decided). */
void cusehub_set_trng_open(CuseHub *hub, bool open);

/* Which sources' own devices (CuseDevParams.per_source) may hand out
 * blocks, bit i for source id i: the source is healthy. Such a device
 * serves only while /dev/truerandom may too (cusehub_set_trng_open()) and
 * its bit is set; otherwise it stalls like /dev/truerandom. All clear at
 * first. */
void cusehub_set_sources_open(CuseHub *hub, uint32_t sources);

/* The sources whose own devices have waiting readers (bit i: source id i),
 * for store_set_wanted(). */
uint32_t cusehub_wanted_sources(const CuseHub *hub);

/* Readers are waiting for blocks (TRNG, or drop-in random before seeding),
 * or a seed is due: the sources should run. */
bool cusehub_wants_blocks(const CuseHub *hub);

/* Answers every parked read with -err and wakes pollers; later reads get err
 * too. For SIGTERM (EIO) and session loss. */
void cusehub_shutdown(CuseHub *hub, int err);

void cusedev_get_stats(const CuseDev *dev, CuseDevStats *ret);

/* Applies reloaded bounds (what callers hold already stays); invalid
 * bounds (see CuseHubParams) change nothing: -EINVAL. */
int cusehub_set_limits(CuseHub *hub, const CuseHubLimits *limits);

/* Iteration for status: NULL-terminated order of creation. */
CuseDev *cusehub_device(CuseHub *hub, size_t i);

const char *cusedev_kind_to_string(CuseDevKind kind);
