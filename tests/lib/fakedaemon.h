/* fakedaemon.h - the real daemon on a thread of its own, each of its CUSE
 * devices behind a fake kernel (fakekernel.h): the one set-up the protocol
 * suite and the benchmarks share.
 *
 * fakedaemon_new() makes a scratch directory (the device nodes, as plain
 * files init_done chmods, a deterministic sample file, the control socket
 * and the state directory go there); fakedaemon_config() gives the
 * configuration every such daemon starts from, which the caller adjusts;
 * fakedaemon_start() runs daemon_new() and daemon_run() on a thread. When
 * the daemon opens a device (DaemonHooks.open_device), a fake kernel is
 * made for it and CUSE_INIT queued, as the kernel does at open of
 * /dev/cuse; fakedaemon_start() returns once each device answered it.
 * fakedaemon_stop() sends SIGTERM as systemd does.
 *
 * SIGTERM, SIGINT and SIGHUP must be blocked in every thread before the
 * first daemon starts (fakedaemon_block_signals()): the daemon's signalfd
 * takes them, exactly as in production.
 * Threads: the daemon's thread opens the fakes (inside daemon_new());
 * everything else is called from one test thread.
 * Flow: test -> [fakedaemon] -> daemon thread -> fake kernels. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/daemon.h"
#include "fakekernel.h"
#include "proto/ctlproto.h"
#include "proto/ctlstatus.h"

/* Bytes in the sample file (uniform, from a fixed seed). */
#define FAKEDAEMON_SAMPLES (1U << 16)
/* The file source's credit, millibits per sample: its windows of
 * GATE_WINDOW_MIN uniform samples measure 5 to 6 bits, so the running gate
 * credits every one of them at 2 (it needs twice that). */
#define FAKEDAEMON_CREDIT_MBITS 2000U

typedef struct FakeDaemon {
        char dir[64];                        /* scratch, removed by fakedaemon_free() */
        char devdir[96];                     /* DIR/dev: the nodes */
        char samples[96];                    /* DIR/samples: FAKEDAEMON_SAMPLES bytes */
        /* Each device's kernel, by kind (the first device of a kind: the
         * per-source devices are TRNGs too, fakedaemon_kernel() finds them
         * by name), once the daemon opened it; and its answer to CUSE_INIT
         * once fakedaemon_start() returned 0. */
        FakeKernel *fk[_CUSEDEV_KIND_MAX];
        FkInit init[_CUSEDEV_KIND_MAX];
        pthread_t thread;                    /* daemon_new(), daemon_run(), daemon_free() */
        bool running;                        /* started and not joined yet */
        int run_result;                      /* daemon_run()'s, once the thread ended */

        /* the rest is fakedaemon.c's */
        DaemonHooks hooks;                   /* the caller's */
        Config *config;
        const char *config_path;
        struct {
                char name[CONFIG_DEVICE_NAME_MAX + 1];
                FakeKernel *fk;                  /* owned; fk[kind] is one of these */
                int64_t init_unique;
                FkInit init;
        } devices[CUSE_MAX_DEVICES];
        size_t n_devices;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool started;
        int new_result;
} FakeDaemon;

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and the
 * threads it makes later). */
void fakedaemon_block_signals(void);

/* A scratch directory /tmp/truerandom-TAG-XXXXXX with DIR/dev and the
 * sample file: uniformly distributed bytes from a fixed seed (the first 32
 * bytes of seed, zero-padded), so they pass the health tests at any
 * credit. 0 or -errno. */
int fakedaemon_new(const char *tag, const char *seed, FakeDaemon **ret);

/* The configuration every daemon on a fake kernel starts from, into *ret
 * (config_done() it): the built-in defaults, [device] group the caller's
 * gid, the control socket and the state directory in DIR, and only two
 * sources: the file source on DIR/samples, credited 8 bits a sample,
 * looping, as fast as it goes, and the kernel source (mixed into seeds).
 * 0 or -ENOMEM. */
int fakedaemon_config(const FakeDaemon *fd, Config *ret);

/* Runs daemon_new(config, config_path, hooks) and daemon_run() on
 * fd->thread; config is taken over as daemon_new() takes it. hooks may be
 * NULL; its open_device and dev_dir are the fake daemon's own, ready_fd is
 * -1, the rest (open_kmsg with userdata, proc_root, ...) as given. Returns
 * 0 once every device answered its CUSE_INIT (fd->init), daemon_new()'s
 * -errno (the thread then ended), or a fake kernel's -errno. */
int fakedaemon_start(FakeDaemon *fd, Config *config, const char *config_path, const DaemonHooks *hooks);

/* The kernel of the device the daemon opened as name; NULL: none. */
FakeKernel *fakedaemon_kernel(const FakeDaemon *fd, const char *name);

/* One request packet (n bytes of msg, as written) on the control socket
 * in DIR, its reply read into buf (CTL_REPLY_MAX bytes) and parsed into
 * *ret (its payload inside buf). 0 or -errno. */
int fakedaemon_ask(const FakeDaemon *fd, const char *msg, size_t n, char *buf, CtlReply *ret);

/* `truerandomctl status --json`, asked on the control socket in DIR: the
 * daemon's own account, into *ret (ctl_status_free() it). 0 or -errno
 * (-EBADMSG: not an "ok" reply with a status). */
int fakedaemon_status(const FakeDaemon *fd, CtlStatus **ret);

/* SIGTERM, as systemd stops the daemon, and the thread joined: what
 * daemon_run() returned, 0 when it was not running. */
int fakedaemon_stop(FakeDaemon *fd);

/* Stops the daemon, frees the fake kernels (check fk_violations() before)
 * and removes the scratch directory. Takes NULL; returns NULL. */
FakeDaemon *fakedaemon_free(FakeDaemon *fd);
