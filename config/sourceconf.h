/* sourceconf.h - a configured source as the pool opens it: the same
 * SourceOps and SourceParams for the daemon's collectors, its raw exports,
 * its assessments, and truerandomctl's --direct captures, so a capture
 * without the daemon samples exactly as the daemon would.
 * Flow: config -> [sourceconf] -> pool/ sources. */
#pragma once

#include "config.h"
#include "pool/source.h"

SourceParams sourceconf_params(const SourceConfig *sc);
/* NULL when this build has no such source. */
const SourceOps *sourceconf_ops(ConfigSource s);
/* -ENOENT: no source of that name; else its index. */
int sourceconf_lookup(const char *name, ConfigSource *ret);
