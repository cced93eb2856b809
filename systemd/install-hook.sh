#!/bin/sh
# install-hook.sh - what `meson install` into the running system (no
# DESTDIR) must do after copying the files, so that `systemctl start
# truerandomd` works at once: what a package's maintainer scripts do.
#   - the group truerandom and the user truerandomd (sysusers.d);
#   - /dev/cuse and /dev/hwrng for that user's group (tmpfiles.d);
#   - udev reads the new rule and applies it to the nodes already there;
#   - systemd reads the new units.
# Each step only where its tool is there (a container, a chroot without
# systemd as PID 1); each says what it did. Never enables or starts
# anything: that stays the administrator's decision (README, Install).
# Packages (DESTDIR set) skip this: their maintainer scripts do it.
#   install-hook.sh SYSUSERSDIR TMPFILESDIR
set -eu
sysusers=$1/truerandom.conf
tmpfiles=$2/truerandom.conf

if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$sysusers" && echo "install-hook: users and groups from $sysusers"
else
        echo "install-hook: no systemd-sysusers: create the group truerandom and the system user truerandomd yourself" >&2
fi
if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create "$tmpfiles" && echo "install-hook: /dev/cuse and /dev/hwrng from $tmpfiles"
fi
if [ -d /run/udev ] && command -v udevadm >/dev/null 2>&1; then
        udevadm control --reload-rules || true
        udevadm trigger --action=change --subsystem-match=misc --sysname-match=cuse --sysname-match=hwrng || true
        udevadm trigger --action=change --subsystem-match=cuse || true
        echo "install-hook: udev rules reloaded and applied"
fi
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        systemctl daemon-reload && echo "install-hook: systemd units reloaded"
fi
