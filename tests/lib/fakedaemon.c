/* fakedaemon.c - see fakedaemon.h. */
#include "fakedaemon.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sodium.h>

#include "proto/ctlproto.h"
#include "util/cleanup.h"

void fakedaemon_block_signals(void) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &ss, NULL);
}

static int write_file(const char *path, const void *data, size_t n, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        int r = 0;

        if (fd < 0)
                return -errno;
        if (n > 0 && write(fd, data, n) != (ssize_t) n)
                r = -EIO;
        /* The mode as asked, whatever the umask. */
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        close(fd);
        return r;
}

static int make_samples(FakeDaemon *fd, const char *seed) {
        uint8_t key[randombytes_SEEDBYTES] = { 0 };
        uint8_t *buf = malloc(FAKEDAEMON_SAMPLES);
        int r;

        if (!buf)
                return -ENOMEM;
        memcpy(key, seed, strnlen(seed, sizeof(key)));
        randombytes_buf_deterministic(buf, FAKEDAEMON_SAMPLES, key);
        r = write_file(fd->samples, buf, FAKEDAEMON_SAMPLES, 0644);
        free(buf);
        return r;
}

int fakedaemon_new(const char *tag, const char *seed, FakeDaemon **ret) {
        FakeDaemon *fd = calloc(1, sizeof(*fd));
        int r;

        if (!fd)
                return -ENOMEM;
        pthread_mutex_init(&fd->lock, NULL);
        pthread_cond_init(&fd->cond, NULL);
        snprintf(fd->dir, sizeof(fd->dir), "/tmp/truerandom-%s-XXXXXX", tag);
        if (!mkdtemp(fd->dir)) {
                r = -errno;
                fd->dir[0] = '\0';
                fakedaemon_free(fd);
                return r;
        }
        snprintf(fd->devdir, sizeof(fd->devdir), "%s/dev", fd->dir);
        snprintf(fd->samples, sizeof(fd->samples), "%s/samples", fd->dir);
        r = mkdir(fd->devdir, 0755) < 0 ? -errno : make_samples(fd, seed);
        if (r < 0) {
                fakedaemon_free(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

/* s, malloc'd, replacing *field. */
static int set_string(char **field, const char *s) {
        char *copy = strdup(s);

        if (!copy)
                return -ENOMEM;
        free(*field);
        *field = copy;
        return 0;
}

int fakedaemon_config(const FakeDaemon *fd, Config *ret) {
        char path[160], gid[16];
        Config c;
        int r;

        r = config_init_defaults(&c);
        if (r < 0)
                return r;
        snprintf(gid, sizeof(gid), "%u", (unsigned) getgid());
        r = set_string(&c.group, gid);
        snprintf(path, sizeof(path), "%s/control", fd->dir);
        if (r >= 0)
                r = set_string(&c.socket_path, path);
        snprintf(path, sizeof(path), "%s/state", fd->dir);
        if (r >= 0)
                r = set_string(&c.state_directory, path);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++)
                c.source[i].enable = false;
        /* The smallest window: a verdict, and so the first block, soonest. */
        c.gate_window = GATE_WINDOW_MIN;
        c.source[CONFIG_SOURCE_KERNEL].enable = true;
        c.source[CONFIG_SOURCE_FILE] = (SourceConfig){
                .enable = true,
                .credit_mbits = FAKEDAEMON_CREDIT_MBITS,
                .params = { .path = strdup(fd->samples), .loop = true },
        };
        if (r >= 0 && !c.source[CONFIG_SOURCE_FILE].params.path)
                r = -ENOMEM;
        if (r < 0) {
                config_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

/* DaemonHooks.open_device: what the kernel does at open of /dev/cuse. The
 * node is a plain file (init_done chmods it), the transport a fake kernel
 * with CUSE_INIT queued, which set-up answers. */
static int open_device(void *userdata, const char *name, CuseDevKind kind, int *ret_fd,
                       const struct fuse_custom_io **ret_io) {
        FakeDaemon *fd = userdata;
        char path[200];
        int daemon_fd, r;

        if ((unsigned) kind >= _CUSEDEV_KIND_MAX || fakedaemon_kernel(fd, name))
                return -EEXIST;
        if (fd->n_devices == CUSE_MAX_DEVICES || strlen(name) > CONFIG_DEVICE_NAME_MAX)
                return -ENOSPC;
        snprintf(path, sizeof(path), "%s/%s", fd->devdir, name);
        r = write_file(path, "", 0, 0600);
        if (r < 0)
                return r;
        r = fk_new(&fd->devices[fd->n_devices].fk, &daemon_fd);
        if (r < 0)
                return r;
        snprintf(fd->devices[fd->n_devices].name, sizeof(fd->devices[0].name), "%s", name);
        if (!fd->fk[kind])
                fd->fk[kind] = fd->devices[fd->n_devices].fk;
        fd->devices[fd->n_devices].init_unique = fk_send_init(fd->devices[fd->n_devices].fk);
        if (fd->devices[fd->n_devices++].init_unique < 0) {
                close(daemon_fd);
                return (int) fd->devices[fd->n_devices - 1].init_unique;
        }
        *ret_fd = daemon_fd;
        *ret_io = &fk_daemon_io;
        return 0;
}

/* The caller's own kernel log, with the caller's userdata. */
static int open_kmsg(void *userdata) {
        FakeDaemon *fd = userdata;

        return fd->hooks.open_kmsg(fd->hooks.userdata);
}

/* The caller's clock, with the caller's userdata. */
static uint64_t fake_now(void *userdata) {
        FakeDaemon *fd = userdata;

        return fd->hooks.now(fd->hooks.userdata);
}

static void *daemon_thread(void *userdata) {
        FakeDaemon *fd = userdata;
        DaemonHooks hooks = fd->hooks;
        Daemon *d = NULL;
        int r;

        hooks.open_device = open_device;
        hooks.open_kmsg = fd->hooks.open_kmsg ? open_kmsg : NULL;
        hooks.now = fd->hooks.now ? fake_now : NULL;
        hooks.userdata = fd;
        hooks.dev_dir = fd->devdir;
        hooks.ready_fd = -1;
        r = daemon_new(fd->config, fd->config_path, &hooks, &d);
        pthread_mutex_lock(&fd->lock);
        fd->started = true;
        fd->new_result = r;
        pthread_cond_signal(&fd->cond);
        pthread_mutex_unlock(&fd->lock);
        if (r < 0)
                return NULL;
        fd->run_result = daemon_run(d);
        daemon_free(d);
        return NULL;
}

int fakedaemon_start(FakeDaemon *fd, Config *config, const char *config_path, const DaemonHooks *hooks) {
        int r;

        fd->hooks = hooks ? *hooks : (DaemonHooks){ .ready_fd = -1 };
        fd->config = config;
        fd->config_path = config_path;
        fd->started = false;
        r = -pthread_create(&fd->thread, NULL, daemon_thread, fd);
        if (r < 0)
                return r;
        pthread_mutex_lock(&fd->lock);
        while (!fd->started)
                pthread_cond_wait(&fd->cond, &fd->lock);
        pthread_mutex_unlock(&fd->lock);
        if (fd->new_result < 0) {
                pthread_join(fd->thread, NULL);
                return fd->new_result;
        }
        fd->running = true;
        for (size_t i = 0; i < fd->n_devices; i++) {
                r = fk_init_await(fd->devices[i].fk, fd->devices[i].init_unique, &fd->devices[i].init);
                if (r < 0)
                        return r;
                for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                        if (fd->fk[k] == fd->devices[i].fk)
                                fd->init[k] = fd->devices[i].init;
        }
        return 0;
}

FakeKernel *fakedaemon_kernel(const FakeDaemon *fd, const char *name) {
        for (size_t i = 0; i < fd->n_devices; i++)
                if (strcmp(fd->devices[i].name, name) == 0)
                        return fd->devices[i].fk;
        return NULL;
}

int fakedaemon_ask(const FakeDaemon *fd, const char *msg, size_t n, char *buf, CtlReply *ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int s = -1;
        ssize_t k;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", fd->dir);
        s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        if (send(s, msg, n, 0) != (ssize_t) n)
                return -EIO;
        k = recv(s, buf, CTL_REPLY_MAX, 0);
        if (k <= 0)
                return k < 0 ? -errno : -EBADMSG;
        return ctl_reply_parse(buf, (size_t) k, ret) < 0 ? -EBADMSG : 0;
}

int fakedaemon_status(const FakeDaemon *fd, CtlStatus **ret) {
        CtlRequest req = { .command = ctl_command_from_string("status") };
        _cleanup_free_ char *buf = malloc(CTL_REPLY_MAX);
        char msg[64];
        CtlReply reply;
        ssize_t n;
        int r;

        if (!buf)
                return -ENOMEM;
        n = ctl_request_format(&req, msg, sizeof(msg));
        if (n <= 0)
                return -EINVAL;
        r = fakedaemon_ask(fd, msg, (size_t) n, buf, &reply);
        if (r < 0 || reply.kind != CTL_REPLY_OK)
                return r < 0 ? r : -EBADMSG;
        return ctl_status_parse((const char *) reply.payload, reply.payload_size, ret) < 0 ? -EBADMSG : 0;
}

int fakedaemon_stop(FakeDaemon *fd) {
        if (!fd->running)
                return 0;
        if (kill(getpid(), SIGTERM) < 0)
                return -errno;
        pthread_join(fd->thread, NULL);
        fd->running = false;
        return fd->run_result;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

FakeDaemon *fakedaemon_free(FakeDaemon *fd) {
        if (!fd)
                return NULL;
        (void) fakedaemon_stop(fd);
        for (size_t i = 0; i < fd->n_devices; i++)
                fk_free(fd->devices[i].fk);
        /* Said, not fatal: a leftover directory in /tmp misleads no test. */
        if (fd->dir[0] && nftw(fd->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS) < 0)
                fprintf(stderr, "fakedaemon: removing %s: %s\n", fd->dir, strerror(errno));
        pthread_cond_destroy(&fd->cond);
        pthread_mutex_destroy(&fd->lock);
        free(fd);
        return NULL;
}
