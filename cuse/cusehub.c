/* cusehub.c - the hub: the devices' shared state (store, CRNG, seeder,
 * scratch), the pump that serves what the store holds (the CRNG's seed
 * first, then the devices), the seeding notifications, demand, shutdown.
 * It knows the kinds of device only through their CuseDevOps, and holds
 * the devices cusekinds.c attaches to it.
 *
 * Invariants: the seeder is pumped before any device; the scratch buffer is
 * the only place output bytes sit, and it is erased after use; after
 * cusehub_shutdown() nothing is served and every waiting read was answered.
 * Flow: store -> seeder -> crng -> [hub] -> devices -> kernel. */
#include "cusedev-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool/secret.h"

/* ------------------------------------------------------------------ */
/* hub                                                                 */

/* What a loop that asked nothing is told. */
static void ignore_event(void *userdata, CuseDev *dev, CuseEvent event, int error) {
}

static void ignore(void *userdata) {
}

static bool unlimited(void *userdata, uint32_t uid) {
        return true;
}

static bool limits_valid(const CuseHubLimits *l) {
        return l->max_parked > 0 && l->max_parked_per_uid > 0 && l->max_parked_per_uid < l->max_parked &&
               l->max_open_per_uid > 0 && l->max_dropin_open_per_uid > 0 && (unsigned) l->privileged_ioctls < _PRIVILEGE_MODE_MAX;
}

int cusehub_new(const CuseHubParams *params, Store *store, Crng *crng, Seeder *seeder,
                const CuseHubCallbacks *cb, CuseHub **ret) {
        CuseHub *hub;

        if (!params || !store || !crng || !seeder || !ret || !limits_valid(&params->limits))
                return -EINVAL;
        hub = calloc(1, sizeof(*hub));
        if (!hub)
                return -ENOMEM;
        hub->params = *params;
        if (params->proc_root) {
                hub->proc_root = strdup(params->proc_root);
                if (!hub->proc_root) {
                        free(hub);
                        return -ENOMEM;
                }
        }
        hub->params.proc_root = hub->proc_root;
        hub->store = store;
        hub->crng = crng;
        hub->seeder = seeder;
        if (cb)
                hub->cb = *cb;
        /* Never NULL from here on: every file calls them straight. */
        if (!hub->cb.event)
                hub->cb.event = ignore_event;
        if (!hub->cb.demand)
                hub->cb.demand = ignore;
        if (!hub->cb.backlog)
                hub->cb.backlog = ignore;
        if (!hub->cb.before_request)
                hub->cb.before_request = ignore;
        if (!hub->cb.proc_budget)
                hub->cb.proc_budget = unlimited;
        hub->trng_open = true;
        hub->scratch = secret_alloc(CUSE_MAX_REPLY);
        if (!hub->scratch) {
                free(hub->proc_root);
                free(hub);
                return -ENOMEM;
        }
        *ret = hub;
        return 0;
}

CuseHub *cusehub_free(CuseHub *hub) {
        if (!hub)
                return NULL;
        for (size_t i = 0; i < hub->n_devs; i++)
                cusedev_free(hub->devs[i]);
        secret_free(hub->scratch);
        free(hub->proc_root);
        free(hub);
        return NULL;
}

CuseDev *cusehub_device(CuseHub *hub, size_t i) {
        return i < hub->n_devs ? hub->devs[i] : NULL;
}

bool cusehub_has_room(const CuseHub *hub) {
        return hub->n_devs < CUSE_MAX_DEVICES;
}

void cusehub_attach(CuseHub *hub, CuseDev *dev) {
        hub->devs[hub->n_devs++] = dev;
}

bool cusehub_serve_backlog(CuseHub *hub) {
        bool more = false;

        if (hub->shutting_down)
                return false;
        for (size_t i = 0; i < hub->n_devs; i++) {
                CuseDev *dev = hub->devs[i];

                if (dev->n_deferred > 0)
                        dev->ops->serve_deferred(dev);
                more |= dev->n_deferred > 0;
        }
        return more;
}

void cusehub_seeded(CuseHub *hub, SeedResult result) {
        if (result == SEED_NONE)
                return;
        if (result == SEED_FIRST) {
                for (size_t i = 0; i < hub->n_devs; i++)
                        if (hub->devs[i]->ops->seeded)
                                hub->devs[i]->ops->seeded(hub->devs[i]);
                hub->cb.event(hub->cb.userdata, NULL, CUSE_EVENT_SEEDED, 0);
        }
        /* A seed taken may end the demand it made. */
        hub->cb.demand(hub->cb.userdata);
}

void cusehub_seed_if_due(CuseHub *hub) {
        cusehub_seeded(hub, seeder_pump(hub->seeder));
}

int cusehub_set_limits(CuseHub *hub, const CuseHubLimits *limits) {
        if (!limits_valid(limits))
                return -EINVAL;
        hub->params.limits = *limits;
        return 0;
}

void cusehub_set_trng_open(CuseHub *hub, bool open) {
        hub->trng_open = open;
}

void cusehub_set_sources_open(CuseHub *hub, uint32_t sources) {
        hub->sources_open = sources;
}

uint32_t cusehub_wanted_sources(const CuseHub *hub) {
        uint32_t wanted = 0;

        if (hub->shutting_down)
                return 0;
        for (size_t i = 0; i < hub->n_devs; i++)
                if (hub->devs[i]->per_source && hub->devs[i]->n_parked > 0)
                        wanted |= UINT32_C(1) << hub->devs[i]->source;
        return wanted;
}

bool cusehub_wants_blocks(const CuseHub *hub) {
        if (hub->shutting_down)
                return false;
        if (seeder_wants_block(hub->seeder))
                return true;
        for (size_t i = 0; i < hub->n_devs; i++)
                if (hub->devs[i]->ops->wants_blocks && hub->devs[i]->ops->wants_blocks(hub->devs[i]))
                        return true;
        return false;
}

void cusehub_pump(CuseHub *hub) {
        if (hub->shutting_down)
                return;
        /* CRNG seeds come first: readers of the drop-ins must never wait on
         * /dev/truerandom's readers (DESIGN §5, §6). */
        cusehub_seed_if_due(hub);
        /* The devices of one source first: their readers can take only
         * its blocks, /dev/truerandom's any. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < hub->n_devs; i++)
                        if (hub->devs[i]->ops->pump && hub->devs[i]->per_source == (pass == 0))
                                hub->devs[i]->ops->pump(hub->devs[i]);
}

void cusehub_shutdown(CuseHub *hub, int err) {
        hub->shutting_down = true;
        hub->shutdown_err = err;
        for (size_t i = 0; i < hub->n_devs; i++) {
                CuseDev *dev = hub->devs[i];
                cusedev_fail_parked(dev, err);
                /* Pollers re-poll and then see the error or POLLERR. */
                cusedev_notify_pollers(dev);
        }
}
