#!/bin/bash
# Seed 003's experiment: data and log on the same drive vs on separate drives.
# Two identical drives: loop devices over files in RAM (tmpfs), each with ext4.
# Needs root (losetup, mkfs.ext4, mount). Usage: examples/same-vs-separate-drives.sh
# (IOSIM=path/to/iosim, DUR=15s per run). Everything is removed at the end.
set -e
IOSIM=${IOSIM:-iosim}
W=$(mktemp -d /dev/shm/sep.XXXX)
truncate -s 3G $W/a.img $W/b.img
A=$(losetup -f --show $W/a.img); B=$(losetup -f --show $W/b.img)
cleanup() { umount $W/ma $W/mb 2>/dev/null || true; losetup -d $A $B 2>/dev/null || true; rm -rf $W; }
trap cleanup EXIT
mkfs.ext4 -q $A; mkfs.ext4 -q $B
mkdir -p $W/ma $W/mb; mount $A $W/ma; mount $B $W/mb
echo "drives: $A and $B (ext4 on loop over tmpfs)"
for i in 1 2 3; do
  for mode in same separate; do
    if [ $mode = same ]; then args="$W/ma/data.dat $W/ma/log.dat"; else args="$W/ma/data.dat $W/mb/log.dat"; fi
    $IOSIM run --profile oltp-with-log $args --size 1G --duration ${DUR:-15s} --output json --quiet --label "sepdrives-$mode" > $W/$mode-$i.json
    python3 - $W/$mode-$i.json $mode <<'PY'
import json,sys
r=json.load(open(sys.argv[1]))
out=[sys.argv[2]]
for w in r["results"]:
    t=w["result"]["total"]["total"]; l=t["latency_us"]
    out.append("%s: %.0f IOPS mean %.0f us p99 %.0f us" % (w.get("name", w.get("workload")), t["iops"], l["mean"], l["percentiles"]["p99"]))
print(" | ".join(out))
PY
  done
done
