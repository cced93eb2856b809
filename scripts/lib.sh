# lib.sh - what scripts/run.sh and scripts/test.sh share; sourced by sh.
#
#   configure DIR [OPTION...]   meson setup (or --reconfigure) DIR, quiet
#                               unless it fails, then says what failed
#
# BUILD_OPTIONS: the options of build/. run.sh and test.sh configure it
# alike, so that test.sh after run.sh compiles nothing again (a change of
# -Dwerror alone recompiles every file).
BUILD_OPTIONS="-Dwerror=true -Dtests=enabled"

configure() {
        cfg_dir=$1
        shift
        cfg_log=$(mktemp)
        if [ -f "$cfg_dir/build.ninja" ]; then
                set -- --reconfigure "$cfg_dir" "$@"
        else
                set -- "$cfg_dir" "$@"
        fi
        if ! meson setup "$@" >"$cfg_log" 2>&1; then
                cat "$cfg_log" >&2
                rm -f "$cfg_log"
                echo "${0##*/}: 'meson setup $*' failed (above; log: $cfg_dir/meson-logs/meson-log.txt)" >&2
                return 1
        fi
        rm -f "$cfg_log"
}
