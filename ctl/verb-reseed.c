/* verb-reseed.c - truerandomctl reseed: the CRNG reseeded from the pool
 * now (root; the daemon decides, from the socket's peer credentials).
 * Flow: truerandomctl -> [verb-reseed] -> client -> daemon. */
#include <stdlib.h>

#include "client.h"
#include "util/cleanup.h"
#include "verb.h"

const struct option verb_reseed_options[] = {
        CTL_GLOBAL_OPTIONS,
};

int verb_reseed(int argc, char *argv[], const CtlContext *ctx) {
        _cleanup_free_ char *socket_path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        CtlRequest req;
        CtlReply r;
        int c;

        while ((c = ctl_getopt(argc, argv, verb_reseed_options, NULL)) >= 0)
                if (!ctl_option_global(c))
                        return EXIT_USAGE;
        socket_path = ctl_socket_path(ctx->socket, ctx->config);
        if (!socket_path)
                return ctl_fail(EXIT_FAILED, "out of memory");
        buf = malloc(CTL_REPLY_MAX);
        ctl_request_init(&req, ctl_command_from_string("reseed"));
        return ctl_request_ok(socket_path, &req, buf, &r);
}
