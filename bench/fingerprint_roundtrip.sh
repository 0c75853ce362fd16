#!/bin/bash
# The fingerprint's round trip on a loop-backed ext4 (docs/fingerprint.md,
# "A measured round trip"): a workload is captured at the block layer and
# fingerprinted, the fingerprint's profile (--out) is run and captured the
# same way, and the two fingerprints are compared metric by metric.
#
#   sudo bench/fingerprint_roundtrip.sh                     # postgresql-oltp, 10 s each
#   sudo bench/fingerprint_roundtrip.sh etcd-wal 20         # another profile, 20 s each
#
# Needs root (a loop device, mkfs.ext4, mount, iosim capture). Uses $IOSIM,
# else iosim on PATH. Leaves nothing behind: the loop device is detached and
# its directory under /var/tmp removed on exit.
set -eu
IOSIM=${IOSIM:-iosim}
PROFILE=${1:-postgresql-oltp}
SECS=${2:-10}
D=$(mktemp -d /var/tmp/fingerprint-roundtrip.XXXXXX)
LOOP=""
cleanup() {
    umount "$D/mnt" 2>/dev/null || true
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$D"
}
trap cleanup EXIT
truncate -s 1G "$D/back.img"
LOOP=$(losetup -f --show "$D/back.img")
mkfs.ext4 -q "$LOOP"
mkdir "$D/mnt"
mount "$LOOP" "$D/mnt"

# Runs a profile on a new file while the device is captured.
captured_run() { # PROFILE FILE CAPTURE
    "$IOSIM" create "$2" --size 256M --quiet > /dev/null
    "$IOSIM" capture "$LOOP" --duration $((SECS + 4))s -o "$3" > "$3.capture.txt" 2>&1 &
    local cap=$!
    sleep 2
    "$IOSIM" run --profile "$1" "$2" --size 256M --duration "${SECS}s" --no-save --quiet > /dev/null
    wait "$cap"
}

captured_run "$PROFILE" "$D/mnt/a.dat" "$D/a"
"$IOSIM" fingerprint "$D/a"
"$IOSIM" fingerprint "$D/a" --json > "$D/a.json"
"$IOSIM" fingerprint "$D/a" --out "$D/from-trace.toml" > /dev/null
echo "== the profile written from the fingerprint"
cat "$D/from-trace.toml"
captured_run "$D/from-trace.toml" "$D/mnt/b.dat" "$D/b"
echo "== A: $PROFILE captured; B: the fingerprint's profile captured"
"$IOSIM" fingerprint --compare "$D/a.json" "$D/b"
