/* eajson.h - an SP 800-90B report (estimate/noniid.h) as JSON, one shape
 * for `truerandomctl assess --json` and what keeps its reports:
 *   { "samples": N, "bits": B, "h_original": x, "h_bitstring": y,
 *     "min_entropy": z,
 *     "mcv": { "original": a, "bitstring": b }, ... one member per
 *     estimator, named by ea_estimator_name() }
 * Values are written with 6 decimals, as NIST's ea_non_iid prints them;
 * null where NIST does not run the estimator (h_bitstring: no bitstring
 * pass on binary samples). Reading it back gives the same doubles
 * (ea_report_round() makes a fresh report equal to its stored form).
 * Flow: estimate/ -> [eajson] -> truerandomctl, assessment, status. */
#pragma once

#include <json-c/json.h>

#include "estimate/noniid.h"

#define EA_JSON_DECIMALS 6

/* A new object, or NULL when out of memory. */
struct json_object *ea_report_to_json(const EaReport *r);
/* 0, or -EBADMSG when a member is missing, mistyped or out of range
 * (entropy outside [0, bits], a negative or fractional count), with *ret
 * untouched. */
int ea_report_from_json(const struct json_object *o, EaReport *ret);

/* v as it reads back from its 6-decimal form; NAN stays NAN. */
double ea_json_round(double v);
/* Every value of r rounded so. */
void ea_report_round(EaReport *r);
/* A number with 6 decimals, or null for NAN: a new reference or NULL,
 * which json-c's adders take as JSON null. */
struct json_object *ea_json_value(double v);
