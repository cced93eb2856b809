/* change.c - how the daemon's parts ask the loop for a turn without calling
 * up into it. daemon_post_change() (loop thread) arms one sd-event defer
 * source: however many parts post in one turn (a wake-up, a device event,
 * a reload, a recheck, a reseed trigger), the loop's change handler
 * (loop.c) runs once, at the start of the next turn, ahead of events not
 * yet taken (its priority). daemon_wake() is the same from any thread
 * (collectors, assessors): it writes the eventfd whose handler runs the
 * change at once (and so does what was posted too).
 *
 * Invariant: nothing here acts; the handler decides what a change means.
 * Flow: sources, devices, reload, watchers -> [change] -> the loop's turn. */
#include "daemon-internal.h"

#include <unistd.h>

void daemon_post_change(Daemon *d) {
        /* Set-up posts too (a device up): the source exists from the
         * loop's creation on, and runs once the loop does. */
        if (d->change_source)
                (void) sd_event_source_set_enabled(d->change_source, SD_EVENT_ONESHOT);
}

void daemon_wake(void *userdata) {
        Daemon *d = userdata;
        uint64_t one = 1;

        /* An eventfd write never blocks short of 2^64 pending wakes. */
        (void) !write(d->wake_fd, &one, sizeof(one));
}

int daemon_reseed(Daemon *d, SeedTrigger trigger) {
        int r = seeder_trigger(d->seeder, trigger);

        if (r < 0)
                return r;
        /* The change pumps: the seed takes a stored block before any
         * reader does, then demand and STATUS= follow. */
        daemon_post_change(d);
        return 0;
}
