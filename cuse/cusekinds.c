/* cusekinds.c - the kinds of CUSE device, one row each: the CuseDevOps
 * that serve it (its requests, and what it does when the hub pumps, the
 * CRNG seeds or deferred replies wait). cusedev_new() looks a kind up
 * here, creates the device (cusedev.c) and hands it to the hub
 * (cusehub.c), which from then on knows it only through its row. Adding a
 * kind is a value in CuseDevKind (cusedev.h), a row here, and its ops;
 * more devices of a kind (another name, mode or group) need no row.
 *
 * The top of cuse/: it alone names the devices' ops; they use the hub and
 * cusedev.c below, never this.
 * Flow: daemon (a device per configured row) -> [kinds] -> hub -> device. */
#include "cusedev-internal.h"

#include <errno.h>
#include <unistd.h>

static const CuseDevOps *const kinds[_CUSEDEV_KIND_MAX] = {
        [CUSEDEV_TRNG] = &trngdev_ops,
        [CUSEDEV_RANDOM] = &crngdev_random_ops,
        [CUSEDEV_URANDOM] = &crngdev_urandom_ops,
        [CUSEDEV_NULL] = &crngdev_null_ops,
};

const char *cusedev_kind_to_string(CuseDevKind kind) {
        return kind < _CUSEDEV_KIND_MAX ? kinds[kind]->name : "unknown";
}

int cusedev_new(CuseHub *hub, CuseDevKind kind, const CuseDevParams *params, int fd,
                const struct fuse_custom_io *io, CuseDev **ret) {
        CuseDev *dev;
        int r;

        if (!hub || kind >= _CUSEDEV_KIND_MAX || !cusehub_has_room(hub) ||
            (params && params->per_source && (kind != CUSEDEV_TRNG || params->source >= STORE_SOURCES_MAX))) {
                if (fd >= 0)
                        close(fd);
                return -EINVAL;
        }
        r = cusedev_open(hub, kind, kinds[kind], params, fd, io, &dev);
        if (r < 0)
                return r;
        cusehub_attach(hub, dev);
        *ret = dev;
        return 0;
}
