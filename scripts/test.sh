#!/bin/sh
# test.sh - the project's test command: install what is missing, build with
# gcc (warnings are errors), run every suite, the unit suite again with both
# cores loaded, then the sanitizer and clang builds. Prints one closing line
# "N passed, N failed" over all suites.
#
#   scripts/test.sh            everything (what .ci/run does), the fresh
#                              minbase chroot check last
#   SUITES="unit protocol" scripts/test.sh   a subset (skips the extra builds)
#
# Each suite runs once per run. Inside the fresh minbase chroot (the `fresh`
# suite, TRUERANDOM_IN_FRESH_CHROOT set) the suites have already run on the
# host: there it installs, builds every configuration and runs the unit
# suite, which is what a fresh machine can get wrong.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh

SUITES=${SUITES:-"unit protocol vm systemd"}
full=0
[ "$SUITES" = "unit protocol vm systemd" ] && full=1
fresh_smoke=0
if [ -n "${TRUERANDOM_IN_FRESH_CHROOT:-}" ] && [ "$full" -eq 1 ]; then
        SUITES=unit
        fresh_smoke=1
fi

# A step that ends this script (set -e) is named: a fresh machine's first
# run must never stop with no word.
step="starting"
finished=0
log=$(mktemp)
trap 'rc=$?; rm -f "$log"; if [ "$finished" -eq 0 ] && [ "$rc" -ne 0 ]; then
        echo "test.sh: stopped while $step (exit $rc); nothing after it ran" >&2; fi' EXIT

step="installing the dependencies (scripts/deps.sh)"
if [ "$(id -u)" -eq 0 ]; then
        scripts/deps.sh --all
else
        scripts/deps.sh || echo "test.sh: continuing without root; suites that need packages will skip" >&2
fi

passed=0
failed=0

# run_suite BUILDDIR SUITE... : meson test, counting its Ok/Fail lines.
run_suite() {
        dir=$1
        shift
        args=""
        for s in "$@"; do args="$args --suite $s"; done
        echo "=== $dir:$args"
        for s in "$@"; do
                if ! meson test -C "$dir" --list --suite "$s" 2>/dev/null | grep -q ":$s /"; then
                        echo "test.sh: suite '$s' has no tests in $dir" >&2
                        failed=$((failed + 1))
                        return 0
                fi
        done
        # shellcheck disable=SC2086
        if meson test -C "$dir" $args --print-errorlogs --num-processes 2 >"$log" 2>&1; then
                rc=0
        else
                rc=1
        fi
        cat "$log"
        ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        bad=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        timeout_n=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        passed=$((passed + ${ok:-0}))
        failed=$((failed + ${bad:-0} + ${timeout_n:-0}))
        if [ "$rc" -ne 0 ] && [ "${bad:-0}" -eq 0 ] && [ "${timeout_n:-0}" -eq 0 ]; then
                failed=$((failed + 1))
        fi
}

setup() {
        dir=$1
        shift
        step="configuring $dir"
        configure "$dir" "$@"
        step="building $dir"
        meson compile -C "$dir" || { echo "test.sh: building $dir failed (above)" >&2; return 1; }
        step="running the suites"
}

# run_loaded BUILDDIR SUITE: the suite again while stress-ng keeps both
# cores and some memory busy: what runs on a shared build machine (and the
# .deb's build-time tests) must not depend on an idle one.
run_loaded() {
        if ! command -v stress-ng >/dev/null 2>&1; then
                echo "test.sh: stress-ng missing: the loaded $2 run cannot run" >&2
                failed=$((failed + 1))
                return 0
        fi
        stress-ng --cpu 2 --vm 1 --vm-bytes 256M --timeout 3600 --quiet &
        stress=$!
        echo "=== $1: $2 with both cores loaded (stress-ng --cpu 2 --vm 1, pid $stress)"
        run_suite "$1" "$2"
        kill "$stress" 2>/dev/null || true
        wait "$stress" 2>/dev/null || true
}

# shellcheck disable=SC2086 # options, one a word
setup build $BUILD_OPTIONS
for s in $SUITES; do
        run_suite build "$s"
done

# The sanitizer builds, over the suites that run the real handlers
# in-process, with both compilers: gcc's and clang's AddressSanitizer see
# different faults (clang's caught a variadic wrapper reading past its
# arguments that gcc's let through). clang also gives a second compiler's
# warnings and the libFuzzer harnesses.
SANITIZE_OPTIONS="-Dwerror=true -Dtests=enabled -Db_sanitize=address,undefined -Db_lundef=false"
if [ "$full" -eq 1 ]; then
        # shellcheck disable=SC2086 # options, one a word
        setup build-asan $SANITIZE_OPTIONS
        # shellcheck disable=SC2086
        CC=clang setup build-clang $SANITIZE_OPTIONS -Dfuzz=true
fi
if [ "$full" -eq 1 ] && [ "$fresh_smoke" -eq 0 ]; then
        run_loaded build unit
        run_suite build-asan unit protocol
        run_suite build-clang unit protocol fuzz
        # valgrind once over the daemon serving and stopping with parked readers.
        run_suite build valgrind
        # Last, the README's commands in a fresh minbase chroot (inside it,
        # this suite skips itself).
        run_suite build fresh
fi

finished=1
if [ "$failed" -eq 0 ]; then
        echo "test.sh: every suite passed ($SUITES$([ "$full" -eq 1 ] && [ "$fresh_smoke" -eq 0 ] &&
                echo ", unit loaded, asan, clang, fuzz, valgrind, fresh"))"
else
        echo "test.sh: $failed failed: see the FAIL lines above, and each build's meson-logs/testlog.txt"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
