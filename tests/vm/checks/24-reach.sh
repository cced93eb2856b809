# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 24. past the device path: the reading examples and the OpenSSL -----
# provider against the real /dev/truerandom (issue 20). The C example
# (libtruerandom) and the shell one (dd iflag=fullblock) each print exactly
# the bytes asked, and the daemon served at least as many; `openssl rand`
# with docs/examples/openssl-truerandom.cnf, and a C program's own
# RAND_bytes() (tests/vm/randbytes.c), seed from the device (the daemon's
# served count grows by each seed), and both fail, naming the device, once
# the daemon is stopped: never a silent seed from the kernel.

# served: bytes the store has handed out, from a fresh status
served() {
        stv store.bytes_served
}

# hexlen N CMD...: CMD's output is 2N hex digits (and a newline)
hexlen() {
        n=$1
        shift
        out=$("$@" 2>&1)
        note "$*: ${#out} hex digits"
        case "$out" in *[!0-9a-f]*) return 1 ;; esac
        [ ${#out} -eq $((2 * n)) ]
}

check_reach() {
        ok=0
        [ -x /usr/bin/read-truerandom ] && [ -x /usr/bin/openssl ] || { note "examples or openssl missing"; return 1; }
        start_daemon guest.conf /tmp/reach.log || { note "no $TRNG"; return 1; }
        wait_value trng_serving true 600 || { note "not serving after ${WAITED} s"; return 1; }
        s0=$(served)
        hexlen 100 read-truerandom 100 || ok=1
        hexlen 32 sh /usr/share/truerandom/read-truerandom.sh 32 || ok=1
        s1=$(served)
        note "served $s0 -> $s1"
        [ $((s1 - s0)) -ge 132 ] || ok=1

        out=$(OPENSSL_CONF=/etc/openssl-truerandom.cnf openssl list -random-generators 2>&1)
        case "$out" in *"TRUERANDOM @ truerandom"*) ;; *) note "provider not listed: $out"; ok=1 ;; esac
        out=$(OPENSSL_CONF=/etc/openssl-truerandom.cnf openssl rand -hex 32 2>&1)
        rc=$?
        s2=$(served)
        note "openssl rand: exit $rc, ${#out} characters; served $s1 -> $s2"
        [ $rc = 0 ] && [ ${#out} -eq 64 ] && [ $((s2 - s1)) -ge 48 ] || ok=1

        # A program's own RAND_bytes(), one seed per process.
        hexlen 32 env OPENSSL_CONF=/etc/openssl-truerandom.cnf randbytes 32 || ok=1
        s3=$(served)
        note "served $s2 -> $s3"
        [ $((s3 - s2)) -ge 48 ] || ok=1
        # A figure, not a verdict: processes that each seed once.
        t_seed=$(up)
        i=0
        while [ $i -lt 20 ]; do
                OPENSSL_CONF=/etc/openssl-truerandom.cnf randbytes 32 >/dev/null || ok=1
                i=$((i + 1))
        done
        note "20 processes seeded through the provider in $(secs "$t_seed") s"

        stop_daemon
        out=$(OPENSSL_CONF=/etc/openssl-truerandom.cnf openssl rand -hex 32 2>&1)
        rc=$?
        note "daemon stopped: openssl rand exit $rc: $(echo "$out" | grep -o 'truerandom: [^(]*' | head -n 1)"
        [ $rc != 0 ] && echo "$out" | grep -q '/dev/truerandom' || ok=1
        out=$(OPENSSL_CONF=/etc/openssl-truerandom.cnf randbytes 32 2>&1)
        rc=$?
        note "randbytes exit $rc"
        [ $rc = 1 ] && echo "$out" | grep -q '/dev/truerandom' || ok=1
        return $ok
}

run_check 24-reach check_reach
