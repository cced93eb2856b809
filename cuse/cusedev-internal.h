/* cusedev-internal.h - what the files of cuse/ share: the hub, devices,
 * open files and parked reads, and CuseDevOps, through which the hub and
 * cusedev.c know a kind of device.
 *
 * Direction, from the top: cusekinds.c (the table of kinds, one
 * CuseDevOps each, and cusedev_new(), which creates a device of a kind and
 * gives it to the hub) -> the devices (trngdev.c, crngdev.c) -> the hub
 * (cusehub.c) -> cusedev.c and parked.c (what every device shares). The
 * hub, cusedev.c and parked.c call a device only through its CuseDevOps,
 * and the loop only through CuseHubCallbacks (never NULL: the hub fills in
 * no-ops); devices never call each other. Nothing outside cuse/ includes
 * this. */
#pragma once

#define FUSE_USE_VERSION 314
#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>
#include <sys/queue.h>

#include "cusedev.h"
#include "fairq.h"
#include "rndioctl.h"
#include "uidhash.h"

/* Most bytes one reply carries: CUSE's max_read (libfuse 3.14 offers 128 KiB). */
#define CUSE_MAX_REPLY 131072U

typedef struct CuseFile {
        TAILQ_ENTRY(CuseFile) link;  /* the device's open files */
        CuseDev *dev;
        uint32_t charge;             /* whose account its reads and the file itself count
                                      * against: the opener's uid or CUSE_UID_USERNS
                                      * (RELEASE carries no uid) */
        struct fuse_pollhandle *ph; /* newest poll handle; NULL once notified */
} CuseFile;

/* A read waiting for data, or a long read's next request held back. It is
 * on exactly one list (the device's fair queue, or its deferred list) until
 * the one reply is sent. */
typedef struct Parked {
        fuse_req_t req;
        CuseDev *dev;
        size_t size;
        uint32_t uid;                /* its file's charge (the fair queue's key) */
        FairEntry fair;              /* the device's queue of waiting reads */
        TAILQ_ENTRY(Parked) deferred_link; /* drop-ins: the deferred list */
        STAILQ_ENTRY(Parked) touched; /* TRNG pump: reads that get blocks this round */
        size_t plan_blocks;
        bool deferred;               /* a long read's next request, held in cusedev_process() */
        bool registering;            /* inside fuse_req_interrupt_func() */
        bool interrupted_early;      /* its INTERRUPT came during registration */
} Parked;

/* What a kind of device does for the hub: one row of cusekinds.c's table.
 * Every member but name and requests may be NULL: nothing to do. Waiting
 * reads, their bounds and their interrupts are the same for every kind
 * (parked.c). */
typedef struct CuseDevOps {
        const char *name;                          /* the kind, as status names it */
        const struct cuse_lowlevel_ops *requests;  /* what the kernel sends it */
        /* An ioctl with a buffer past its header (RNDADDENTROPY): it reaches
         * the daemon only through CUSE_UNRESTRICTED_IOCTL, which also lets
         * the daemon read and write any of the caller's memory. false: the
         * device registers without it, and the kernel hands over only the
         * bytes the command's number encodes (RNDGETENTCNT's int). */
        bool buffer_ioctls;
        /* Open files per uid are bounded by max_open_per_uid; false: by
         * max_dropin_open_per_uid, far higher (the drop-ins stand in for
         * the kernel's devices, which every process of a service may hold). */
        bool few_files;
        /* The store may have new blocks (or /dev/truerandom just opened). */
        void (*pump)(CuseDev *dev);
        /* The CRNG got its first seed. */
        void (*seeded)(CuseDev *dev);
        /* Readers wait for store blocks: the sources should run. */
        bool (*wants_blocks)(const CuseDev *dev);
        /* Answers the oldest deferred reads, at most CUSEHUB_BACKLOG_BYTES
         * (at least one); the rest wait for the next turn. */
        void (*serve_deferred)(CuseDev *dev);
} CuseDevOps;

extern const CuseDevOps trngdev_ops;          /* CUSEDEV_TRNG */
extern const CuseDevOps crngdev_random_ops;   /* CUSEDEV_RANDOM */
extern const CuseDevOps crngdev_urandom_ops;  /* CUSEDEV_URANDOM */
extern const CuseDevOps crngdev_null_ops;     /* CUSEDEV_NULL */

struct CuseDev {
        CuseHub *hub;
        CuseDevKind kind;
        const CuseDevOps *ops;
        char *name;
        char *dev_dir;
        uid_t uid;
        gid_t gid;
        mode_t mode;
        bool per_source;             /* TRNG: serves source's blocks alone */
        unsigned source;
        bool unrestricted_ioctl;     /* registered with CUSE_UNRESTRICTED_IOCTL */

        struct fuse_session *se;
        struct fuse_buf buf;
        int fd;
        bool up;

        TAILQ_HEAD(CuseFileList, CuseFile) files;
        unsigned n_files;
        UidCount open_by_uid;                /* the files, per uid */

        /* Waiting reads: TRNG deals blocks round robin across uids from
         * it; the drop-in random moves them all to its deferred list at its
         * first seed. By uid for the per-uid bounds either way. */
        FairQueue *fq;
        unsigned n_parked;
        /* Drop-ins: the later requests of long reads, answered once the
         * session has nothing else queued (cusedev_process()), and the
         * random's reads that waited for its first seed; a batch at a time
         * (CUSEHUB_BACKLOG_BYTES), the rest on the loop's next turns. */
        TAILQ_HEAD(, Parked) deferred;
        unsigned n_deferred;

        uint64_t reads;
        uint64_t bytes_served;
        uint64_t eagain;
        uint64_t interrupted;
};

struct CuseHub {
        CuseHubParams params;
        char *proc_root;
        Store *store;
        Crng *crng;
        Seeder *seeder;
        CuseHubCallbacks cb;

        CuseDev *devs[CUSE_MAX_DEVICES + 1];
        size_t n_devs;

        bool trng_open;
        uint32_t sources_open;       /* per-source devices that may serve: bit per source id */
        bool shutting_down;
        int shutdown_err;

        /* Secret scratch: CRNG output on its way out, TRNG blocks being
         * gathered for replies. Erased after every use. */
        uint8_t *scratch;
};

/* cusehub.c: what the devices ask of the hub (they tell the loop through
 * hub->cb themselves: demand, backlog) */
/* Tells the devices and the loop what seeder_pump() or
 * seeder_seed_from_credit() did. */
void cusehub_seeded(CuseHub *hub, SeedResult result);
/* A due CRNG seed takes its block (before any reader does). */
void cusehub_seed_if_due(CuseHub *hub);
/* Room for one more device; cusehub_attach() gives it to the hub, which
 * drives and frees it from then on (cusekinds.c, cusedev_new()). */
bool cusehub_has_room(const CuseHub *hub);
void cusehub_attach(CuseHub *hub, CuseDev *dev);

/* cusedev.c: what every device does alike */
/* A device of kind with its session on fd (see cusedev_new(), which looks
 * ops up in the table and attaches the result to the hub). Owns fd from
 * the call on, even on error. */
int cusedev_open(CuseHub *hub, CuseDevKind kind, const CuseDevOps *ops, const CuseDevParams *params, int fd,
                 const struct fuse_custom_io *io, CuseDev **ret);
/* Closes the session, frees files and the device. Takes NULL; returns NULL. */
CuseDev *cusedev_free(CuseDev *dev);
void cusedev_op_init_done(void *userdata);
/* The account an opener is charged to: its uid when that is 0 or it lives
 * in the daemon's user namespace, else CUSE_UID_USERNS (also when that
 * cannot be told, or its uid has no look at /proc left: fail closed). One
 * look at /proc for uids but root. */
uint32_t cusedev_charge(CuseDev *dev, fuse_req_t req);
/* Opens a file charged to charge. */
void cusedev_open_file(fuse_req_t req, struct fuse_file_info *fi, uint32_t charge);
/* Opens a file charged to its opener's uid as the request carries it (a
 * device whose reads never park). */
void cusedev_op_open(fuse_req_t req, struct fuse_file_info *fi);
void cusedev_op_release(fuse_req_t req, struct fuse_file_info *fi);
void cusedev_keep_pollhandle(CuseDev *dev, struct fuse_file_info *fi, struct fuse_pollhandle *ph);
void cusedev_notify_pollers(CuseDev *dev);
/* Whether the caller passes [device] privileged_ioctls: 1, 0, or -EAGAIN
 * when its uid has no look at /proc left (cb.proc_budget; nothing was
 * read). */
int cusedev_caller_privileged(CuseDev *dev, fuse_req_t req);
/* Decodes an ioctl; true when *ret is complete and the caller replies, false
 * when it was answered already (an error, or a retry for more memory).
 * flags: the request's; without FUSE_IOCTL_UNRESTRICTED (a device
 * registered without CUSE_UNRESTRICTED_IOCTL) a command that needs more of
 * the caller's memory than its number encodes fails with EOPNOTSUPP. */
bool cusedev_ioctl_decode(fuse_req_t req, int cmd, void *arg, unsigned flags, const void *in_buf, size_t in_bufsz,
                          size_t out_bufsz, RndRequest *ret);

/* parked.c: reads waiting for data, alike on every device */
Parked *parked_new(CuseDev *dev, fuse_req_t req, size_t size);
/* Registers the interrupt callback; false if the request was interrupted
 * meanwhile (then it has been answered EINTR and p freed). */
bool parked_arm(Parked *p);
/* Takes p off the list it is on; the caller replies. */
void parked_unlink(Parked *p);
void parked_reply_err(Parked *p, int err);
/* Parks a read on dev's queue within the bounds on waiting reads (DESIGN
 * §6), charged to its file's account: true when it waits; false when it
 * was answered instead (EAGAIN over a bound, ENOMEM, EINTR when
 * interrupted as it parked). */
bool cusedev_park(CuseDev *dev, fuse_req_t req, struct fuse_file_info *fi, size_t size);
/* Answers every waiting and deferred read with err (shutdown). */
void cusedev_fail_parked(CuseDev *dev, int err);
