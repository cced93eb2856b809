/* verb.c - what the verbs share (see verb.h).
 * Flow: truerandomctl -> [verb] -> verb-*.c. */
#include "verb.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int ctl_getopt(int argc, char *argv[], const struct option *options, int *ret_index) {
        char shortopts[64];
        size_t k = 0;

        for (const struct option *o = options; o->name && k + 3 < sizeof(shortopts); o++) {
                if (o->flag || o->val <= 0 || o->val >= 0x80 || !isalpha(o->val))
                        continue;
                shortopts[k++] = (char) o->val;
                if (o->has_arg != no_argument)
                        shortopts[k++] = ':';
                if (o->has_arg == optional_argument)
                        shortopts[k++] = ':';
        }
        shortopts[k] = '\0';
        return getopt_long(argc, argv, shortopts, options, ret_index);
}

bool ctl_option_global(int c) {
        return c == 's' || c == 'c' || c == 'h' || c == CTL_OPTION_VERSION;
}

int ctl_parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}
