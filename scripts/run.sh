#!/bin/sh
# run.sh - build truerandomd and run it. Where this kernel has CUSE, the
# daemon runs here (in the background once its devices serve) and shows
# /dev/truerandom working. Where it has none, the same daemon boots inside a
# QEMU guest on Debian's stock kernel (which has cuse.ko) and shows it there.
#
#   scripts/run.sh          as above
#   scripts/run.sh --egd    no CUSE needed: the daemon runs here with
#                           etc/examples/egd-host.conf (no device, the EGD
#                           socket for QEMU's rng-egd and tools) and shows
#                           a read over EGD
set -eu
cd "$(dirname "$0")/.."
egd=0
case "${1:-}" in
--egd) egd=1 ;;
"") ;;
*) echo "usage: $0 [--egd]" >&2; exit 64 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
        echo "run.sh: run as root: the daemon opens /dev/cuse and creates device nodes" >&2
        exit 1
fi
. scripts/lib.sh
scripts/deps.sh || { echo "run.sh: installing the build dependencies failed (above)" >&2; exit 1; }
# shellcheck disable=SC2086 # options, one a word
configure build $BUILD_OPTIONS
meson compile -C build || { echo "run.sh: the build failed (above)" >&2; exit 1; }

[ $egd = 1 ] || [ -c /dev/cuse ] || modprobe cuse 2>/dev/null || true
if [ $egd = 0 ] && [ ! -c /dev/cuse ]; then
        echo "run.sh: this kernel ($(uname -r)) has no CUSE (/dev/cuse is missing)."
        echo "run.sh: booting Debian's kernel in QEMU with the daemon inside instead"
        echo "run.sh: (scripts/run.sh --egd runs it here, serving EGD only)."
        scripts/deps.sh --vm
        exec scripts/vm-demo.sh build
fi

# The group truerandom, and the user the daemon becomes once set up
# ([daemon] user): from the package's own sysusers.d file, as meson install
# and the .deb make them.
if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$PWD/systemd/truerandom.sysusers"
else
        getent group truerandom >/dev/null || groupadd --system truerandom
        getent passwd truerandomd >/dev/null ||
                useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin truerandomd
fi
conf=/etc/truerandomd.conf
[ -f "$conf" ] || conf=etc/truerandomd.conf
[ $egd = 0 ] || conf=etc/examples/egd-host.conf
if ! build/daemon/truerandomd --config "$conf"; then
        echo "run.sh: truerandomd did not start (its reason is above); check the configuration with:" \
                "build/daemon/truerandomd --check-config --config $conf" >&2
        exit 1
fi
pid=$(pgrep -n -x truerandomd)
if [ $egd = 1 ]; then
        sock=$(sed -n 's/^socket *= *//p' "$conf")
        ls -l "$sock"
        echo "64 bytes over EGD (command 0x02, 64):"
        python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(bytes([2, 64])); got = b""
while len(got) < 64:
    got += s.recv(64 - len(got))
print(got.hex(" "))' "$sock"
        echo "run.sh: truerandomd is serving EGD in the background (pid $pid); feed a guest with QEMU's" \
                "-object rng-egd,id=rng0,chardev=egd0 -chardev socket,id=egd0,path=$sock" \
                "-device virtio-rng-pci,rng=rng0; see it with build/ctl/truerandomctl status, stop it with: kill $pid"
        exit 0
fi
ls -l /dev/truerandom /dev/truerandom-random /dev/truerandom-urandom
echo "64 bytes from /dev/truerandom:"
head -c 64 /dev/truerandom | od -An -tx1
echo "run.sh: truerandomd is serving in the background (pid $pid; it logs through syslog(3), which" \
        "journald receives on bookworm: journalctl -t truerandomd); see it with" \
        "build/ctl/truerandomctl status, stop it with: kill $pid"
