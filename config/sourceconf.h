/* sourceconf.h - a configured source as the pool opens it, and what the
 * daemon asks of its settings: the same SourceOps and SourceParams for the
 * daemon's collectors, its raw exports, its assessments, and truerandomctl's
 * --direct captures, so a capture without the daemon samples exactly as
 * the daemon would; whether it may be credited; whether a reload changed
 * it. Everything here reads the source's row, none names a source.
 * Flow: config -> [sourceconf] -> pool/ sources. */
#pragma once

#include "config.h"
#include "pool/source.h"

SourceParams sourceconf_params(const SourceConfig *sc);
/* Source s's row; NULL past the table. */
const SourceOps *sourceconf_ops(ConfigSource s);
/* -ENOENT: no source of that name; else its index. */
int sourceconf_lookup(const char *name, ConfigSource *ret);
/* A source that may be credited: enabled, not one never credited (kernel),
 * and not set to credit = 0. */
bool sourceconf_creditable(const SourceConfig *sc, ConfigSource s);
/* Whether a and b (source s's settings before and after a reload) differ in
 * anything its row has a key for: a reload then restarts it. */
bool sourceconf_changed(ConfigSource s, const SourceConfig *a, const SourceConfig *b);
