#!/bin/bash
# iosim crash against a simulated power loss: tests/fuse/rig.py keeps written
# data in a volatile cache and loses what it did not persist when killed.
# Writes for DUR seconds through the rig in MODE (honest, lying, reorder, off),
# "pulls the plug" (SIGKILL to the rig), remounts what survived and verifies.
# honest and off must PASS; lying and reorder show lost acknowledged writes /
# ordering violations, and the rig's own report lists the pages it dropped.
# Needs fuse3 and python3-fusepy (apt-get install -y fuse3 python3-fusepy).
# Usage: examples/crash-rig.sh [MODE] (IOSIM=path/to/iosim, DUR=5). Run from
# the repository's top; everything is removed at the end.
set -e
MODE=${1:-lying}
IOSIM=${IOSIM:-iosim}
RIG="/usr/bin/python3 $(dirname "$0")/../tests/fuse/rig.py"
W=$(mktemp -d)
cleanup() { fusermount3 -u -z $W/mnt 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true; rm -rf $W; }
trap cleanup EXIT
mkdir $W/back $W/mnt
$IOSIM create $W/back/f --size 16M --quiet
mounted() { for _ in $(seq 50); do mountpoint -q $W/mnt && return; sleep 0.1; done; echo "the rig did not mount" >&2; exit 1; }
$RIG mount $W/back $W/mnt --mode $MODE --journal $W/journal & RIGPID=$!
mounted
$IOSIM crash write $W/mnt/f --size 16M --acks $W/acks.log --quiet & WRITER=$!
sleep ${DUR:-5}
kill -9 $RIGPID                               # the power cut
wait $WRITER 2>/dev/null || true              # the writer's next I/O fails
fusermount3 -u -z $W/mnt
$RIG mount $W/back $W/mnt --mode off --journal $W/journal2 & AFTER=$!   # after the reboot
mounted
rc=0
$IOSIM crash verify $W/mnt/f --acks $W/acks.log --no-save || rc=$?
echo "--- what the rig says it lost at the power cut (its own journal):"
$RIG report $W/back --journal $W/journal | python3 -c '
import json, sys
r = json.load(sys.stdin)
lost = sorted(x["offset"] for x in r["lost"])
print(r["writes"], "writes,", len(r["dropped"]), "dropped,", len(lost), "pages lost; offsets:", lost[:15])'
exit $rc
