/* online.c - the running check (see online.h).
 *
 * The cutoffs come from the same exact binomial as the APT's
 * (health_critbinom), computed once per credit. A window is judged by its
 * most common value's count alone; the counts are cleared after each.
 * Plain data, no secrets.
 * Flow: source -> health, [running check] -> conditioner -> store. */
#include "online.h"
#include "health.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* §6.3.1's 99 % confidence: Z_(1 - 0.005). */
#define Z_99 2.576

int online_init(OnlineCheck *o, uint32_t credit_mbits) {
        double credit = credit_mbits / 1000.0;
        unsigned flag, stop;
        int r;

        if (!o || credit_mbits == 0 || credit_mbits > CREDIT_MBITS_MAX)
                return -EINVAL;
        r = health_critbinom(ONLINE_WINDOW, exp2(-fmin(2.0 * credit, 8.0)), ONLINE_ALPHA_LOG2, &flag);
        if (r < 0)
                return r;
        r = health_critbinom(ONLINE_WINDOW, exp2(-credit), ONLINE_ALPHA_LOG2, &stop);
        if (r < 0)
                return r;

        memset(o, 0, sizeof(*o));
        o->stats.cutoff_flag = flag;
        o->stats.cutoff_stop = stop;
        return 0;
}

OnlineEvent online_window_end(OnlineCheck *o) {
        OnlineStats *s = &o->stats;
        uint32_t max = 0;
        bool flagged, below_credit;

        for (unsigned v = 0; v < 256; v++)
                if (o->count[v] > max)
                        max = o->count[v];
        memset(o->count, 0, sizeof(o->count));
        o->n = 0;

        flagged = max > s->cutoff_flag;
        below_credit = max > s->cutoff_stop;
        s->last_max = max;
        s->windows++;
        s->flagged += flagged;
        o->flagged_run = flagged ? o->flagged_run + 1 : 0;
        o->clean_run = flagged ? 0 : o->clean_run + 1;

        if (s->state == ONLINE_STOPPED) {
                if (o->clean_run < ONLINE_RECOVER_WINDOWS)
                        return ONLINE_EVENT_WINDOW;
                s->state = ONLINE_OK;
                o->flagged_run = 0;
                return ONLINE_EVENT_RESUME;
        }
        if (below_credit || o->flagged_run >= ONLINE_STOP_WINDOWS) {
                s->state = ONLINE_STOPPED;
                s->stops++;
                s->stop_max = max;
                o->clean_run = 0;
                return ONLINE_EVENT_STOP;
        }
        s->state = flagged ? ONLINE_FLAGGED : ONLINE_OK;
        return ONLINE_EVENT_WINDOW;
}

double online_estimate_bits(uint32_t max_count) {
        double p, u;

        if (max_count == 0)
                return NAN;
        p = (double) max_count / ONLINE_WINDOW;
        u = fmin(1.0, p + Z_99 * sqrt(p * (1.0 - p) / (ONLINE_WINDOW - 1)));
        return -log2(u);
}

const char *online_state_to_string(OnlineState s) {
        static const char *const table[_ONLINE_STATE_MAX] = {
                [ONLINE_PENDING] = "pending",
                [ONLINE_OK] = "ok",
                [ONLINE_FLAGGED] = "flagged",
                [ONLINE_STOPPED] = "stopped",
        };

        if ((unsigned) s >= _ONLINE_STATE_MAX)
                return NULL;
        return table[s];
}
