/* verb-evidence.c - truerandomctl evidence: the auditor's bundle.
 *
 *   evidence -o FILE.tar [SOURCE...] [--direct] [--sign KEYFILE]
 *       makes it (evidence-build.h): captures through truerandomd (root)
 *       or --direct in this process, then every other part
 *   evidence verify FILE.tar [--key PUBFILE]
 *       checks it (evidence/check.h): each file against the MANIFEST,
 *       the MANIFEST against the signature when a key is given; each
 *       finding names its file; exit EXIT_VERIFY when any is found
 *   evidence keygen SECRETFILE PUBFILE
 *       an Ed25519 pair for --sign (evidence/keys.h), neither file
 *       overwritten; the secret one mode 0600
 * Flow: truerandomctl -> [verb-evidence] -> evidence-build | evidence/. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "client.h"
#include "evidence-build.h"
#include "evidence/check.h"
#include "evidence/keys.h"
#include "util/cleanup.h"
#include "verb.h"

enum {
        ARG_DIRECT = CTL_OPTION_VERB,
        ARG_SIGN,
        ARG_KEY,
};

const struct option verb_evidence_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "direct", no_argument, NULL, ARG_DIRECT },
        { "sign", required_argument, NULL, ARG_SIGN },
        { "key", required_argument, NULL, ARG_KEY },
        CTL_GLOBAL_OPTIONS,
};

typedef struct EvidenceArgs {
        CtlEvidence build;
        const char *sign;         /* --sign: the secret key's file */
        const char *key;          /* verify --key */
        char *const *words;       /* what follows "evidence" */
        size_t n_words;
} EvidenceArgs;

static int parse_options(int argc, char *argv[], EvidenceArgs *a) {
        int opt;

        while ((opt = ctl_getopt(argc, argv, verb_evidence_options, NULL)) >= 0)
                switch (opt) {
                case 'o':
                        a->build.output = optarg;
                        break;
                case ARG_DIRECT:
                        a->build.direct = true;
                        break;
                case ARG_SIGN:
                        a->sign = optarg;
                        break;
                case ARG_KEY:
                        a->key = optarg;
                        break;
                default:
                        if (!ctl_option_global(opt))
                                return EXIT_USAGE;
                }
        a->words = argv + optind + 1;
        a->n_words = (size_t) (argc - optind - 1);
        return EXIT_OK;
}

/* ---- verify ----------------------------------------------------------------------------- */

/* A key file (--sign's secret one, --key's public one) into key. */
static int read_key(const char *option, const char *path, bool secret, uint8_t *key) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int r;

        if (fd < 0)
                return ctl_fail(errno == ENOENT ? EXIT_USAGE : EXIT_FAILED, "%s %s: %s", option, path, strerror(errno));
        r = secret ? evidence_key_read_secret(fd, key) : evidence_key_read_public(fd, key);
        if (r == -EPERM)
                return ctl_fail(EXIT_USAGE, "%s %s: group or others may read it; chmod 600 it", option, path);
        if (r == -EBADMSG || r == -EFBIG)
                return ctl_fail(EXIT_USAGE, "%s %s: not an Ed25519 %s key (PEM)", option, path,
                                secret ? "secret" : "public");
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "%s %s: %s", option, path, strerror(-r));
        return EXIT_OK;
}

static void print_verdict(const char *path, const EvidenceReport *r, const char *key) {
        printf("%s: %zu file%s, %" PRIu64 " bytes, checked against its MANIFEST\n", path, r->files,
               r->files == 1 ? "" : "s", r->bytes);
        for (size_t i = 0; i < r->n_findings; i++)
                printf("%-10s %s\n", evidence_problem_to_string(r->findings[i].problem),
                       r->findings[i].name[0] ? r->findings[i].name : "(no entry read whole)");
        if (!r->is_signed)
                printf("signature: none\n");
        else if (!key)
                printf("signature: present, not checked (give --key PUBFILE)\n");
        else
                printf("signature: %s (%s)\n", r->signature_ok ? "good" : "BAD", key);
        if (evidence_report_ok(r))
                printf("the bundle holds\n");
        else
                printf("the bundle does not hold: %zu finding%s above\n", r->n_findings,
                       r->n_findings == 1 ? "" : "s");
}

static int verify(const EvidenceArgs *a) {
        _cleanup_(evidence_report_freep) EvidenceReport *report = NULL;
        uint8_t pk[EVIDENCE_PUBLIC_KEY_BYTES];
        _cleanup_close_ int fd = -1;
        const char *path;
        int code, r;

        if (a->n_words != 2 || a->build.output || a->build.direct || a->sign)
                return ctl_fail(EXIT_USAGE, "evidence verify takes FILE.tar and --key PUBFILE only");
        path = a->words[1];
        code = a->key ? read_key("--key", a->key, false, pk) : EXIT_OK;
        if (code != EXIT_OK)
                return code;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return ctl_fail(errno == ENOENT ? EXIT_USAGE : EXIT_FAILED, "%s: %s", path, strerror(errno));
        r = evidence_verify(fd, a->key ? pk : NULL, &report);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "reading %s: %s", path, strerror(-r));
        print_verdict(path, report, a->key);
        if (fflush(stdout) != 0)
                return ctl_fail(EXIT_FAILED, "writing: %s", strerror(errno));
        return evidence_report_ok(report) ? EXIT_OK : EXIT_VERIFY;
}

/* ---- keygen ----------------------------------------------------------------------------- */

static int write_key(const char *path, mode_t mode, const uint8_t *key, bool secret) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
        int r;

        if (fd < 0)
                return ctl_fail(errno == EEXIST ? EXIT_USAGE : EXIT_FAILED, "%s: %s%s", path, strerror(errno),
                                errno == EEXIST ? " (a key file is never overwritten)" : "");
        /* The mode asked for, whatever the umask took away from it. */
        r = fchmod(fd, mode) < 0 ? -errno : secret ? evidence_key_write_secret(fd, key) : evidence_key_write_public(fd, key);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(path);
                return ctl_fail(EXIT_FAILED, "writing %s: %s", path, strerror(-r));
        }
        return EXIT_OK;
}

static int keygen(const EvidenceArgs *a) {
        /* The secret key: born here, erased before return. */
        uint8_t pk[EVIDENCE_PUBLIC_KEY_BYTES], sk[EVIDENCE_SECRET_KEY_BYTES];
        int code;

        if (a->n_words != 3 || a->build.output || a->build.direct || a->sign || a->key)
                return ctl_fail(EXIT_USAGE, "evidence keygen takes SECRETFILE PUBFILE, no option");
        if (evidence_key_generate(pk, sk) < 0)
                return ctl_fail(EXIT_FAILED, "libsodium cannot make a key");
        code = write_key(a->words[1], 0600, sk, true);
        sodium_memzero(sk, sizeof(sk));
        if (code == EXIT_OK) {
                code = write_key(a->words[2], 0644, pk, false);
                if (code != EXIT_OK)
                        (void) unlink(a->words[1]);
        }
        if (code == EXIT_OK)
                printf("secret key %s (mode 0600, for --sign), public key %s (for verify --key)\n", a->words[1],
                       a->words[2]);
        return code;
}

/* ---- making a bundle -------------------------------------------------------------------- */

static int build(EvidenceArgs *a) {
        /* The signing key: born here from its file, erased below on every
         * path (the bundle's writer keeps no copy). */
        uint8_t sk[EVIDENCE_SECRET_KEY_BYTES];
        int code;

        if (a->key)
                return ctl_fail(EXIT_USAGE, "--key applies to evidence verify; a bundle is signed with --sign KEYFILE");
        if (!a->build.output)
                return ctl_fail(EXIT_USAGE, "evidence needs -o FILE.tar (or verify FILE.tar, keygen SECRET PUBLIC)");
        if (a->n_words > CTL_EVIDENCE_SOURCES_MAX)
                return ctl_fail(EXIT_USAGE, "at most %u sources", CTL_EVIDENCE_SOURCES_MAX);
        for (size_t i = 0; i < a->n_words; i++)
                a->build.sources[i] = a->words[i];
        a->build.n_sources = a->n_words;
        code = a->sign ? read_key("--sign", a->sign, true, sk) : EXIT_OK;
        if (code == EXIT_OK) {
                a->build.sk = a->sign ? sk : NULL;
                code = ctl_evidence_build(&a->build);
        }
        a->build.sk = NULL;
        sodium_memzero(sk, sizeof(sk));
        return code;
}

int verb_evidence(int argc, char *argv[], const CtlContext *ctx) {
        EvidenceArgs a = { .build = { .config_path = ctx->config, .socket_path = ctx->socket } };
        int code;

        code = parse_options(argc, argv, &a);
        if (code != EXIT_OK)
                return code;
        if (sodium_init() < 0)
                return ctl_fail(EXIT_FAILED, "libsodium cannot start");
        if (a.n_words > 0 && strcmp(a.words[0], "verify") == 0)
                return verify(&a);
        if (a.n_words > 0 && strcmp(a.words[0], "keygen") == 0)
                return keygen(&a);
        return build(&a);
}
