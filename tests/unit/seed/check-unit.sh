#!/bin/sh
# check-unit.sh SYSTEMD-ANALYZE UNIT EXE - the seeder's unit as systemd
# reads it: `systemd-analyze verify` with ExecStart= pointing at the built
# program (a warning fails too: systemd would run the unit without that
# setting), and `systemd-analyze security --offline` at most 1.3, the
# exposure measured when the unit was written (bookworm's systemd 252): a
# hardening line lost or weakened fails here.
set -eu
analyze=$1 unit=$2 exe=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$exe|" "$unit" >"$dir/${unit##*/}"
out=$("$analyze" verify --man=no "$dir/${unit##*/}" 2>&1) || { echo "$out"; exit 1; }
out=$(printf '%s\n' "$out" | grep -v -e 'not found' -e '^$' || true)
if [ -n "$out" ]; then
        echo "$out"
        exit 1
fi
if ! "$analyze" security --offline=true --threshold=13 "$dir/${unit##*/}" >"$dir/security" 2>&1; then
        grep -v '^✓' "$dir/security"
        echo "exposure above 1.3"
        exit 1
fi
tail -n 1 "$dir/security"
