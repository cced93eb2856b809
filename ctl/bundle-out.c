/* bundle-out.c - the parts of an evidence bundle, listed (see
 * bundle-out.h). Flow: evidence-build, evidence-parts -> [bundle-out]
 * -> evidence/bundle. */
#include "bundle-out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "util/json-util.h"

#define CONTENTS_NAME_WIDTH 22

static int failed(const CtlBundle *b, const char *name, int r) {
        return ctl_fail(EXIT_FAILED, "writing %s into %s: %s", name, b->output, strerror(-r));
}

int ctl_bundle_init(CtlBundle *b, int fd, const char *output) {
        int r;

        *b = (CtlBundle){ .output = output };
        b->contents = open_memstream(&b->contents_text, &b->contents_size);
        if (!b->contents)
                return ctl_fail(EXIT_FAILED, "out of memory");
        r = evidence_writer_new(fd, 0, &b->writer);
        if (r < 0) {
                ctl_bundle_done(b);
                return ctl_fail(EXIT_FAILED, "starting %s: %s", output, strerror(-r));
        }
        return EXIT_OK;
}

void ctl_bundle_done(CtlBundle *b) {
        b->writer = evidence_writer_free(b->writer);
        if (b->contents)
                fclose(b->contents);
        b->contents = NULL;
        free(b->contents_text);
        b->contents_text = NULL;
}

static void list(CtlBundle *b, const char *name, const char *prefix, const char *what) {
        fprintf(b->contents, "  %-*s %s%s\n", CONTENTS_NAME_WIDTH, name, prefix, what);
}

int ctl_bundle_add(CtlBundle *b, const char *name, const void *data, size_t n, const char *what) {
        int r = evidence_add_buffer(b->writer, name, data, n);

        if (r < 0)
                return failed(b, name, r);
        b->files++;
        if (what)
                list(b, name, "", what);
        return EXIT_OK;
}

int ctl_bundle_json(CtlBundle *b, const char *name, struct json_object *j, const char *what) {
        _cleanup_(json_object_putp) struct json_object *o = j;
        const char *text;
        _cleanup_free_ char *line = NULL;

        text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE)
                 : NULL;
        if (!text || asprintf(&line, "%s\n", text) < 0)
                return failed(b, name, -ENOMEM);
        return ctl_bundle_add(b, name, line, strlen(line), what);
}

int ctl_bundle_absent(CtlBundle *b, const char *name, const char *what, const char *why) {
        struct json_object *o = json_object_new_object();
        int code;

        if (json_put(o, "absent", json_object_new_string(why)) < 0) {
                json_object_put(o);
                return failed(b, name, -ENOMEM);
        }
        code = ctl_bundle_json(b, name, o, NULL);
        if (code == EXIT_OK)
                fprintf(b->contents, "  %-*s %s: absent: %s\n", CONTENTS_NAME_WIDTH, name, what, why);
        return code;
}

const char *ctl_bundle_contents(CtlBundle *b) {
        if (fflush(b->contents) != 0 || !b->contents_text)
                return "";
        return b->contents_text;
}

int ctl_bundle_finish(CtlBundle *b, const uint8_t *sk) {
        int r = evidence_writer_finish(b->writer, sk);

        if (r < 0)
                return failed(b, EVIDENCE_MANIFEST, r);
        return EXIT_OK;
}
