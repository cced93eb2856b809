/* main.c - truerandomd's command line: read the configuration, make the
 * process undumpable (it holds keys), optionally go to the background once
 * the devices serve, and run the loop. daemon_new() gives up root and every
 * capability once the devices are set up. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "config-build.h"
#include "config/config.h"
#include "daemon.h"
#include "log.h"

/* 1 (EXIT_FAILURE): it could not start, and will not until an administrator
 * changes something; truerandomd.service does not restart it
 * (RestartPreventExitStatus=1). 2: usage. 3: it stopped on an error while
 * running, which a restart may cure. */
#define EXIT_RUNTIME 3

static void usage(FILE *f) {
        fprintf(f,
                "Usage: truerandomd [OPTIONS]\n"
                "Serve /dev/truerandom (full-entropy, blocking) and drop-in /dev/random and\n"
                "/dev/urandom devices through CUSE.\n\n"
                "  -c, --config FILE   configuration (default %s)\n"
                "  -f, --foreground    stay in the foreground (systemd runs it so)\n"
                "      --check-config  check the configuration and exit\n"
                "  -h, --help          this help\n"
                "      --version       print the version\n",
                CONFIG_DEFAULT_PATH);
}

/* Forks; the parent waits until the child is ready (exit 0) or gives up
 * (exit 1), so an init script sees failures. Returns the pipe's write end in
 * the child. */
static int go_background(void) {
        int fds[2];
        pid_t pid;
        char buf[8];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0) {
                ssize_t n;
                close(fds[1]);
                n = read(fds[0], buf, sizeof(buf));
                _exit(n > 0 ? EXIT_SUCCESS : EXIT_FAILURE);
        }
        close(fds[0]);
        if (setsid() < 0)
                return -errno;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                dup2(null, STDIN_FILENO);
                dup2(null, STDOUT_FILENO);
                close(null);
        }
        return fds[1];
}

/* --check-config: what the daemon would refuse at start is refused here,
 * a default file that is absent is said to be absent, and each file read
 * (the file, then its drop-ins) is named. */
static int check_config(const char *config_path, Config *config) {
        const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
        bool defaults = !config_path && access(path, F_OK) < 0 && errno == ENOENT;
        char *error = NULL;
        int r;

        r = daemon_check_config(config, path, &error);
        if (r < 0) {
                config_done(config);
                fprintf(stderr, "truerandomd: %s\n", error ? error : strerror(-r));
                free(error);
                return EXIT_FAILURE;
        }
        if (defaults)
                printf("%s: not found; truerandomd would run on the built-in defaults%s, which are OK here\n", path,
                       config->n_files ? " and the drop-ins below" : "");
        for (unsigned i = 0; i < config->n_files; i++)
                printf("%s: OK\n", config->files[i]);
        config_done(config);
        return EXIT_SUCCESS;
}

typedef struct Args {
        const char *config_path;  /* NULL: the default, which may be absent */
        bool foreground;
        bool check;
} Args;

/* The command line into *ret: -1 to go on, else the exit status (help,
 * version, usage errors). */
static int parse_args(int argc, char *argv[], Args *ret) {
        enum { ARG_CHECK = 0x100, ARG_VERSION };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "foreground", no_argument, NULL, 'f' },
                { "check-config", no_argument, NULL, ARG_CHECK },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { 0 },
        };
        int c;

        *ret = (Args){ 0 };
        while ((c = getopt_long(argc, argv, "c:fh", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        ret->config_path = optarg;
                        break;
                case 'f':
                        ret->foreground = true;
                        break;
                case ARG_CHECK:
                        ret->check = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                case ARG_VERSION:
                        printf("truerandomd %s\n", TRUERANDOM_VERSION);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "truerandomd: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        return -1;
}

int main(int argc, char *argv[]) {
        const char *config_path;
        bool foreground;
        char *error = NULL;
        Daemon *d = NULL;
        Config config = { 0 };
        DaemonHooks hooks = { .ready_fd = -1, .drop_privileges = true };
        Args args;
        int r;

        r = parse_args(argc, argv, &args);
        if (r >= 0)
                return r;
        /* The TPM2 Software Stack (the tpm source) writes its own messages
         * to stderr, which is the journal here, unless TSS2_LOG says none:
         * only the daemon logs, from the errors the source hands up. Set
         * before any thread: setenv() is not thread-safe. */
        if (setenv("TSS2_LOG", "all+none", 1) < 0)
                return EXIT_FAILURE;
        config_path = args.config_path;
        foreground = args.foreground;

        /* An explicit file must exist; the default one may be absent. */
        r = config_load(config_path ? config_path : CONFIG_DEFAULT_PATH, !config_path, &config, &error);
        if (r < 0) {
                fprintf(stderr, "truerandomd: %s\n", error ? error : strerror(-r));
                free(error);
                return EXIT_FAILURE;
        }
        if (args.check)
                return check_config(config_path, &config);

        /* Root or not: by hand it starts as root and becomes [daemon] user
         * once set up; truerandomd.service starts it as that user, with
         * /dev/cuse granted by udev. Either way daemon_new() ends without
         * root or capabilities, before the first thread or request. */
        /* Keys live in this process: no core dumps, no ptrace by peers. */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (sodium_init() < 0) {
                fprintf(stderr, "truerandomd: libsodium failed to initialise\n");
                return EXIT_FAILURE;
        }
        if (!foreground) {
                hooks.ready_fd = go_background();
                if (hooks.ready_fd < 0) {
                        fprintf(stderr, "truerandomd: cannot go to the background: %s\n", strerror(-hooks.ready_fd));
                        return EXIT_FAILURE;
                }
        }
        log_open(!foreground);

        hooks.config_optional = !config_path;
        r = daemon_new(&config, config_path ? config_path : CONFIG_DEFAULT_PATH, &hooks, &d);
        config_done(&config);
        /* daemon_new() said why, once: a second, generic line would only
         * mislead ("start-up failed: No such file or directory"). */
        if (r < 0)
                return EXIT_FAILURE;
        r = daemon_run(d);
        daemon_free(d);
        if (r < 0) {
                log_error_errno(r, "stopped on an error");
                return EXIT_RUNTIME;
        }
        log_info("stopped");
        return EXIT_SUCCESS;
}
