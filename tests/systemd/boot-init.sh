#!/bin/sh
# boot-init.sh - /init of the systemd suite's boot initramfs (busybox): load
# the disk's modules, mount /dev/vda and hand over to systemd. The stock
# Debian initrd would do the same at ten times the size, which TCG pays for.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# crc32c-intel needs SSE4.2 and may refuse a CPU model: harmless.
for ko in $(cat /etc/modules.order); do
        insmod "$ko" 2>/dev/null
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
        sleep 0.05
        i=$((i + 1))
done
mkdir -p /newroot
if ! mount -t ext4 -o rw /dev/vda /newroot; then
        echo "boot-init: cannot mount /dev/vda"
        poweroff -f
fi
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
