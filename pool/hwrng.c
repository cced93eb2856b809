/* hwrng.c - the hw_random core's sysfs attributes, read (hwrng.h).
 *
 * Every attribute is read with one read() of at most a page, as sysfs
 * hands it out; a value that does not fit is refused (-E2BIG), never cut.
 * Optional attributes (rng_quality, rng_selected) that are missing or
 * malformed read as -1: the listing says "not offered", it does not guess.
 * Flow: (status, and the hwrng/tpm sources' credit) -> [sysfs]. */
#include "hwrng.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* sysfs attributes are at most a page. */
#define ATTR_MAX 4096U
#define QUALITY_MAX 1024L

int hwrng_read_attr(const char *dir, const char *name, char *ret, size_t size) {
        char path[PATH_MAX];
        _cleanup_close_ int fd = -1;
        ssize_t r;

        if (!name || !ret || size < 2)
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%s", dir ? dir : HWRNG_SYSFS_DIR, name) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = read(fd, ret, size - 1);
        if (r < 0)
                return -errno;
        if ((size_t) r == size - 1) {
                /* Full: the value fits only if all that is left is its newline. */
                char more;

                if (read(fd, &more, 1) > 0 && more != '\n')
                        return -E2BIG;
        }
        ret[r] = '\0';
        ret[strcspn(ret, "\n")] = '\0';
        return 0;
}

int tpm_number_parse(const char *s) {
        char *end;
        long n;

        if (!s || s[0] < '0' || s[0] > '9' || (s[0] == '0' && s[1] != '\0'))
                return -EINVAL;
        errno = 0;
        n = strtol(s, &end, 10);
        if (errno != 0 || *end != '\0' || n > INT_MAX)
                return -EINVAL;
        return (int) n;
}

int hwrng_name_tpm_index(const char *name) {
        static const char prefix[] = "tpm-rng-";

        if (!name || strncmp(name, prefix, sizeof(prefix) - 1) != 0)
                return -EINVAL;
        return tpm_number_parse(name + sizeof(prefix) - 1);
}

int hwrng_current_tpm(const char *dir) {
        char current[HWRNG_NAME_MAX];
        int r;

        r = hwrng_read_attr(dir, "rng_current", current, sizeof(current));
        if (r < 0)
                return r;
        r = hwrng_name_tpm_index(current);
        return r >= 0 ? r : -ENODEV;
}

/* A decimal in lo..hi, else -1. */
static int read_bounded(const char *dir, const char *name, long lo, long hi) {
        char buf[32];
        char *end;
        long v;

        if (hwrng_read_attr(dir, name, buf, sizeof(buf)) < 0)
                return -1;
        if (buf[0] < '0' || buf[0] > '9')
                return -1;
        errno = 0;
        v = strtol(buf, &end, 10);
        if (errno != 0 || *end != '\0' || v < lo || v > hi)
                return -1;
        return (int) v;
}

/* Splits rng_available into l->devices (l->current already set). */
static int parse_available(char *text, HwrngList *l) {
        char *save = NULL;

        for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                HwrngDevice *d;

                if (strcmp(w, "none") == 0)
                        continue;
                if (strlen(w) >= HWRNG_NAME_MAX)
                        return -EBADMSG;
                if (l->n == HWRNG_MAX_DEVICES) {
                        l->truncated = true;
                        break;
                }
                d = &l->devices[l->n++];
                strcpy(d->name, w);
                d->current = strcmp(w, l->current) == 0;
                d->tpm = hwrng_name_tpm_index(w);
                if (d->tpm < 0)
                        d->tpm = -1;
        }
        return 0;
}

int hwrng_list_read(const char *dir, HwrngList *ret) {
        _cleanup_free_ char *available = NULL;
        HwrngList l = { .quality = -1, .selected = -1 };
        int r;

        if (!ret)
                return -EINVAL;
        available = malloc(ATTR_MAX);
        if (!available)
                return -ENOMEM;
        r = hwrng_read_attr(dir, "rng_available", available, ATTR_MAX);
        if (r < 0)
                return r;
        r = hwrng_read_attr(dir, "rng_current", l.current, sizeof(l.current));
        if (r < 0)
                return r;
        if (strcmp(l.current, "none") == 0)
                l.current[0] = '\0';
        r = parse_available(available, &l);
        if (r < 0)
                return r;
        if (l.current[0] != '\0')
                l.quality = read_bounded(dir, "rng_quality", 0, QUALITY_MAX);
        l.selected = read_bounded(dir, "rng_selected", 0, 1);
        *ret = l;
        return 0;
}
