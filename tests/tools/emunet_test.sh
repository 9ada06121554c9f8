#!/usr/bin/env bash
#
# Tests of tools/emunet: the namespace is set up as promised, COMMAND's exit
# status is propagated, the namespace (and anything left running in it) is
# removed after success, failure and interruption, and bad options are
# refused with one line and exit status 2.
#
# Usage: emunet_test.sh [PATH/TO/emunet]
# Exit status: 0 all passed, 1 a check failed, 77 skipped (not root, no
# iproute2, or network namespaces not permitted here).

# "A && pass || fail" is safe here (pass always succeeds); single-quoted
# scripts are expanded by the inner shell on purpose.
# shellcheck disable=SC2015,SC2016

set -u -o pipefail
export PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "$0")" && pwd)
emunet=${1:-$here/../../tools/emunet}
[[ -x $emunet ]] || { echo "emunet not found at $emunet" >&2; exit 1; }

skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root"
command -v ip >/dev/null && command -v tc >/dev/null || skip "needs ip and tc (iproute2)"
probe=emunet-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns delete "$probe"

failures=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { checks=$((checks + 1)); echo "ok   $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL $*"; }

# expect NAME WANTED_STATUS ACTUAL_STATUS
expect_status() {
    if [[ $3 -eq $2 ]]; then pass "$1: exit $3"; else fail "$1: exit $3, expected $2"; fi
}

# The namespace NAME must no longer exist.
expect_gone() {
    if [[ -e /run/netns/$2 ]] || ip netns list | grep -qw -- "$2"; then
        fail "$1: namespace $2 still exists"
        ip netns delete "$2" 2>/dev/null
    else
        pass "$1: namespace removed"
    fi
}

n=0
name() { n=$((n + 1)); echo "emunet-test-$$-$n"; }

# ---- success, and what COMMAND sees inside the namespace -----------------
ns=$(name)
"$emunet" --name "$ns" --rate 10gbit -- sh -c '
    ip -o link show dev lo
    tc qdisc show dev lo
    ip netns identify $$
    env' >"$tmp/inside" 2>&1
expect_status "success" 0 $?
expect_gone "success" "$ns"
grep -q "mtu 9000" "$tmp/inside" && pass "lo has MTU 9000" || fail "lo MTU: $(grep mtu "$tmp/inside")"
grep -q "state UNKNOWN\|,UP" "$tmp/inside" && pass "lo is up" || fail "lo is not up"
# Default bucket: 256 us of line time, 320000 B at 10 Gbit/s (tc rounds it).
grep -Eq "qdisc tbf .*rate 10Gbit burst 31[0-9]{4}b" "$tmp/inside" && pass "tbf 10Gbit on lo" ||
    fail "no tbf 10Gbit qdisc with a ~312 KB bucket: $(grep qdisc "$tmp/inside")"
grep -qx "$ns" "$tmp/inside" && pass "COMMAND runs in the namespace" || fail "COMMAND not in $ns"
for var in OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo \
    OMPI_MCA_oob_tcp_if_include=lo UCX_TLS=tcp,self UCX_NET_DEVICES=lo \
    MPIR_CVAR_NOLOCAL=1 NBCX_BENCH_NETWORK=tcp-10gbit; do
    grep -qx "$var" "$tmp/inside" && pass "environment has $var" || fail "environment lacks $var"
done

ns=$(name)
"$emunet" --name "$ns" --rate 250mbit --burst 512kb --mtu 4000 --latency 20ms -- sh -c '
    ip -o link show dev lo; tc qdisc show dev lo; echo "label=$NBCX_BENCH_NETWORK"' >"$tmp/custom" 2>&1
expect_status "custom settings" 0 $?
grep -q "mtu 4000" "$tmp/custom" && grep -q "rate 250Mbit" "$tmp/custom" &&
    grep -q "lat 20ms" "$tmp/custom" && grep -q "label=tcp-250mbit" "$tmp/custom" &&
    pass "custom rate, MTU, latency and label applied" || fail "custom settings: $(cat "$tmp/custom")"
expect_gone "custom settings" "$ns"

echo "through stdin" | "$emunet" --name "$(name)" -- cat >"$tmp/stdin"
grep -qx "through stdin" "$tmp/stdin" && pass "standard input reaches COMMAND" || fail "stdin lost"

# ---- the switch: one namespace and one shaped port per rank ---------------
ns=$(name)
"$emunet" --name "$ns" --switch 2 --rate 500mbit -- sh -c '
    PMI_RANK=0 "$1" --enter sh -c "ip netns identify \$\$; ip -o -4 addr show dev emu0; tc qdisc show dev emu0"
    OMPI_COMM_WORLD_RANK=1 "$1" --enter sh -c "ip netns identify \$\$; ip -o -4 addr show dev emu0"
    tc qdisc show
    ip netns identify $$
    PMIX_RANK=2 "$1" --enter true; echo "rank 2 status $?"
    "$1" --enter true; echo "no rank status $?"
    env' sh "$emunet" >"$tmp/switch" 2>&1
expect_status "switch" 0 $?
for gone in "$ns" "$ns-r0" "$ns-r1"; do expect_gone "switch" "$gone"; done
grep -qx "$ns-r0" "$tmp/switch" && grep -qx "$ns-r1" "$tmp/switch" && grep -qx "$ns" "$tmp/switch" &&
    pass "ranks enter their own namespaces, COMMAND runs in the bridge's" ||
    fail "switch namespaces: $(cat "$tmp/switch")"
grep -q "emu0 *inet 10.77.0.1/24" "$tmp/switch" && grep -q "emu0 *inet 10.77.0.2/24" "$tmp/switch" &&
    pass "rank r's port is 10.77.0.<r+1>" || fail "switch addresses: $(grep inet "$tmp/switch")"
[[ $(grep -c "qdisc tbf .*rate 500Mbit" "$tmp/switch") -eq 3 ]] &&
    grep -Eq "qdisc tbf .* dev emup0 .*rate 500Mbit" "$tmp/switch" &&
    grep -Eq "qdisc tbf .* dev emup1 .*rate 500Mbit" "$tmp/switch" &&
    pass "both ends of each port are shaped" || fail "switch qdiscs: $(grep qdisc "$tmp/switch")"
grep -q "rank 2 status 2" "$tmp/switch" && grep -q "ports (--switch 2)" "$tmp/switch" &&
    pass "--enter refuses a rank beyond the switch" || fail "rank 2: $(cat "$tmp/switch")"
grep -q "no rank status 2" "$tmp/switch" && grep -q "no rank in the environment" "$tmp/switch" &&
    pass "--enter refuses a process with no rank" || fail "no rank: $(cat "$tmp/switch")"
for var in OMPI_MCA_btl_tcp_if_include=emu0 OMPI_MCA_oob_tcp_if_include=emusw \
    UCX_NET_DEVICES=emu0 PMIX_MCA_ptl_tcp_remote_connections=1 \
    NBCX_BENCH_NETWORK=tcp-500mbit-switch EMUNET_RANKS=2 "EMUNET_NS=$ns"; do
    grep -qx "$var" "$tmp/switch" && pass "switch environment has $var" ||
        fail "switch environment lacks $var"
done
out=$(PMI_RANK=5 "$emunet" --enter echo as is 2>&1)
[[ $out == "as is" ]] && pass "--enter outside a switch runs the program as it is" ||
    fail "--enter outside a switch: $out"

# Full duplex: two ranks each send 4 MB to the other at once, at 80 Mbit/s
# (10 MB/s) per port and direction.  Through a switch both flows take
# ~0.4 s; on a shared medium they would take ~0.8 s.
if command -v python3 >/dev/null; then
    cat >"$tmp/flows.py" <<'PY'
import socket, sys, threading, time
me, peer, n = sys.argv[1], sys.argv[2], 4_000_000
lsn = socket.create_server((me, 5001))
out = None
deadline = time.monotonic() + 10
while out is None:
    try:
        out = socket.create_connection((peer, 5001))
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.01)
inc, _ = lsn.accept()
t0 = time.monotonic()
sender = threading.Thread(target=out.sendall, args=(b"x" * n,))
sender.start()
got = 0
while got < n:
    got += len(inc.recv(1 << 20))
print(f"{time.monotonic() - t0:.3f}")
sender.join()
PY
    ns=$(name)
    secs=$("$emunet" --name "$ns" --switch 2 --rate 80mbit -- sh -c '
        PMI_RANK=1 "$1" --enter python3 "$2" 10.77.0.2 10.77.0.1 >/dev/null &
        PMI_RANK=0 "$1" --enter python3 "$2" 10.77.0.1 10.77.0.2; wait' \
        sh "$emunet" "$tmp/flows.py" 2>&1)
    st=$?
    expect_gone "duplex" "$ns-r1"
    if [[ $st -eq 0 ]] && awk -v s="$secs" 'BEGIN { exit !(s >= 0.3 && s < 0.65) }'; then
        pass "4 MB each way at once at 80 Mbit/s took ${secs}s: full duplex, shaped"
    else
        fail "duplex: exit $st, ${secs}s (expected 0.3-0.65 s; a shared link takes ~0.8 s)"
    fi
fi

# ---- failures are propagated and cleaned up -------------------------------
ns=$(name)
"$emunet" --name "$ns" -- sh -c 'exit 7'
expect_status "failing command" 7 $?
expect_gone "failing command" "$ns"

ns=$(name)
"$emunet" --name "$ns" -- sh -c 'kill -KILL $$'
expect_status "command killed by SIGKILL" 137 $?
expect_gone "command killed by SIGKILL" "$ns"

ns=$(name)
"$emunet" --name "$ns" -- no-such-command-xyz 2>"$tmp/err"
expect_status "missing command" 127 $?
expect_gone "missing command" "$ns"

# Set-up failure (tc refuses): exit status 1, namespace removed.  A fake tc
# is bind-mounted over the real one in a private mount namespace.
if command -v unshare >/dev/null; then
    printf '#!/bin/sh\necho "fake tc: refused" >&2\nexit 1\n' >"$tmp/fake-tc"
    chmod +x "$tmp/fake-tc"
    ns=$(name)
    out=$(unshare --mount --propagation private sh -c \
        'mount --bind "$1" "$(command -v tc)" && exec "$2" --name "$3" -- true' \
        sh "$tmp/fake-tc" "$emunet" "$ns" 2>&1)
    st=$?
    [[ $st -eq 1 && $out == *"tc refused"* ]] && pass "tc failure reported: ${out##*$'\n'}" ||
        fail "tc failure: exit $st: $out"
    expect_gone "tc failure" "$ns"
fi

# A process left running in the namespace is stopped, so the namespace
# really disappears.
ns=$(name)
"$emunet" --name "$ns" -- sh -c 'sleep 1000 & exit 3'
expect_status "stray process" 3 $?
expect_gone "stray process" "$ns"
sleep 0.2
if pgrep -f "^sleep 1000$" >/dev/null; then
    fail "stray process still running"
    pkill -f "^sleep 1000$"
else
    pass "stray process stopped"
fi

# ---- interruption ---------------------------------------------------------
# Job control, so that the background emunet does not ignore SIGINT.
set -m
for sig in INT TERM HUP; do
    ns=$(name)
    "$emunet" --name "$ns" -- sleep 60 &
    pid=$!
    for ((i = 0; i < 50; i++)); do
        [[ -n $(ip netns pids "$ns" 2>/dev/null) ]] && break
        sleep 0.1
    done
    kill -s "$sig" "$pid"
    SECONDS=0
    wait "$pid"
    st=$?
    expect_status "SIG$sig" $((128 + $(kill -l "$sig"))) "$st"
    ((SECONDS < 10)) && pass "SIG$sig: stopped at once" || fail "SIG$sig: took ${SECONDS}s"
    expect_gone "SIG$sig" "$ns"
done
set +m

# A command that ignores SIGTERM is killed by a second signal.
ns=$(name)
set -m
"$emunet" --name "$ns" -- sh -c 'trap "" TERM; sleep 60 & wait; sleep 60' &
pid=$!
set +m
sleep 1
kill -TERM "$pid"
sleep 0.5
kill -TERM "$pid"
SECONDS=0
wait "$pid"
expect_status "second signal" 143 $?
((SECONDS < 10)) && pass "second signal: killed at once" || fail "second signal: took ${SECONDS}s"
expect_gone "second signal" "$ns"

# ---- refusals: one line on stderr, exit status 2, nothing created ---------
refuse() {
    local what=$1 out lines
    shift
    out=$("$emunet" "$@" 2>&1 >/dev/null)
    local st=$?
    lines=$(printf '%s\n' "$out" | wc -l)
    if [[ $st -eq 2 && $lines -eq 1 && $out == emunet:* ]]; then
        pass "refused $what: $out"
    else
        fail "$what: exit $st, $lines lines: $out"
    fi
}
refuse "bad rate" --rate fast -- true
refuse "rate without unit" --rate 1000 -- true
refuse "bad MTU" --mtu 9k -- true
refuse "tiny MTU" --mtu 500 -- true
refuse "burst below two packets" --burst 16kb -- true
refuse "burst below two packets at MTU 4000" --mtu 4000 --burst 6kb -- true
refuse "bad burst" --burst lots -- true
refuse "bad latency" --latency soon -- true
refuse "bad name" --name "a/b" -- true
refuse "missing value" --rate
refuse "unknown option" --speed 1gbit -- true
refuse "no command" --rate 1gbit
refuse "no command after --" --
refuse "bad switch" --switch 0x2 -- true
refuse "switch too large" --switch 251 -- true
refuse "--enter not first" --rate 1gbit --enter true
refuse "--enter with no program" --enter
ns=$(name)
ip netns add "$ns"
refuse "existing namespace" --name "$ns" -- true
[[ -e /run/netns/$ns ]] && pass "existing namespace left alone" || fail "existing namespace deleted"
ip netns delete "$ns"

if command -v setpriv >/dev/null; then
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$emunet" -- true 2>&1)
    st=$?
    [[ $st -eq 2 && $out == *"must run as root"* ]] && pass "refused non-root: $out" ||
        fail "non-root: exit $st: $out"
fi

# Missing tc: hide it behind a non-executable file in a private mount namespace.
if command -v unshare >/dev/null; then
    : >"$tmp/not-tc"
    out=$(unshare --mount --propagation private sh -c \
        'mount --bind "$1" "$(command -v tc)" && exec "$2" -- true' sh "$tmp/not-tc" "$emunet" 2>&1)
    st=$?
    [[ $st -eq 2 && $out == *"'tc' not found"*iproute2* ]] && pass "refused missing tc: $out" ||
        fail "missing tc: exit $st: $out"
fi

leftover=$(ip netns list | grep -c "emunet-test-$$-")
[[ $leftover -eq 0 ]] && pass "no namespace left behind" || fail "$leftover namespaces left"

echo "$checks checks, $failures failed"
[[ $failures -eq 0 ]]
