#!/bin/sh
# read-truerandom.sh [BYTES [DEVICE]] - N bytes (default 32) of
# /dev/truerandom, in hex.
#
# The device returns short reads (what it has, 1 to n bytes): a plain
# `dd bs=32 count=1` may return fewer bytes than asked, and exit 0.
# iflag=fullblock makes dd read until the block is full; with bs=N
# count=1 it asks no more than N bytes, so nothing is wasted.
# GNU `head -c N` is also right: it loops over short reads and asks
# no more than it still needs. What wastes blocks is anything that
# reads ahead: `od -N32 /dev/truerandom` (stdio), `cat | head`,
# `python3 -c 'open(...).read(32)'`.
set -eu
n=${1:-32}
device=${2:-/dev/truerandom}
dd if="$device" bs="$n" count=1 iflag=fullblock status=none | od -An -v -tx1 | tr -d ' \n'
echo
