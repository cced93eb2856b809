/* online.h - the running check: a cheap entropy estimate of a credited
 * source while it runs, in its collector thread.
 *
 * SP 800-90B §6.3.1 (most common value) over consecutive windows of
 * ONLINE_WINDOW raw samples: one counter increment per sample, and at the
 * end of a window a look at 256 counts. The check asks whether the source
 * still has the margin its credit is set by (credit at most half the
 * measured min-entropy, docs/ENTROPY.md):
 *   - a window whose most common value is more frequent than a source of
 *     min-entropy 2 x credit allows (beyond a doubt of 2^ONLINE_ALPHA_LOG2,
 *     the exact binomial cutoff) is FLAGGED;
 *   - ONLINE_STOP_WINDOWS flagged windows in a row, or one window beyond
 *     what the credit itself allows, STOP crediting: the intake throws
 *     away its partial and held blocks and purges the source's unserved
 *     blocks, as on a health failure, and credits nothing until
 *   - ONLINE_RECOVER_WINDOWS windows in a row of samples read since the
 *     stop are unflagged: then it RESUMES.
 * False alarms (samples independent): a source whose most common value has
 * probability at most 2^-(2 x credit) flags a window with probability at
 * most k x 2^-40, k = min(256, 1 + floor(2^(2 x credit))) values that can
 * be that frequent: for jitter at 0.15 bit, 2^-39 per window, one in 160
 * years of sampling at 7 M samples/s (110 windows/s); a false stop needs
 * four in a row (< 2^-150). Correlated samples (jitter's are) spread the
 * count wider than the binomial: the bound holds for a source with margin,
 * not for one sitting exactly at 2 x credit.
 * The counts are a histogram of samples already conditioned: no secret.
 * Flow: source -> health, [running check] -> conditioner -> store. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* 65,536 samples: 1/15 of the 1,000,000 SP 800-90B assesses, enough for
 * §6.3.1's bound to sit within 0.02 bit of the estimate at p = 0.5, and
 * a window every 10 to 20 ms of jitter sampling here. */
#define ONLINE_WINDOW 65536U
/* Per value and window; see the false-alarm figures above. */
#define ONLINE_ALPHA_LOG2 (-40)
#define ONLINE_STOP_WINDOWS 4U
#define ONLINE_RECOVER_WINDOWS 4U

typedef enum OnlineState {
        ONLINE_PENDING,  /* no window finished yet */
        ONLINE_OK,
        ONLINE_FLAGGED,  /* the last window was flagged; still credited */
        ONLINE_STOPPED,  /* not credited until it recovers */
        _ONLINE_STATE_MAX,
} OnlineState;

typedef enum OnlineEvent {
        ONLINE_EVENT_NONE,     /* the window goes on */
        ONLINE_EVENT_WINDOW,   /* a window ended; stats say how it went */
        ONLINE_EVENT_STOP,     /* a window ended and crediting stops */
        ONLINE_EVENT_RESUME,   /* a window ended and crediting resumes */
} OnlineEvent;

typedef struct OnlineStats {
        OnlineState state;
        uint32_t last_max;       /* the last window's most common count; 0 before the first */
        uint32_t cutoff_flag;    /* a count above this: below 2 x credit */
        uint32_t cutoff_stop;    /* a count above this: below the credit */
        uint32_t stop_max;       /* the most common count of the window that last stopped it; 0: none */
        uint64_t windows, flagged, stops;
} OnlineStats;

typedef struct OnlineCheck {
        uint32_t count[256];
        uint32_t n;
        unsigned flagged_run, clean_run;
        OnlineStats stats;
} OnlineCheck;

/* credit_mbits 1..8000 (2 x credit is capped at 8 bits: an 8-bit sample
 * holds no more). -EINVAL otherwise. */
int online_init(OnlineCheck *o, uint32_t credit_mbits);

OnlineEvent online_window_end(OnlineCheck *o);

static inline OnlineEvent online_feed(OnlineCheck *o, uint8_t sample) {
        o->count[sample]++;
        if (++o->n < ONLINE_WINDOW)
                return ONLINE_EVENT_NONE;
        return online_window_end(o);
}

static inline bool online_stopped(const OnlineCheck *o) {
        return o->stats.state == ONLINE_STOPPED;
}

/* §6.3.1: -log2 of the upper 99 % bound of the most common value's
 * probability, from its count in a window; NAN for count 0. */
double online_estimate_bits(uint32_t max_count);

/* "pending", "ok", "flagged", "stopped"; NULL out of range. */
const char *online_state_to_string(OnlineState s);
