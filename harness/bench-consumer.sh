#!/usr/bin/env bash
# Consumer benchmarks, run where user_events is (harness/bench calls this in
# the guest). Each figure is printed beside its baseline from the same run.
#   text   events/s from a producer's writes to text output (rings of 1024
#          pages per CPU for both): `usertrace record` against `perf record`
#          followed by `perf script`.
#   start  session start time with 1000 idle processes: `usertrace record`
#          against `perf record -a` (which synthesizes /proc for each).
#   drain  time to drain a flood already in the rings: `usertrace record
#          --format json -o FILE` and `usertrace record -o FILE.data` (the
#          perf.data archive) against ring_drain_baseline (the same
#          per-CPU rings, counted, nothing decoded), the limit for any
#          consumer, and against `ring_drain_baseline --write FILE` (the
#          same, also writing each ring's bytes to a file with one writev:
#          the limit for any consumer that keeps the records), and beside
#          `perf record -m 1024`, which writes the same records to its
#          file. The recorder is stopped (SIGSTOP) while one producer per
#          CPU fills its ring, then continued and timed to its exit, once
#          the command it waits on has ended.
#   sweep  the highest paced emit rate with nothing lost, for
#          ring_drain_baseline, `usertrace record --format json`,
#          `usertrace record -o FILE.data` and `perf record`, all with the
#          same ring size per CPU.
#   archive  (not run by default: 6 to 7 minutes under TCG for its
#          1,000,000 events) one paced producer recorded at once by
#          `usertrace record -o FILE.data`, `usertrace record -o
#          FILE.jsonl` and `perf record`: bytes per event of each file;
#          then that FILE.data converted by `usertrace convert` to JSON
#          lines and to Perfetto, against `perf script` on the same file:
#          wall time and peak RSS. BENCH_ARCHIVE_EVENTS (1000000),
#          BENCH_ARCHIVE_RATE (10000 /s), BENCH_ARCHIVE_PAGES (1024).
#   flight (not run by default: about a minute under TCG) the recorder's
#          CPU time, idle for BENCH_FLIGHT_SECONDS (10) and then under one
#          producer paced at 10,000 events/s for as long: `usertrace record
#          --flight-recorder=30s` beside `perf record --overwrite` and
#          beside `usertrace record -o FILE.data`, one after another; then
#          the time from `usertrace dump` (--after 1ms) to the closed dump
#          of that full window.
#   sched  (not run by default: about a minute under TCG) the cost of
#          `record --sched`: `ut_emit sched` (a sleeping, a spinning, a
#          contended and a pipe-woken span) five times over, beside two
#          busy loops that nobody follows, recorded with and without
#          --sched into perf.data: the recorder's own CPU seconds,
#          the events recorded and the file's bytes. Then the producer's
#          costs under each: core/benches/producer.rs (enabled_emit,
#          enabled_span; BENCH_PRODUCER, else the newest built by
#          `cargo bench -p usertrace --features kernel-tests --bench producer --no-run`) run by
#          `usertrace record [--sched] -e 'bench_enabled*'`, so that with
#          --sched its own threads' switches are traced.
#   sched-demo  (not run by default: minutes under TCG, the JVM's start
#          above all) the same measure under the four-language demo: its
#          chain (written by `harness/demo --build-only` to
#          /tmp/usertrace-demo/chain; BENCH_DEMO_REQUESTS, 12) recorded as
#          the demo records it, `-e 'demo_*' -e 'jvm_*'`, into perf.data,
#          without and with --sched, one after the other.
#   call-graph  (not run by default: about a minute under TCG) the cost
#          of `record --call-graph fp`: `ut_emit seq` (BENCH_CALL_GRAPH_EVENTS,
#          20000, 50 us apart) recorded with and without it, into perf.data
#          (stacks kept as addresses) and into JSON lines (stacks named):
#          the recorder's CPU seconds, the events and the bytes. Then the
#          producer's costs under each, as for sched: with stacks, the
#          kernel walks the emitting thread's stack at every emit.
#   shm    the recorder over each transport in one run (user_events and
#          shared memory, forced with USERTRACE_TRANSPORT), the same ring
#          bytes: events/s drained from rings filled while the recorder
#          was stopped, and the highest paced rate from one thread with
#          nothing lost
#   profile  where `usertrace record --format json` (BENCH_PROFILE=stat:
#          `usertrace stat`) spends the drain of that flood: a flat
#          cpu-clock profile by perf (not run by default)
#   bash harness/bench-consumer.sh [PART...]     (all but profile and archive by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# BENCH_USERTRACE: another build to compare, e.g. one from the commit before.
ut=${BENCH_USERTRACE:-target/release/usertrace}
emit=target/release/examples/ut_emit
base=target/release/examples/ring_drain_baseline
paced=target/release/examples/paced_emit
n=${BENCH_EVENTS:-200000}
parts=" ${*:-text start drain sweep shm} "
want() { [[ $parts == *" $1 "* ]]; }
[ -x "$ut" ] || { echo "bench-consumer: $ut is missing: cargo build --release -p usertrace-cli --bin usertrace" >&2; exit 1; }
if want drain || want sweep || want profile || want archive; then
  for b in "$base" "$paced"; do
    [ -x "$b" ] || { echo "bench-consumer: $b is missing: cargo build --release -p usertrace-consumer --example ring_drain_baseline --example paced_emit" >&2; exit 1; }
  done
fi
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

if want text; then
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

fi

# Session start with 1000 idle processes.
if want start; then
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
# Their sleeps end with the script (trap), but they would crowd the parts
# after this one.
kill $(jobs -p) 2>/dev/null || true
wait 2>/dev/null || true
fi

# paced_emit NAME RATE COUNT on each CPU given, pinned there, each waiting
# for $scratch/go before it emits; their pids land in `producers`. Started
# from this shell (not a subshell) so that `wait` reaps them: the waiter's
# `kill -0` would see a zombie as alive.
producers=()
start_producers() {
  local name=$1 rate=$2 count=$3 cpu
  shift 3
  producers=()
  rm -f "$scratch/go"
  for cpu in "$@"; do
    taskset -c "$cpu" "$paced" "$name" "$rate" "$count" "$scratch/go" >"$scratch/$name.$cpu.out" &
    producers+=($!)
  done
  for cpu in "$@"; do until grep -q ready "$scratch/$name.$cpu.out" 2>/dev/null; do sleep 0.01; done; done
}
producers_enabled() {
  local name=$1 cpu
  shift
  for cpu in "$@"; do until grep -q enabled "$scratch/$name.$cpu.out" 2>/dev/null; do sleep 0.01; done; done
}
producers_done() {
  local p
  for p in "${producers[@]}"; do wait "$p" || true; done
}
# KIND NAME PAGES: starts a consumer in the background until the producers
# exit, its stderr in $scratch/KIND.err and its pid in `consumer`.
start_consumer() {
  local kind=$1 name=$2 pages=$3 cmd="" p
  for p in "${producers[@]}"; do cmd+="$(waiter "$p"); "; done
  case $kind in
    baseline) "$base" --buffer-size "$pages" "$name" -- sh -c "$cmd" 2>"$scratch/$kind.err" & ;;
    written) "$base" --buffer-size "$pages" --write "$scratch/base.bin" "$name" -- sh -c "$cmd" 2>"$scratch/$kind.err" & ;;
    record) "$ut" record -e "$name" --buffer-size "$pages" --format json -o "$scratch/ut.json" -- sh -c "$cmd" 2>"$scratch/$kind.err" & ;;
    archive) "$ut" record -e "$name" --buffer-size "$pages" -o "$scratch/ut.data" -- sh -c "$cmd" 2>"$scratch/$kind.err" & ;;
    stat) "$ut" stat -e "$name" --buffer-size "$pages" -- sh -c "$cmd" >/dev/null 2>"$scratch/$kind.err" & ;;
    perf) perf record -a -m "$pages" -e "user_events:$name" -o "$scratch/perf.data" -- sh -c "$cmd" 2>"$scratch/$kind.err" & ;;
  esac
  consumer=$!
}
# KIND: events it received, and the losses its kernel rings reported
# (perf's own count is not parsed: its shortfall says the same).
received() {
  case $1 in
    baseline | written) sed -n 's/.* samples \([0-9]*\) .*/\1/p' "$scratch/$1.err" ;;
    record | stat) sed -n "s/^usertrace $1: \([0-9]*\) events, .*/\1/p" "$scratch/$1.err" | tail -1 ;;
    archive) sed -n "s/^usertrace record: \([0-9]*\) events, .*/\1/p" "$scratch/$1.err" | tail -1 ;;
    # Counted in the file: the "(N samples)" perf record prints is not
    # always the count of samples written (it said 52,571 of 52,500).
    perf) perf report --stats -i "$scratch/perf.data" 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' ;;
  esac
}
reported_lost() {
  case $1 in
    baseline | written) sed -n 's/.* lost \([0-9]*\) .*/\1/p' "$scratch/$1.err" ;;
    record | stat) sed -n "s/^usertrace $1: [0-9]* events, \([0-9]*\) lost.*/\1/p" "$scratch/$1.err" | tail -1 ;;
    archive) sed -n "s/^usertrace record: [0-9]* events, \([0-9]*\) lost.*/\1/p" "$scratch/$1.err" | tail -1 ;;
    perf) echo - ;;
  esac
}
# NAME's samples in a perf.data file, as perf itself counts them (our
# archive also holds usertrace:process samples: not these).
perf_samples() {
  perf report --stats -i "$1" 2>/dev/null | awk -v want="user_events:$2 stats:" '$0 == want { on = 1; next } on && $1 == "SAMPLE" { n = $3; exit } END { print n + 0 }'
}
# KIND NAME: NAME's events in the file the consumer wrote, counted there
# (so that "nothing lost" means every event reached the file); - for those
# that write none.
in_file() {
  case $1 in
    record) grep -c "\"event\":\"$2\"" "$scratch/ut.json" || true ;;
    archive) perf_samples "$scratch/ut.data" "$2" ;;
    perf) received perf ;;
    *) echo - ;;
  esac
}
# The producers' achieved rates, summed ("emitted N in T s = R/s").
emitted_rate() {
  local name=$1 cpu
  shift
  for cpu in "$@"; do sed -n 's/.*= \([0-9]*\)\/s.*/\1/p' "$scratch/$name.$cpu.out"; done | awk '{s += $1} END {print s + 0}'
}

cpus=$(seq 0 $(($(nproc) - 1)))
# NAME KIND PAGES COUNT: one producer per CPU writes COUNT events into its
# ring while consumer KIND is stopped (SIGSTOP); the consumer is then
# continued and timed to its end, from drain_t0 to drain_t1.
fill_then_drain() {
  local name=$1 kind=$2 pages=$3 count=$4
  # shellcheck disable=SC2086
  start_producers "$name" 0 "$count" $cpus
  start_consumer "$kind" "$name" "$pages"
  # shellcheck disable=SC2086
  producers_enabled "$name" $cpus
  # The bit flips at the first CPU's open; the others follow within
  # microseconds. Then the consumer stops and the rings fill. perf enables
  # its events only once it has read /proc, seconds later under TCG.
  if [ "$kind" = perf ]; then sleep 10; else sleep 1; fi
  kill -STOP "$consumer"
  touch "$scratch/go"
  producers_done
  command_ended
  drain_t0=$(now)
  kill -CONT "$consumer"
  wait "$consumer" || true
  drain_t1=$(now)
}
# Waits until the stopped consumer's command (the waiter) has exited: a
# zombie its consumer has not reaped yet. Continued before that, a consumer
# would also wait out the waiter's poll (a fork of sleep every 20 ms, far
# longer under TCG), which is not the drain's time.
command_ended() {
  until [ "$(ps -o stat= --ppid "$consumer" | grep -vc '^Z')" = 0 ]; do sleep 0.01; done
}
if want drain; then
  # 64-byte records (a u64 field): 50,000 fill 3.2 MB of each 4 MiB ring.
  # BENCH_PAGES=4096 BENCH_FLOOD=200000 drains four times as much, for a
  # rate less swayed by each recorder's start and end.
  flood=${BENCH_FLOOD:-50000}
  pages=${BENCH_PAGES:-1024}
  # Five trials: one in three or four is slower by half for every kind
  # (the host's own noise under TCG), which a median of three can land on.
  trials=${BENCH_TRIALS:-5}
  : >"$scratch/drain.txt"
  for trial in $(seq "$trials"); do
    for kind in baseline written stat record archive perf; do
      fill_then_drain bench_flood "$kind" "$pages" "$flood"
      # shellcheck disable=SC2086
      filed=$(in_file "$kind" bench_flood)
      # shellcheck disable=SC2086
      echo "$kind $drain_t0 $drain_t1 $(received "$kind") $(reported_lost "$kind") $(emitted_rate bench_flood $cpus) ${filed:-0}" >>"$scratch/drain.txt"
      rm -f "$scratch/ut.json" "$scratch/ut.data" "$scratch/perf.data" "$scratch/base.bin"
    done
  done
  python3 - "$flood" "$(nproc)" "$scratch/drain.txt" "$pages" <<'PY'
import statistics, sys
flood, ncpu, path, pages = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
runs = {}
for line in open(path):
    kind, t0, t1, got, lost, emit_rate, in_file = line.split()
    runs.setdefault(kind, []).append((float(t1) - float(t0), int(got or 0), lost, int(emit_rate), in_file))
print(f"drain {flood} events per CPU x {ncpu} CPUs already in rings of {pages} pages (SIGSTOP while filled), {len(runs['baseline'])} trials:")
rate = {}
for kind, label in (
    ("baseline", "ring_drain_baseline (count only)"),
    ("written", "ring_drain_baseline --write FILE"),
    ("stat", "usertrace stat (session, no output)"),
    ("record", "usertrace record --format json"),
    ("archive", "usertrace record -o FILE.data"),
    ("perf", f"perf record -m {pages} (to its file)"),
):
    rs = runs[kind]
    times = ", ".join(f"{t:.3f}" for t, *_ in rs)
    t = statistics.median(r[0] for r in rs)
    got = rs[0][1]
    # Each trial's own count over its own time, the median of those.
    rate[kind] = statistics.median(r[1] / r[0] for r in rs)
    received = ",".join(str(r[1]) for r in rs)
    in_file = ",".join(r[4] for r in rs)
    whole = all(r[1] == flood * ncpu for r in rs) and all(r[4] in ("-", str(flood * ncpu)) for r in rs)
    print(f"  {label:34} {received} received, lost {','.join(r[2] for r in rs)}, in file {in_file}{'' if whole else ' <- not all of ' + str(flood * ncpu)}; drained in {times} s; median {rate[kind]:>9.0f} events/s")
print(f"  ratio record/baseline (events/s)   {rate['record'] / rate['baseline']:.3f}")
print(f"  ratio archive/baseline (events/s)  {rate['archive'] / rate['baseline']:.3f}")
print(f"  ratio archive/written (events/s)   {rate['archive'] / rate['written']:.3f}")
print(f"  ratio written/baseline (events/s)  {rate['written'] / rate['baseline']:.3f}")
print(f"  ratio archive/record (events/s)    {rate['archive'] / rate['record']:.3f}")
print(f"  ratio perf/baseline (events/s)     {rate['perf'] / rate['baseline']:.3f}")
print(f"  ratio archive/perf (events/s)      {rate['archive'] / rate['perf']:.3f}")
print(f"  ratio stat/baseline (events/s)     {rate['stat'] / rate['baseline']:.3f}")
print(f"  producers' flat-out emit rate while filling: {', '.join(str(r[3]) for k in runs for r in runs[k])} events/s (all CPUs)")
PY
fi

if want profile; then
  # BENCH_PROFILE=stat profiles the session alone (no decoding, no output).
  kind=${BENCH_PROFILE:-record}
  flood=${BENCH_FLOOD:-50000}
  # shellcheck disable=SC2086
  start_producers bench_flood 0 "$flood" $cpus
  start_consumer "$kind" bench_flood 1024
  # shellcheck disable=SC2086
  producers_enabled bench_flood $cpus
  sleep 1
  kill -STOP "$consumer"
  touch "$scratch/go"
  producers_done
  # System-wide rather than attached to the recorder's pid: attaching to
  # its pid (-p) found no process or wrote no data in some runs; the
  # report names each sample's command.
  perf record -q -a -e cpu-clock -F 4000 -o "$scratch/prof.data" 2>"$scratch/prof.err" &
  profiler=$!
  # perf enables its events only after synthesizing /proc, seconds under TCG.
  sleep 8
  kill -CONT "$consumer"
  wait "$consumer" || true
  kill -INT "$profiler" 2>/dev/null || true
  wait "$profiler" || true
  echo "where usertrace $kind spends the drain of $flood events per CPU (cpu-clock samples):"
  perf report -i "$scratch/prof.data" --stdio --no-children --sort comm,dso,symbol 2>&1 | grep -v '^#' | grep -v '^$' | head -45 || true
  cat "$scratch/prof.err"
  rm -f "$scratch/ut.json" "$scratch/prof.data"
fi

if want sweep; then
  rates=${BENCH_RATES:-5000 7500 10000 15000 20000 30000 40000 60000 80000 120000}
  declare -A lost_at=()
  secs=${BENCH_SWEEP_SECONDS:-3}
  pages=${BENCH_SWEEP_PAGES:-128}
  # One producer, on the last CPU; the consumer goes where the scheduler puts it.
  cpu=$(($(nproc) - 1))
  : >"$scratch/sweep.txt"
  for rate in $rates; do
    count=$((rate * secs))
    for kind in baseline record archive perf; do
      # Higher rates only lose more: a consumer that lost is done.
      [ -z "${lost_at[$kind]:-}" ] || continue
      start_producers bench_sweep "$rate" "$count" "$cpu"
      start_consumer "$kind" bench_sweep "$pages"
      producers_enabled bench_sweep "$cpu"
      # perf enables its events only after reading /proc: start no event
      # before every consumer is surely live.
      sleep 2
      touch "$scratch/go"
      producers_done
      wait "$consumer" || true
      got=$(received "$kind")
      filed=$(in_file "$kind" bench_sweep)
      echo "$rate $kind $count ${got:-0} $(reported_lost "$kind") $(emitted_rate bench_sweep "$cpu") ${filed:-0}" >>"$scratch/sweep.txt"
      [ "${got:-0}" = "$count" ] && [[ ${filed:-0} == - || ${filed:-0} == "$count" ]] || lost_at[$kind]=$rate
      rm -f "$scratch/ut.json" "$scratch/ut.data" "$scratch/perf.data"
    done
  done
  python3 - "$secs" "$pages" "$scratch/sweep.txt" <<'PY'
import sys
secs, pages, path = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"paced emit for {secs} s from one thread on the last CPU, rings of {pages} pages per CPU for all:")
print(f"  {'rate asked':>10} {'emitted at':>10}  {'consumer':9} {'received':>9} {'in file':>9} {'of':>9} {'lost (kernel)':>13}")
print("  (record: --format json -o FILE.jsonl; archive: -o FILE.data)")
best = {}
for line in open(path):
    rate, kind, count, got, lost, achieved, filed = line.split()
    ok = got == count and filed in ("-", count)
    print(f"  {rate:>10} {achieved:>10}  {kind:9} {got:>9} {filed:>9} {count:>9} {lost:>13}{'' if ok else '  <- lost'}")
    if ok:
        best[kind] = max(best.get(kind, 0), int(achieved))
for kind in ("baseline", "record", "archive", "perf"):
    print(f"  highest emitted rate with nothing lost, {kind:8}: {best.get(kind, 0)} events/s")
PY
fi

if want shm; then
  # The same `usertrace record --format json` over either transport, with
  # the same ring bytes: perf rings of $pages pages per CPU for user_events,
  # a ring of as many KiB per producing thread for shared memory.
  pages=${BENCH_SHM_PAGES:-128}
  export USERTRACE_SHM_RING_KIB=$((pages * 4))
  secs=${BENCH_SWEEP_SECONDS:-3}
  flood=${BENCH_SHM_FLOOD:-50000}
  # BENCH_SHM_TRANSPORTS=shm measures shared memory alone, on a kernel
  # without user_events.
  transports=${BENCH_SHM_TRANSPORTS:-user_events shm}
  : >"$scratch/shm.txt"
  # Drain: one producer per CPU fills its ring while the recorder is
  # stopped (SIGSTOP), as in the drain part, then the recorder is continued
  # and timed to its end. Rings of 1024 pages (4 MiB) per CPU, or 4 MiB per
  # thread: 50,000 events fit either (64 bytes a perf sample, 32 a
  # shared-memory record).
  for trial in 1 2 3; do
    for transport in $transports; do
      USERTRACE_TRANSPORT=$transport USERTRACE_SHM_RING_KIB=4096 fill_then_drain bench_shm_flood record 1024 "$flood"
      # shellcheck disable=SC2086
      echo "flood $transport $drain_t0 $drain_t1 $(received record) $(reported_lost record) $(emitted_rate bench_shm_flood $cpus)" >>"$scratch/shm.txt"
      rm -f "$scratch/ut.json"
    done
  done
  # Paced, from one thread: the highest rate with nothing lost.
  rates=${BENCH_SHM_RATES:-10000 20000 40000 80000 160000 320000}
  declare -A shm_lost_at=()
  cpu=$(($(nproc) - 1))
  for rate in $rates; do
    count=$((rate * secs))
    for transport in $transports; do
      [ -z "${shm_lost_at[$transport]:-}" ] || continue
      USERTRACE_TRANSPORT=$transport start_producers bench_shm_sweep "$rate" "$count" "$cpu"
      start_consumer record bench_shm_sweep "$pages"
      producers_enabled bench_shm_sweep "$cpu"
      sleep 1
      touch "$scratch/go"
      producers_done
      wait "$consumer" || true
      got=$(received record)
      filed=$(in_file record bench_shm_sweep)
      echo "sweep $transport $rate $count ${got:-0} $(reported_lost record) $(emitted_rate bench_shm_sweep "$cpu") ${filed:-0}" >>"$scratch/shm.txt"
      [ "${got:-0}" = "$count" ] && [ "${filed:-0}" = "$count" ] || shm_lost_at[$transport]=$rate
      rm -f "$scratch/ut.json"
    done
  done
  python3 - "$flood" "$(nproc)" "$pages" "$secs" "$scratch/shm.txt" <<'PY'
import statistics, sys
flood, ncpu, pages, secs, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
floods, sweeps = {}, []
for line in open(path):
    part, transport, *rest = line.split()
    if part == "flood":
        t0, t1, got, lost, emitted = rest
        floods.setdefault(transport, []).append((float(t1) - float(t0), int(got or 0), lost or "?", int(emitted)))
    else:
        sweeps.append((transport, *rest))
print("usertrace record --format json over each transport, the same ring bytes:")
print(f"  drain of {flood} events from each of {ncpu} producers, one per CPU, already in rings of 4 MiB (SIGSTOP while filled), 3 trials:")
rate = {}
for transport, runs in floods.items():
    rate[transport] = statistics.median(got / t for t, got, _, _ in runs)
    print(f"    {transport:12} received {','.join(str(r[1]) for r in runs)}, lost {','.join(r[2] for r in runs)}, in "
          f"{', '.join(f'{r[0]:.3f}' for r in runs)} s: median {rate[transport]:>9.0f} events/s drained")
if "user_events" in rate and "shm" in rate:
    print(f"    ratio shm/user_events (events/s drained)  {rate['shm'] / rate['user_events']:.2f}")
print(f"  paced for {secs} s from one thread, rings of {pages} pages per CPU (user_events) or {pages * 4} KiB per thread (shared memory):")
best = {}
for transport, asked, count, got, lost, achieved, filed in sweeps:
    ok = got == count and filed == count
    print(f"    {asked:>7}/s asked, {achieved:>7}/s emitted  {transport:12} {got:>8} received, {filed:>8} in file, of {count:>8}, lost {lost}{'' if ok else '  <- lost'}")
    if ok:
        best[transport] = max(best.get(transport, 0), int(achieved))
for transport in ("user_events", "shm"):
    print(f"    highest emitted rate with nothing lost, {transport:12}: {best.get(transport, 0)} events/s")
PY
fi

if want archive; then
  an=${BENCH_ARCHIVE_EVENTS:-1000000}
  arate=${BENCH_ARCHIVE_RATE:-10000}
  apages=${BENCH_ARCHIVE_PAGES:-1024}
  cpu=$(($(nproc) - 1))
  # One producer, three consumers of its events at once: each file holds
  # the same events.
  start_producers bench_archive "$arate" "$an" "$cpu"
  cmd="$(waiter "${producers[0]}")"
  "$ut" record -e bench_archive --buffer-size "$apages" -o "$scratch/a.data" -- sh -c "$cmd" 2>"$scratch/a-data.err" &
  c_data=$!
  "$ut" record -e bench_archive --buffer-size "$apages" -o "$scratch/a.jsonl" -- sh -c "$cmd" 2>"$scratch/a-jsonl.err" &
  c_jsonl=$!
  perf record -a -m "$apages" -e user_events:bench_archive -o "$scratch/a-perf.data" -- sh -c "$cmd" 2>"$scratch/a-perf.err" &
  c_perf=$!
  producers_enabled bench_archive "$cpu"
  # perf enables its event only after reading /proc (see sweep).
  sleep 4
  touch "$scratch/go"
  producers_done
  wait "$c_data" "$c_jsonl" "$c_perf" || true
  size() { stat -c %s "$1" 2>/dev/null || echo 0; }
  summary() { sed -n 's/^usertrace record: \([0-9]*\) events, \([0-9]*\) lost.*/\1 \2/p' "$1" | tail -1; }
  {
    echo "emitted $an $(emitted_rate bench_archive "$cpu")"
    echo "data $(size "$scratch/a.data") $(perf_samples "$scratch/a.data" bench_archive) $(summary "$scratch/a-data.err")"
    echo "jsonl $(size "$scratch/a.jsonl") $(grep -c '"event":"bench_archive"' "$scratch/a.jsonl" || true) $(summary "$scratch/a-jsonl.err")"
    echo "perf $(size "$scratch/a-perf.data") $(perf_samples "$scratch/a-perf.data" bench_archive) - -"
  } >"$scratch/archive.txt"
  # Room in the guest's /dev/shm for the conversions' outputs.
  rm -f "$scratch/a.jsonl" "$scratch/a-perf.data"
  # LABEL OUT PATTERN COMMAND...: wall time and peak RSS of COMMAND, and
  # OUT's size and lines matching PATTERN (OUT -: COMMAND's stdout).
  timed() {
    local label=$1 out=$2 pattern=$3 t0 t1 rss pid h
    shift 3
    t0=$(now)
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -v "$@" 2>"$scratch/time.err" >"$scratch/stdout" || true
      rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$scratch/time.err")
    else
      # No GNU time: the child's VmHWM, read until it exits.
      "$@" >"$scratch/stdout" 2>"$scratch/time.err" &
      pid=$!
      rss=0
      while kill -0 "$pid" 2>/dev/null; do
        h=$(sed -n 's/^VmHWM: *\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null || true)
        [ -z "$h" ] || [ "$h" -le "$rss" ] || rss=$h
        sleep 0.05
      done
      wait "$pid" || true
    fi
    t1=$(now)
    [ "$out" != - ] || out=$scratch/stdout
    echo "$label $t0 $t1 ${rss:-0} $(size "$out") $(grep -c -- "$pattern" "$out" || true)" >>"$scratch/convert.txt"
    rm -f "$out" "$scratch/stdout"
  }
  : >"$scratch/convert.txt"
  timed jsonl "$scratch/c.jsonl" '"event":"bench_archive"' "$ut" convert "$scratch/a.data" "$scratch/c.jsonl"
  timed pftrace "$scratch/c.pftrace" '^' "$ut" convert "$scratch/a.data" "$scratch/c.pftrace"
  timed script - 'user_events:bench_archive:' perf script -i "$scratch/a.data"
  python3 - "$apages" "$scratch/archive.txt" "$scratch/convert.txt" <<'PY'
import sys
pages, arch, conv = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
for line in open(arch):
    kind, *rest = line.split()
    rows[kind] = rest
emitted, achieved = int(rows["emitted"][0]), rows["emitted"][1]
print(f"archive: {emitted} events (u64 n) from one thread paced at {achieved} /s, recorded at once by three consumers, rings of {pages} pages:")
print(f"  {'file':34} {'bytes':>12} {'bytes/event':>11} {'in file':>9} {'received':>9} {'lost':>5}")
per = {}
for kind, label in (("data", "usertrace record -o FILE.data"), ("jsonl", "usertrace record -o FILE.jsonl"), ("perf", "perf record -o FILE (perf.data)")):
    size, filed, got, lost = (rows[kind] + ["-"] * 4)[:4]
    per[kind] = int(size) / emitted
    mark = "" if filed == str(emitted) else f"  <- not all of {emitted}"
    print(f"  {label:34} {int(size):>12} {per[kind]:>11.1f} {filed:>9} {got:>9} {lost:>5}{mark}")
print(f"  .data / perf's file {per['data'] / per['perf']:.2f}; .jsonl / .data {per['jsonl'] / per['data']:.2f}")
print(f"converting that FILE.data ({emitted} events):")
print(f"  {'command':42} {'wall s':>8} {'peak RSS':>10} {'out bytes':>12} {'events out':>10}")
t = {}
for line in open(conv):
    kind, t0, t1, rss, size, count = line.split()
    t[kind] = float(t1) - float(t0)
    label = {"jsonl": "usertrace convert FILE.data OUT.jsonl", "pftrace": "usertrace convert FILE.data OUT.pftrace", "script": "perf script -i FILE.data > OUT"}[kind]
    count = "-" if kind == "pftrace" else count
    print(f"  {label:42} {t[kind]:>8.2f} {int(rss) / 1024:>6.1f} MiB {int(size):>12} {count:>10}")
for kind in ("jsonl", "pftrace"):
    if kind in t and "script" in t:
        print(f"  ratio {kind}/perf script (wall)  {t[kind] / t['script']:.2f}")
PY
  rm -f "$scratch/a.data"
fi

# TITLE RECORD-ARGS... -- COMMAND...: COMMAND recorded to perf.data by
# `usertrace record RECORD-ARGS`, without and then with --sched: the
# recorder's own CPU seconds (its threads', from /proc/PID/stat, read
# every 50 ms until it exits: its rusage would add the command's, which
# it waits for), its events (its closing line, not a progress line) and
# the file's bytes.
# FLAGS EXT TITLE RECORD_ARGS... -- COMMAND...: COMMAND recorded by
# `usertrace record RECORD_ARGS -o FILE.EXT`, then again with FLAGS (one
# word, split on spaces): the recorder's own CPU seconds, the events and
# the file's bytes of each, and their ratios.
flag_cost() {
  python3 - "$ut" "$scratch" "$@" <<'PY'
import os, re, subprocess, sys, threading, time
ut, scratch, with_flags, ext, title, *rest = sys.argv[1:]
split = rest.index("--")
record_args, command = rest[:split], rest[split + 1:]
hz = os.sysconf("SC_CLK_TCK")
rows = {}
for kind, flags in (("plain", []), ("with", with_flags.split())):
    out = f"{scratch}/s-{kind}.{ext}"
    p = subprocess.Popen([ut, "record", *flags, *record_args, "-o", out, "--", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = []
    reader = threading.Thread(target=lambda: stderr.append(p.stderr.read()))
    reader.start()
    cpu = 0.0
    while p.poll() is None:
        try:
            # utime and stime: fields 14 and 15, counted after the ")".
            fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / hz
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.05)
    reader.join()
    err = stderr[0]
    if p.returncode != 0:
        sys.exit(f"bench-consumer: {title}, {kind}: {err}")
    events = int(re.findall(r"^usertrace record: (\d+) events, \d+ lost, [\d.]+s$", err, re.M)[-1])
    rows[kind] = (cpu, events, os.path.getsize(out))
    os.remove(out)
width = len(f"usertrace record {with_flags}") + 2
print(f"{with_flags}: {title}, recorded to FILE.{ext}:")
print(f"  {'':{width}} {'CPU s':>7} {'events':>8} {'bytes':>10}")
for kind, label in (("plain", "usertrace record"), ("with", f"usertrace record {with_flags}")):
    cpu, events, size = rows[kind]
    print(f"  {label:{width}} {cpu:>7.2f} {events:>8} {size:>10}")
(pc, pe, pb), (sc, se, sb) = rows["plain"], rows["with"]
print(f"  {'ratio, with / plain':{width}} {sc / max(pc, 1e-9):>7.2f} {se / max(pe, 1):>8.1f} {sb / max(pb, 1):>10.1f}")
PY
}

# FLAGS: the producer's costs (core/benches/producer.rs: enabled_emit,
# enabled_span) under `usertrace record -e 'bench_enabled*'`, without and
# with FLAGS (one word, split on spaces), one after the other.
producer_cost() {
  producer=${BENCH_PRODUCER:-$(ls -t target/release/deps/producer-* 2>/dev/null | grep -v '\.d$' | head -1)}
  [ -x "$producer" ] || { echo "bench-consumer: no producer bench: cargo bench -p usertrace --features kernel-tests --bench producer --no-run" >&2; exit 1; }
  python3 - "$ut" "$producer" "$1" <<'PY'
import re, subprocess, sys
ut, producer, with_flags = sys.argv[1:]
rows = {}
for kind, flags in (("plain", []), ("with", with_flags.split())):
    p = subprocess.run([ut, "record", *flags, "-e", "bench_enabled*", "-o", "/dev/null", "--", producer, "enabled_emit", "enabled_span"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-consumer: {kind}: {p.stderr}")
    rows[kind] = {m[1].strip(): float(m[2]) for m in re.finditer(r"^(\S.*?)\s{2,}([\d.]+) ns", p.stdout, re.M)}
print(f"{with_flags}: the producer's costs (core/benches/producer.rs) under `usertrace record -e 'bench_enabled*'`, without and with {with_flags}:")
for name in rows["plain"]:
    if name in rows["with"]:
        a, b = rows["plain"][name], rows["with"][name]
        print(f"  {name:44} {a:>10.1f} ns  {b:>10.1f} ns  ratio {b / a:.2f}")
PY
}

if want sched; then
  # Two busy loops nobody follows: the machine's own load, which the
  # kernel filter keeps out of the rings.
  for _ in 1 2; do (while :; do :; done) & done
  loops=$(jobs -p | tail -2)
  flag_cost --sched data "\`ut_emit sched\` five times beside two unfollowed busy loops" -e 'bench_sched_*' -- \
    sh -c "for i in 1 2 3 4 5; do $emit sched bench_sched >/dev/null; done"
  kill $loops 2>/dev/null || true
  producer_cost --sched
fi

if want call-graph; then
  # Stacks are walked by the kernel at each emit and named by the recorder
  # for JSON lines (the archive keeps the addresses and the mappings).
  count=${BENCH_CALL_GRAPH_EVENTS:-20000}
  for ext in data jsonl; do
    flag_cost "--call-graph fp" "$ext" "\`ut_emit seq\`, $count events 50 us apart" -e bench_cg -- "$emit" seq bench_cg "$count" 50
  done
  producer_cost "--call-graph fp"
fi

if want sched-demo; then
  chain=/tmp/usertrace-demo/chain
  [ -s "$chain" ] || { echo "bench-consumer: $chain is missing: harness/demo --build-only" >&2; exit 1; }
  # The front, the request count, then the other stages, as harness/demo
  # runs them.
  mapfile -t stages <"$chain"
  requests=${BENCH_DEMO_REQUESTS:-12}
  flag_cost --sched data "the four-language demo's chain, $requests requests" -e 'demo_*' -e 'jvm_*' -- \
    "${stages[0]}" "$requests" "${stages[@]:1}"
fi

if want flight; then
  secs=${BENCH_FLIGHT_SECONDS:-10}
  # Utime + stime of PID in seconds, from /proc (clock ticks).
  cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
  : >"$scratch/flight.txt"
  for kind in flight perf archive; do
    # One paced producer, held until go; the consumer is started on its
    # event and left idle for $secs, then the producer runs for $secs.
    start_producers bench_flight 10000 $((10000 * secs)) 0
    case $kind in
      flight) "$ut" record -q -e bench_flight --flight-recorder=30s --after 1ms -o "$scratch/f.data" 2>"$scratch/$kind.err" & ;;
      perf) perf record -q -a --overwrite -e user_events:bench_flight -o "$scratch/f-perf.data" 2>"$scratch/$kind.err" & ;;
      archive) "$ut" record -q -e bench_flight -o "$scratch/f-all.data" 2>"$scratch/$kind.err" & ;;
    esac
    consumer=$!
    producers_enabled bench_flight 0
    sleep "$secs"
    idle=$(cpu_of "$consumer")
    touch "$scratch/go"
    producers_done
    busy=$(cpu_of "$consumer")
    dump=-
    if [ "$kind" = flight ]; then
      t0=$(now)
      "$ut" dump >/dev/null
      t1=$(now)
      dump=$(echo "$t1 - $t0" | bc -l)
    fi
    kill -INT "$consumer"
    wait "$consumer" || true
    echo "$kind $idle $busy $dump" >>"$scratch/flight.txt"
    rm -f "$scratch"/f*.data "$scratch"/*.data.*
  done
  python3 - "$secs" "$scratch/flight.txt" <<'PY'
import sys
secs, rows = int(sys.argv[1]), {}
for line in open(sys.argv[2]):
    kind, idle, busy, dump = line.split()
    rows[kind] = (float(idle), float(busy) - float(idle), dump)
print(f"flight: recorder CPU seconds, idle {secs} s, then {secs} s of 10,000 events/s from one producer:")
print(f"  {'consumer':44} {'idle':>7} {'busy':>7} {'busy / -o FILE.data':>19}")
for kind, label in (("flight", "usertrace record --flight-recorder=30s"), ("perf", "perf record --overwrite"), ("archive", "usertrace record -o FILE.data")):
    idle, busy, _ = rows[kind]
    print(f"  {label:44} {idle:>7.2f} {busy:>7.2f} {busy / max(rows['archive'][1], 1e-9):>19.2f}")
print("  (perf --overwrite reads its rings only when it stops: its busy time is spent at exit, not counted here)")
print(f"  usertrace dump to the closed dump of that window (--after 1ms): {float(rows['flight'][2]):.2f} s")
PY
fi
