#!/bin/sh
# Measures what page verification costs `iosim sim`: the same simulation
# with and without --no-verify, alternating, RUNS times each; prints the
# throughput (all bytes moved / wall time) of every run and the ratio of the
# medians. Not a test: run it by hand on an idle machine.
#
#   examples/sim-verify-bench.sh [DIR] [direct|buffered] [RUNS] [SECONDS] [DATA_MB]
#
# buffered mode serves most reads from the page cache, which makes the CPU
# cost of verification as visible as it can be.
set -eu
DIR=${1:-/tmp/iosim-verify-bench}
MODE=${2:-direct}
RUNS=${3:-3}
SECS=${4:-20}
MB=${5:-256}
IOSIM=${IOSIM:-target/release/iosim}
mkdir -p "$DIR"
if [ "$MODE" = buffered ]; then
  NB=FALSE; SG=FALSE; WT=FALSE
else
  NB=TRUE; SG=TRUE; WT=TRUE
fi
cat > "$DIR/bench.cfg.ini" <<INI
[CONFIG]
TestCycles=1
TestCycleDuration=$SECS
MaxMemoryMB=64
TargetIODuration=1000000
NoBuffering=$NB
WriteThrough=$WT
UseScatterGather=$SG
[RandomUser]
SleepAfter=0
[AuditUser]
AuditDelay=10
[ReadAheadUser]
RADelay=10
[File1]
FileName=$DIR/bench.mdx
InitialSize=$MB
[File2]
FileName=$DIR/bench.ldx
InitialSize=50
LogFile=TRUE
INI
rate() {
  "$IOSIM" sim -q -o json --config "$DIR/bench.cfg.ini" --log "$DIR/errors.jsonl" "$@" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); t=r["total"]["total"]; print("%.1f" % (t["bytes"]/r["duration_s"]/1048576), r["errors"]["count"])'
}
on=""; off=""
i=0
while [ $i -lt "$RUNS" ]; do
  a=$(rate); b=$(rate --no-verify)
  echo "run $((i+1)): verify on ${a%% *} MiB/s (errors ${a##* }), verify off ${b%% *} MiB/s"
  on="$on ${a%% *}"; off="$off ${b%% *}"
  i=$((i+1))
done
python3 - "$on" "$off" <<'PY'
import statistics, sys
on = [float(x) for x in sys.argv[1].split()]
off = [float(x) for x in sys.argv[2].split()]
m_on, m_off = statistics.median(on), statistics.median(off)
print(f"median: verify on {m_on:.1f} MiB/s, off {m_off:.1f} MiB/s: on/off = {100*m_on/m_off:.1f}%")
PY
