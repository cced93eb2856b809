/* feeder.c - the kernel seeder's schedule and feed (see feeder.h).
 * The only secret is the block buffer of a feed: born in the read,
 * erased right after the kernel took it, on every path. */
#include "feeder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ctlcommand.h"


struct Feeder {
        usec_t interval;
        unsigned blocks;
        FeederOps ops;
        void *userdata;

        bool fed;            /* at least once since start */
        usec_t last_feed;
        bool have_counters;  /* the counters below are the daemon's last */
        uint64_t vm_generation_changes, resumes;
        FeedReason pending;  /* an event seen, its feed not done yet */
        const char *trouble; /* the stage the last refusal or failure was at */
};

/* The names the daemon's kernel-fed knows (proto/), after "none". */
_Static_assert(_FEED_REASON_MAX == 1 + CTL_FEED_REASONS, "a feed reason per name of ctl_feed_reasons[]");

const char *feed_reason_to_string(FeedReason r) {
        if (r == FEED_REASON_NONE)
                return "none";
        return r > 0 && r < _FEED_REASON_MAX ? ctl_feed_reasons[r - 1] : "unknown";
}

int feeder_new(usec_t interval, unsigned blocks, const FeederOps *ops, void *userdata, Feeder **ret) {
        Feeder *s;

        if (interval == 0 || blocks == 0 || blocks > FEED_BLOCKS_MAX || !ops || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->interval = interval;
        s->blocks = blocks;
        s->ops = *ops;
        s->userdata = userdata;
        *ret = s;
        return 0;
}

Feeder *feeder_free(Feeder *s) {
        free(s);
        return NULL;
}

usec_t feeder_next_due(const Feeder *s) {
        return s->fed ? s->last_feed + s->interval : USEC_INFINITY;
}

/* Takes in the daemon's counters: a counter that grew is an event to
 * feed for; one that fell is a restarted daemon, counting anew (a
 * restart is no reason to feed). */
static void observe(Feeder *s, const SeedStatus *st) {
        if (s->have_counters) {
                if (st->vm_generation_changes > s->vm_generation_changes)
                        s->pending = FEED_REASON_VM_GENERATION;
                else if (st->resumes > s->resumes && s->pending == FEED_REASON_NONE)
                        s->pending = FEED_REASON_RESUME;
        }
        s->vm_generation_changes = st->vm_generation_changes;
        s->resumes = st->resumes;
        s->have_counters = true;
}

static FeedReason due(const Feeder *s, usec_t now) {
        if (!s->fed)
                return FEED_REASON_BOOT;
        if (s->pending != FEED_REASON_NONE)
                return s->pending;
        if (now >= s->last_feed + s->interval)
                return FEED_REASON_INTERVAL;
        return FEED_REASON_NONE;
}

static void trouble(Feeder *s, FeedOutcome *o, FeedResult result, const char *stage, int error) {
        o->result = result;
        o->stage = stage;
        o->error = error;
        /* The same trouble as at the last step: the log has said it. */
        o->repeated = s->trouble == stage;
        s->trouble = stage;
}

/* Reads and gives the blocks, then reseeds. */
static void feed(Feeder *s, usec_t now, FeedOutcome *o) {
        uint8_t block[SEED_BLOCK_SIZE];
        int r = 0;

        for (unsigned i = 0; i < s->blocks; i++) {
                r = s->ops.read(s->userdata, block, sizeof(block));
                if (r < 0) {
                        explicit_bzero(block, sizeof(block));
                        /* Given so far stays given; it was full entropy. */
                        if (i == 0) {
                                trouble(s, o, FEED_RESULT_REFUSED, "read", r);
                                return;
                        }
                        break;
                }
                r = s->ops.add_entropy(s->userdata, block, sizeof(block), 8 * sizeof(block));
                explicit_bzero(block, sizeof(block));
                if (r < 0) {
                        trouble(s, o, FEED_RESULT_FAILED, "add", r);
                        return;
                }
                o->blocks++;
                o->bits += 8 * sizeof(block);
        }
        /* The blocks are in the kernel's pool and counted there: the
         * schedule moves on even if the reseed below fails. */
        s->fed = true;
        s->last_feed = now;
        s->pending = FEED_REASON_NONE;
        r = s->ops.reseed(s->userdata);
        if (r < 0) {
                trouble(s, o, FEED_RESULT_FAILED, "reseed", r);
                return;
        }
        o->result = FEED_RESULT_FED;
        s->trouble = NULL;
}

void feeder_step(Feeder *s, usec_t now, FeedOutcome *ret) {
        SeedStatus st;
        int r;

        *ret = (FeedOutcome) { .result = FEED_RESULT_IDLE };
        r = s->ops.status(s->userdata, &st);
        if (r >= 0)
                observe(s, &st);
        ret->reason = due(s, now);
        if (ret->reason == FEED_REASON_NONE)
                return;
        if (r < 0 || !st.serving) {
                if (r >= 0)
                        snprintf(ret->why, sizeof(ret->why), "%s", st.why);
                trouble(s, ret, FEED_RESULT_REFUSED, r < 0 ? "daemon" : "status", r < 0 ? r : 0);
                return;
        }
        feed(s, now, ret);
}
