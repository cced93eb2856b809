#!/bin/sh
# run-fuzzer.sh - one libFuzzer harness, as CI runs it.
#
#   run-fuzzer.sh HARNESS CORPUS_DIR [libFuzzer options...]
#
# The in-tree corpus is copied to a temp dir first, so nothing is ever
# written into the source tree. Every input of it runs once (the regression
# pass: a crash found earlier is kept there), then the fuzzer runs from the
# copy for as long as the options say (-max_total_time=N). On a crash the
# reproducer's path and its base64 are printed, the temp dir is kept, and
# the exit status is non-zero; add the input to CORPUS_DIR once it is fixed.
set -eu

if [ $# -lt 2 ]; then
        echo "usage: $0 HARNESS CORPUS_DIR [libFuzzer options...]" >&2
        exit 2
fi
exe=$1
corpus=$2
shift 2

work=$(mktemp -d "${TMPDIR:-/tmp}/truerandom-$(basename "$exe").XXXXXX")
mkdir "$work/corpus" "$work/artifacts" "$work/tmp"
# What a harness leaves in TMPDIR goes with the work dir.
TMPDIR=$work/tmp
export TMPDIR
if [ -d "$corpus" ]; then
        find "$corpus" -maxdepth 1 -type f -exec cp {} "$work/corpus/" \;
fi

# Abort on the first report of either sanitizer, with a stack. Clearing
# shadow memory by memset rather than by remapping it saves a TLB shootdown
# per large allocation (libfuse's 1 MiB buffers), which VMs pay dearly for.
ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:clear_shadow_mmap_threshold=4294967296${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS

failed() {
        found=0
        for f in "$work"/artifacts/*; do
                [ -f "$f" ] || continue
                found=1
                echo "$1: reproducer $f ($(wc -c <"$f") bytes), base64:"
                base64 "$f"
        done
        [ "$found" = 1 ] || echo "$1: no reproducer was written (see the log above)"
        echo "$1: kept $work"
        exit 1
}

echo "== regression: $(find "$work/corpus" -type f | wc -l) inputs from $corpus"
"$exe" -runs=0 -artifact_prefix="$work/artifacts/" "$work/corpus" || failed regression

echo "== fuzzing: $*"
"$exe" -artifact_prefix="$work/artifacts/" -print_final_stats=1 -timeout=25 "$@" "$work/corpus" ||
        failed fuzzing

rm -rf "$work"
