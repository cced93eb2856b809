#!/bin/sh
# check-units.sh SYSTEMD-ANALYZE UNIT... - systemd-analyze verify, where a
# warning ("Failed to parse value, ignoring") fails too: systemd itself
# would start such a unit without the setting.
set -eu
analyze=$1
shift
out=$("$analyze" verify "$@" 2>&1) || { echo "$out"; exit 1; }
# Units it names that are not installed here (truerandomd.service in After=)
# are not the examples' fault.
out=$(printf '%s\n' "$out" | grep -v -e 'not found' -e '^$' || true)
if [ -n "$out" ]; then
        echo "$out"
        exit 1
fi
echo "verified: $*"
