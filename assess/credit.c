/* credit.c - what a source is credited, and why (see credit.h).
 * Flow: assessment -> [credit] -> collector (daemon). */
#include "credit.h"

#include <math.h>
#include <stdio.h>

uint32_t credit_bound_mbits(double min_entropy) {
        double m;

        if (!(min_entropy > 0.0))
                return 0;
        m = floor(min_entropy * 1000.0 / 2.0);
        return m > 8000.0 ? 8000 : (uint32_t) m;
}

void credit_decide(const SourceConfig *sc, const Assessment *a, CreditDecision *ret) {
        CreditDecision d = { .origin = CREDIT_EXPLICIT, .credit_mbits = sc->credit_mbits };

        if (a) {
                d.has_estimate = true;
                d.min_entropy = a->report.min_entropy;
                d.bound_mbits = credit_bound_mbits(a->report.min_entropy);
        }
        if (!sc->credit_auto)
                d.above_bound = d.has_estimate && d.credit_mbits > d.bound_mbits;
        else if (!a) {
                d.origin = CREDIT_PENDING;
                d.credit_mbits = 0;
        } else if (d.bound_mbits > sc->credit_cap_mbits) {
                d.origin = CREDIT_CAPPED;
                d.credit_mbits = sc->credit_cap_mbits;
        } else {
                d.origin = CREDIT_AUTO;
                d.credit_mbits = d.bound_mbits;
        }
        *ret = d;
}

bool credit_assessment_holds(const Assessment *a, const Identity *now, size_t samples, char *why, size_t why_size) {
        char changed[128];

        if (!identity_equal(&a->identity, now, changed, sizeof(changed))) {
                if (why)
                        snprintf(why, why_size, "holds for another machine or sampler: %s", changed);
                return false;
        }
        if (a->report.samples < samples) {
                if (why)
                        snprintf(why, why_size, "was made from %zu samples, fewer than [assessment] samples = %zu",
                                 a->report.samples, samples);
                return false;
        }
        return true;
}

const char *credit_origin_to_string(CreditOrigin o) {
        static const char *const names[_CREDIT_ORIGIN_MAX] = {
                [CREDIT_EXPLICIT] = "explicit",
                [CREDIT_AUTO] = "auto",
                [CREDIT_CAPPED] = "capped",
                [CREDIT_PENDING] = "pending",
        };
        return (unsigned) o < _CREDIT_ORIGIN_MAX ? names[o] : "?";
}
