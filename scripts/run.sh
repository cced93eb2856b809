#!/bin/sh
# run.sh - build truerandomd and run it. Where this kernel has CUSE, the
# daemon runs here (in the background once its devices serve) and shows
# /dev/truerandom working. Where it has none, the same daemon boots inside a
# QEMU guest on Debian's stock kernel (which has cuse.ko) and shows it there.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
        echo "run.sh: run as root: the daemon opens /dev/cuse and creates device nodes" >&2
        exit 1
fi
. scripts/lib.sh
scripts/deps.sh || { echo "run.sh: installing the build dependencies failed (above)" >&2; exit 1; }
# shellcheck disable=SC2086 # options, one a word
configure build $BUILD_OPTIONS
meson compile -C build || { echo "run.sh: the build failed (above)" >&2; exit 1; }

[ -c /dev/cuse ] || modprobe cuse 2>/dev/null || true
if [ ! -c /dev/cuse ]; then
        echo "run.sh: this kernel ($(uname -r)) has no CUSE (/dev/cuse is missing)."
        echo "run.sh: booting Debian's kernel in QEMU with the daemon inside instead."
        scripts/deps.sh --vm
        exec scripts/vm-demo.sh build
fi

# The group truerandom, and the user the daemon becomes once set up
# ([daemon] user): from the package's own sysusers.d file, as meson install
# and the .deb make them.
if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers systemd/truerandom.sysusers
else
        getent group truerandom >/dev/null || groupadd --system truerandom
        getent passwd truerandomd >/dev/null ||
                useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin truerandomd
fi
conf=/etc/truerandomd.conf
[ -f "$conf" ] || conf=etc/truerandomd.conf
if ! build/daemon/truerandomd --config "$conf"; then
        echo "run.sh: truerandomd did not start (its reason is above); check the configuration with:" \
                "build/daemon/truerandomd --check-config --config $conf" >&2
        exit 1
fi
pid=$(pgrep -n -x truerandomd)
ls -l /dev/truerandom /dev/truerandom-random /dev/truerandom-urandom
echo "64 bytes from /dev/truerandom:"
head -c 64 /dev/truerandom | od -An -tx1
echo "run.sh: truerandomd is serving in the background (pid $pid; it logs through syslog(3), which" \
        "journald receives on bookworm: journalctl -t truerandomd); see it with" \
        "build/ctl/truerandomctl status, stop it with: kill $pid"
