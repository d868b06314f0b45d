#!/usr/bin/env bash
# Consumer benchmarks, run where user_events is (harness/bench calls this in
# the guest). Each figure is printed beside perf's from the same run.
#   1. events/s from a producer's writes to text output (rings of 1024
#      pages per CPU for both): `usertrace record`
#      against `perf record` followed by `perf script`.
#   2. session start time with 1000 idle processes: `usertrace record`
#      against `perf record -a` (which synthesizes /proc for each).
set -euo pipefail
cd "$(dirname "$0")/.."
ut=target/release/usertrace
emit=target/release/examples/ut_emit
n=${BENCH_EVENTS:-200000}
scratch=$(mktemp -d /dev/shm/ut-bench.XXXXXX)
trap 'rm -rf "$scratch"; kill $(jobs -p) 2>/dev/null || true' EXIT
now() { date +%s.%N; }
waiter() { echo "while kill -0 $1 2>/dev/null; do sleep 0.02; done"; }

# ut_emit seq NAME N registers NAME, prints "ready PID", waits for a tracer
# and then emits n=0..N-1 as fast as it can.
start_producer() {
  "$emit" seq "$1" "$n" >"$scratch/$1.out" &
  until grep -q ready "$scratch/$1.out" 2>/dev/null; do sleep 0.01; done
  echo $!
}

pid=$(start_producer bench_ut)
t0=$(now)
"$ut" record -e bench_ut --buffer-size 1024 --format text -o "$scratch/ut.txt" -- sh -c "$(waiter "$pid")" 2>"$scratch/ut.err"
t1=$(now)
ut_lines=$(grep -c 'bench_ut:' "$scratch/ut.txt" || true)

pid=$(start_producer bench_perf)
t2=$(now)
perf record -q -a -m 1024 -e user_events:bench_perf -o "$scratch/perf.data" -- sh -c "$(waiter "$pid")" 2>/dev/null
perf script -i "$scratch/perf.data" >"$scratch/perf.txt" 2>/dev/null
t3=$(now)
perf_lines=$(grep -c 'bench_perf:' "$scratch/perf.txt" || true)

python3 - "$n" "$t0" "$t1" "$ut_lines" "$t2" "$t3" "$perf_lines" <<'PY'
import sys
n, t0, t1, ut, t2, t3, pf = int(sys.argv[1]), *map(float, sys.argv[2:4]), int(sys.argv[4]), *map(float, sys.argv[5:7]), int(sys.argv[7])
ut_rate, pf_rate = ut / (t1 - t0), pf / (t3 - t2)
print(f"record to text, {n} events emitted:")
print(f"  usertrace record            {ut:>7} events in {t1-t0:6.2f} s = {ut_rate:>9.0f} events/s")
print(f"  perf record + perf script   {pf:>7} events in {t3-t2:6.2f} s = {pf_rate:>9.0f} events/s")
print(f"  ratio usertrace/perf        {ut_rate/pf_rate:.2f}")
PY

# Session start with 1000 idle processes.
for _ in $(seq 1000); do sleep 600 & done
sleep 1
t0=$(now)
"$ut" record -e 'bench_none_*' -o /dev/null -- true 2>/dev/null
t1=$(now)
perf record -q -a -o "$scratch/idle.data" -- true 2>/dev/null
t2=$(now)
python3 - "$t0" "$t1" "$t2" <<'PY'
import sys
t0, t1, t2 = map(float, sys.argv[1:])
print("session start and stop with 1000 idle processes:")
print(f"  usertrace record -- true    {t1-t0:6.3f} s")
print(f"  perf record -a -- true      {t2-t1:6.3f} s")
print(f"  ratio usertrace/perf        {(t1-t0)/(t2-t1):.2f}")
PY
