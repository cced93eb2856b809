/* assessment.c - the state file of credit = auto (see assessment.h).
 * Flow: assessor -> [assessment] -> credit (daemon). */
#include "assessment.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eajson.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/json-util.h"

/* Nesting of the file as json-c counts it: the report's estimators sit at 5. */
#define ASSESSMENT_DEPTH_MAX 8

__attribute__((format(printf, 4, 5)))
static int refuse(int error, char *why, size_t size, const char *fmt, ...) {
        va_list ap;

        if (why && size > 0) {
                va_start(ap, fmt);
                vsnprintf(why, size, fmt, ap);
                va_end(ap);
        }
        return error;
}

void assessment_format_date(int64_t date, char buf[static 32]) {
        time_t t = (time_t) date;
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, 32, "?");
}

/* "2026-12-03T13:13:31Z" back to seconds; false for anything else. */
static bool parse_date(const char *s, int64_t *ret) {
        struct tm tm = { 0 };
        const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
        time_t t;

        if (!end || *end)
                return false;
        t = timegm(&tm);
        if (t == (time_t) -1 || t < 0)
                return false;
        *ret = (int64_t) t;
        return true;
}

/* ---- reading ------------------------------------------------------------------- */

/* The whole file, NUL-terminated, at most ASSESSMENT_FILE_MAX bytes. What
 * it says decides a credit, so only a file that root or the directory's
 * owner (the daemon's user) wrote counts: neither the file nor its
 * directory may be writable by anyone else, or any local user could plant
 * an assessment for a machine identity that is easy to guess. */
static int read_file(int dirfd, char **ret, size_t *ret_size, char *why, size_t why_size) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st, dst;
        size_t n = 0;

        if (fstat(dirfd, &dst) < 0)
                return refuse(-errno, why, why_size, "state directory: %s", strerror(errno));
        if (dst.st_mode & (S_IWGRP | S_IWOTH))
                return refuse(-EPERM, why, why_size,
                              "the state directory is writable by group or others (mode %04o): "
                              "an assessment there is not trusted", (unsigned) (dst.st_mode & 07777));
        fd = openat(dirfd, ASSESSMENT_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? refuse(-ENOENT, why, why_size, "no assessment stored yet")
                                       : refuse(-errno, why, why_size, "%s: %s", ASSESSMENT_FILE, strerror(errno));
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t) ASSESSMENT_FILE_MAX)
                return refuse(-EBADMSG, why, why_size, "%s: not a regular file of at most %u bytes", ASSESSMENT_FILE,
                              ASSESSMENT_FILE_MAX);
        if ((st.st_uid != 0 && st.st_uid != dst.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return refuse(-EPERM, why, why_size,
                              "%s: owned by uid %u, mode %04o: only a file of root or of the directory's owner, "
                              "writable by no one else, is trusted", ASSESSMENT_FILE, (unsigned) st.st_uid,
                              (unsigned) (st.st_mode & 07777));
        buf = malloc(ASSESSMENT_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + n, ASSESSMENT_FILE_MAX + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return refuse(-errno, why, why_size, "%s: %s", ASSESSMENT_FILE, strerror(errno));
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > ASSESSMENT_FILE_MAX)
                        return refuse(-EBADMSG, why, why_size, "%s: larger than %u bytes", ASSESSMENT_FILE,
                                      ASSESSMENT_FILE_MAX);
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

/* The file's "sources" object (borrowed from *ret_root, a new reference). */
static int parse_file(const char *text, size_t n, struct json_object **ret_root, struct json_object **ret_sources,
                      char *why, size_t why_size) {
        struct json_tokener *tok = json_tokener_new_ex(ASSESSMENT_DEPTH_MAX);
        _cleanup_(json_object_putp) struct json_object *root = NULL;
        struct json_object *v, *sources;
        enum json_tokener_error e;

        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        root = json_tokener_parse_ex(tok, text, (int) n);
        e = json_tokener_get_error(tok);
        /* Whitespace may follow the object; nothing else may. */
        if (root && e == json_tokener_success && strspn(text + json_tokener_get_parse_end(tok), " \t\r\n") !=
                                                          n - json_tokener_get_parse_end(tok))
                e = json_tokener_error_parse_unexpected;
        json_tokener_free(tok);
        if (!root || e != json_tokener_success)
                return refuse(-EBADMSG, why, why_size, "%s is not JSON (%s)", ASSESSMENT_FILE,
                              e == json_tokener_success || e == json_tokener_continue ? "it ends early"
                                                                                      : json_tokener_error_desc(e));
        if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "format", &v) ||
            !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), ASSESSMENT_FORMAT) != 0)
                return refuse(-EBADMSG, why, why_size, "%s is not a truerandomd assessment (no \"format\": \"%s\")",
                              ASSESSMENT_FILE, ASSESSMENT_FORMAT);
        /* The message is made before root (which v is part of) goes. */
        if (!json_object_object_get_ex(root, "version", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) != ASSESSMENT_VERSION)
                return refuse(-EBADMSG, why, why_size, "%s: version %.32s, this truerandomd reads %d", ASSESSMENT_FILE,
                              v ? json_object_get_string(v) : "missing", ASSESSMENT_VERSION);
        if (!json_object_object_get_ex(root, "sources", &sources) || !json_object_is_type(sources, json_type_object))
                return refuse(-EBADMSG, why, why_size, "%s: no \"sources\" object", ASSESSMENT_FILE);
        *ret_sources = sources;
        *ret_root = TAKE_PTR(root);
        return 0;
}

static int entry_from_json(struct json_object *o, const char *source, Assessment *ret, char *why, size_t why_size) {
        Assessment a = { 0 };
        struct json_object *v;
        double seconds;  /* as the file says it; kept as usec_t */

        if (!json_object_is_type(o, json_type_object))
                return refuse(-EBADMSG, why, why_size, "%s: sources.%s is not an object", ASSESSMENT_FILE, source);
        if (!json_object_object_get_ex(o, "date", &v) || !json_object_is_type(v, json_type_string) ||
            !parse_date(json_object_get_string(v), &a.date))
                return refuse(-EBADMSG, why, why_size, "%s: sources.%s.date missing or malformed", ASSESSMENT_FILE,
                              source);
        if (!json_object_object_get_ex(o, "seconds", &v) ||
            (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) ||
            !((seconds = json_object_get_double(v)) >= 0.0 && seconds < 1e9))
                return refuse(-EBADMSG, why, why_size, "%s: sources.%s.seconds missing or malformed", ASSESSMENT_FILE,
                              source);
        a.duration_usec = (usec_t) llround(seconds * (double) USEC_PER_SEC);
        if (!json_object_object_get_ex(o, "identity", &v) || identity_from_json(v, &a.identity) < 0 ||
            strcmp(a.identity.source, source) != 0)
                return refuse(-EBADMSG, why, why_size, "%s: sources.%s.identity missing or malformed", ASSESSMENT_FILE,
                              source);
        if (!json_object_object_get_ex(o, "report", &v) || ea_report_from_json(v, &a.report) < 0 ||
            a.report.bits != 8)
                return refuse(-EBADMSG, why, why_size,
                              "%s: sources.%s.report missing or malformed (8-bit samples, entropies in range)",
                              ASSESSMENT_FILE, source);
        *ret = a;
        return 0;
}

int assessment_load(int dirfd, const char *source, Assessment *ret, char *why, size_t why_size) {
        _cleanup_(json_object_putp) struct json_object *root = NULL;
        _cleanup_free_ char *text = NULL;
        struct json_object *sources, *entry;
        size_t n;
        int r;

        r = read_file(dirfd, &text, &n, why, why_size);
        if (r < 0)
                return r;
        r = parse_file(text, n, &root, &sources, why, why_size);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(sources, source, &entry))
                return refuse(-ENOENT, why, why_size, "%s holds no assessment of %s", ASSESSMENT_FILE, source);
        return entry_from_json(entry, source, ret, why, why_size);
}

/* ---- writing ----------------------------------------------------------------- */

static struct json_object *entry_to_json(const Assessment *a) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        char d[32], s[32];
        int r = 0;

        assessment_format_date(a->date, d);
        snprintf(s, sizeof(s), "%.1f", usec_to_seconds(a->duration_usec));
        r |= json_put(o, "date", json_object_new_string(d));
        r |= json_put(o, "seconds", json_object_new_double_s(usec_to_seconds(a->duration_usec), s));
        r |= json_put(o, "identity", identity_to_json(&a->identity));
        r |= json_put(o, "report", ea_report_to_json(&a->report));
        return r ? NULL : TAKE_PTR(o);
}

/* An empty file of this format; *ret_sources borrowed from it. */
static struct json_object *new_file(struct json_object **ret_sources) {
        _cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
        struct json_object *sources = json_object_new_object();
        int r = 0;

        *ret_sources = sources;
        r |= json_put(root, "format", json_object_new_string(ASSESSMENT_FORMAT));
        r |= json_put(root, "version", json_object_new_int(ASSESSMENT_VERSION));
        r |= json_put(root, "sources", sources);
        return r ? NULL : TAKE_PTR(root);
}

/* The new file's object: the readable old one's other sources, and a. */
static struct json_object *file_with(int dirfd, const Assessment *a) {
        _cleanup_(json_object_putp) struct json_object *root = NULL;
        _cleanup_free_ char *text = NULL;
        struct json_object *sources = NULL;
        size_t n;

        if (read_file(dirfd, &text, &n, NULL, 0) < 0 || parse_file(text, n, &root, &sources, NULL, 0) < 0)
                root = new_file(&sources);
        if (!root || json_put(sources, a->identity.source, entry_to_json(a)) < 0)
                return NULL;
        return TAKE_PTR(root);
}

/* A new temporary file beside the state file, its name in tmp; the fd or
 * -errno. */
static int open_temporary(int dirfd, char tmp[static 64]) {
        static atomic_uint counter;

        for (int tries = 0; tries < 16; tries++) {
                int fd;

                snprintf(tmp, 64, ".%s.%ld.%u", ASSESSMENT_FILE, (long) getpid(), atomic_fetch_add(&counter, 1));
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (fd >= 0 || errno != EEXIST)
                        return fd >= 0 ? fd : -errno;
        }
        return -EEXIST;
}

int assessment_save(int dirfd, const Assessment *a) {
        _cleanup_(json_object_putp) struct json_object *root = file_with(dirfd, a);
        const char *text;
        char tmp[64];
        int fd, r;

        if (!root)
                return -ENOMEM;
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
        if (!text)
                return -ENOMEM;
        fd = open_temporary(dirfd, tmp);
        if (fd < 0)
                return fd;
        /* Estimates, no secret: readable by auditors whatever the umask. */
        r = fd_write_all(fd, text, strlen(text));
        if (r == 0)
                r = fd_write_all(fd, "\n", 1);
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, ASSESSMENT_FILE) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dirfd, tmp, 0);
        else
                (void) fsync(dirfd);
        return r;
}
