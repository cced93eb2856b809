/* checkconf.c - what truerandomd refuses to start with, said in one line:
 * no credited source that can run (at start, after the collectors are
 * created, and for --check-config, which opens and closes each source), and
 * for --check-config also the user and the group.
 *
 * Invariant: a start that could never serve /dev/truerandom or seed the
 * CRNG fails at once, naming each source and why, rather than hang. A
 * source still to be assessed (credit = auto) counts as one that may run.
 * Flow: config -> [checkconf] -> set-up (daemon_new) or --check-config. */
#include "daemon-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/sourceconf.h"
#include "daemon/control/control.h"
#include "util/unixsock.h"
#include "log.h"
#include "util/cleanup.h"

/* Why source i credits nothing to /dev/truerandom, or NULL when it may.
 * runs: a collector (or, for --check-config, an open) exists; state and
 * error: what it found. */
static const char *not_credited(const Config *c, ConfigSource i, bool runs, SourceState state, int error, char *buf,
                                size_t size) {
        const SourceConfig *sc = &c->source[i];
        const SourceOps *ops = sourceconf_ops(i);
        const char *path = sc->params.path;

        if (ops->credit == SOURCE_CREDIT_NEVER)
                return "never credited (mixed into CRNG seeds only)";
        if (!sc->enable)
                return "disabled (enable = no)";
        if (sc->credit_mbits == 0 && !sc->credit_auto)
                return "credit = 0";
        if (!runs)
                return "not built into this truerandomd";
        if (state != SOURCE_UNAVAILABLE && state != SOURCE_FAILED_PERMANENT)
                return NULL;
        if (ops->absent && error == -ENODEV) {
                snprintf(buf, size, "unavailable (%s)", ops->absent);
                return buf;
        }
        snprintf(buf, size, "unavailable (%s%s%s)", path ? path : "", path ? ": " : "", daemon_source_error(error));
        return buf;
}

/* One line for the case where no source can be credited: each source and
 * why, with the line of its [source.*] enable where the file set it. */
static char *no_credited_line(const Config *c, const char *path, const bool runs[], const SourceState states[],
                              const int errors[]) {
        char line[1024], why[160], at[PATH_MAX + 24];
        size_t n = 0;
        char *s;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX && n < sizeof(line); i++) {
                at[0] = '\0';
                if (c->source[i].enable_at.line)
                        snprintf(at, sizeof(at), " (%s:%u)", c->source[i].enable_at.file, c->source[i].enable_at.line);
                n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s%s", i ? "; " : "", config_source_name(i),
                                      not_credited(c, i, runs[i], states[i], errors[i], why, sizeof(why)), at);
        }
        if (asprintf(&s, "%s: no credited source can run, so /dev/truerandom would never serve: %s. Enable one "
                         "(see truerandomd.conf(5))", path ? path : "built-in defaults", line) < 0)
                return NULL;
        return s;
}

/* With no credited source that can run, /dev/truerandom would never serve
 * and the CRNG never seed: a start that waits for them would hang without
 * a word. Say why, per source, in one line, and do not start. */
int daemon_check_credited(Daemon *d) {
        bool runs[_CONFIG_SOURCE_MAX];
        SourceState states[_CONFIG_SOURCE_MAX];
        int errors[_CONFIG_SOURCE_MAX];
        char why[160];
        _cleanup_free_ char *line = NULL;
        unsigned credited = 0;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceSlot *slot = &d->sources[i];

                runs[i] = slot->collector;
                states[i] = slot->last.state;
                errors[i] = slot->last.last_error;
                credited += !not_credited(&d->config, i, runs[i], states[i], errors[i], why, sizeof(why));
        }
        /* Started all the same (a reload may lower it, or an operator may
         * want a daemon that serves nothing yet), but said at once. */
        if (credited > 0 && credited < d->config.min_healthy)
                log_warning("%s: [pool] min_healthy = %u, but %u credited source%s can run: /dev/truerandom will not "
                            "serve until min_healthy is lowered or more sources are enabled",
                            d->config_path ? d->config_path : "built-in defaults", d->config.min_healthy, credited,
                            credited == 1 ? "" : "s");
        if (credited > 0) {
                for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                        if (runs[i] && states[i] == SOURCE_UNAVAILABLE)
                                log_fields(LOG_NOTICE, &(LogFields){ .source = config_source_name(i) }, "source %s %s",
                                           config_source_name(i),
                                           not_credited(&d->config, i, true, states[i], errors[i], why, sizeof(why)));
                return 0;
        }
        line = no_credited_line(&d->config, d->config_path, runs, states, errors);
        log_error("%s", line ? line : "no credited source can run");
        return -ENOMEDIUM;
}

static bool is_dir(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A socket's directory (the control socket's, the EGD socket's): the
 * daemon creates one level, no more. */
static int check_socket_dir(const char *section, const char *socket_path, const char *path, char **ret_error) {
        _cleanup_free_ char *dir = NULL;
        char *slash;
        bool parent;
        int r;

        if (!socket_path)
                return 0;
        r = unixsock_dir(socket_path, &dir);

        if (r < 0)
                return r;
        if (!dir || is_dir(dir))
                return 0;
        /* Missing: truerandomd makes it if its parent is there. */
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                parent = is_dir(dir);
                *slash = '/';
                if (parent)
                        return 0;
        }
        if (asprintf(ret_error, "%s: [%s] socket = %s: its directory cannot be made (truerandomd creates "
                                "one level, and %s's parent is missing)", path, section, socket_path, dir) < 0)
                return -ENOMEM;
        return -ENOENT;
}

int daemon_check_config(const Config *c, const char *path, char **ret_error) {
        bool runs[_CONFIG_SOURCE_MAX] = { 0 };
        unsigned credited = 0;
        SourceState states[_CONFIG_SOURCE_MAX];
        int errors[_CONFIG_SOURCE_MAX] = { 0 };
        char why[160], *s = NULL;
        uid_t uid;
        gid_t gid;
        int r;

        r = daemon_resolve_run_user(c, path, &uid, &gid, ret_error);
        if (r < 0)
                return r;
        r = check_socket_dir("control", c->socket_path, path, ret_error);
        if (r >= 0)
                r = check_socket_dir("egd", c->egd_socket_path, path, ret_error);
        if (r < 0)
                return r;
        if (daemon_resolve_group(c->group, &gid) < 0) {
                char at[PATH_MAX + 16];

                config_at_str(c->group_at, path, at, sizeof(at));
                if (c->group_at.line && asprintf(&s, "%s: group '%s' does not exist (create it with "
                                                     "systemd-sysusers or groupadd)", at, c->group) < 0)
                        return -ENOMEM;
                if (!c->group_at.line && asprintf(&s, "%s: group '%s' (the default of [device] group) does not "
                                                      "exist (install the package, or create it with groupadd)",
                                                  at, c->group) < 0)
                        return -ENOMEM;
                *ret_error = s;
                return -ENOENT;
        }
        /* Each source as the daemon's collector opens it, then closed. */
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *sc = &c->source[i];
                const SourceOps *ops = sourceconf_ops(i);
                SourceParams p = sourceconf_params(sc);
                void *state = NULL;

                states[i] = SOURCE_STARTUP;
                if (!sourceconf_creditable(sc, i))
                        continue;
                runs[i] = true;
                errors[i] = ops->open(&p, &state);
                if (errors[i] >= 0) {
                        errors[i] = ops->max_credit && ops->max_credit(state) == 0 ? -EPERM : 0;
                        ops->close(state);
                }
                if (errors[i] < 0)
                        states[i] = SOURCE_UNAVAILABLE;
                credited += !not_credited(c, i, runs[i], states[i], errors[i], why, sizeof(why));
        }
        if (credited == 0) {
                s = no_credited_line(c, path, runs, states, errors);
                if (!s)
                        return -ENOMEM;
                *ret_error = s;
                return -ENOMEDIUM;
        }
        return 0;
}
