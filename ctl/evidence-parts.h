/* evidence-parts.h - the parts of an evidence bundle besides the
 * captures and their reports (evidence-build.h lists them all): the
 * daemon's status and what it says of the running gate and the health
 * tests, the configuration files, the machine and the build, the ledger.
 * Each is taken as it is found; one that is not there is written absent,
 * with the reason.
 * Flow: status, config, machine, ledger -> [evidence-parts] -> bundle-out. */
#pragma once

#include <json-c/json.h>

#include "bundle-out.h"
#include "config/config.h"

/* status.json (the daemon's text as it came), gate.json, health.json;
 * status NULL, text NULL: --direct, no daemon, so all three absent. */
int evidence_parts_status(CtlBundle *b, struct json_object *status, const char *text, size_t size);

/* config.json and config/N-NAME, the files config_load() read (config,
 * read from config_path). */
int evidence_parts_config(CtlBundle *b, const Config *config, const char *config_path,
                          struct json_object *status);

/* machine.json and build.json (machine.h); the daemon's version from
 * status when there is one. */
int evidence_parts_machine(CtlBundle *b, struct json_object *status);

/* ledger/ledger-*.jsonl and ledger-verify.json from dir. */
int evidence_parts_ledger(CtlBundle *b, const char *dir);
