#!/usr/bin/env bash
# usertrace's shared-memory transport against LTTng-UST, natively, each
# with its recorder live (shm_vs_lttng.c), as BENCHMARKS.md reports it.
# As root, where liblttng-ust-dev and lttng-tools are installed
# (harness/setup installs them on Debian):
#   ffi-c/bench/run-shm-vs-lttng.sh build   compiles the program (-O2) and the
#                                           release CLI and libusertrace
#   ffi-c/bench/run-shm-vs-lttng.sh         runs it, printing the tables
# Same bytes of buffer on either side: usertrace's ring of R KiB per thread
# (USERTRACE_SHM_RING_KIB), LTTng's 4 sub-buffers of R/4 KiB per CPU.
#
#   cost:     a 4-byte event in bursts of 1,000 every 5 ms through each, in
#             turns within one process, at R = 256, 1024, 65536; ROUNDS runs
#             of the three sizes in turn, medians over the runs.
#   lossless: at R = 256 (the default), the highest paced rate (a burst
#             every millisecond) and the largest burst (back to back, per
#             thread) each keeps with nothing lost, from 1 and 4 threads,
#             each tracer alone with its recorder, doubling until a loss.
# Environment: ROUNDS (3), SECONDS_PACED (2), ONLY (cost|lossless).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
target=${CARGO_TARGET_DIR:-$root/target}
build=${USERTRACE_C_BUILD:-/tmp/usertrace-shm-vs-lttng}
prefix=$build/prefix
bin=$build/shm_vs_lttng
usertrace=$target/release/usertrace
dir=$build/run

if [ "${1:-}" = build ]; then
  mkdir -p "$build"
  (cd "$root" && cargo build --release -q -p usertrace-cli --bins) || exit 1
  "$root/ffi-c/install.sh" "$prefix" >/dev/null || exit 1
  exec cc -O2 -g -Wall -Wextra -I"$prefix/include" -I"$here" "$here/shm_vs_lttng.c" "$here/bench_tp.c" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lusertrace -llttng-ust -ldl -lpthread -o "$bin"
fi

[ -x "$bin" ] && [ -x "$usertrace" ] || { echo "run-shm-vs-lttng: build first: $0 build" >&2; exit 1; }
command -v lttng >/dev/null || { echo "run-shm-vs-lttng: no lttng here (harness/setup installs lttng-tools)" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
export LTTNG_HOME=$build/lttng-home
mkdir -p "$LTTNG_HOME" /var/run/lttng 2>/dev/null
# One already running (ours from before) is used as it is.
lttng-sessiond --daemonize >"$dir/sessiond.log" 2>&1 || pgrep -x lttng-sessiond >/dev/null ||
  { echo "run-shm-vs-lttng: lttng-sessiond does not start:"; cat "$dir/sessiond.log"; exit 1; }
echo "kernel $(uname -r), $(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "usertrace $(git -C "$root" rev-parse --short HEAD), LTTng $(lttng --version | head -1)"

# lttng_session NAME KIB: a session with one channel of 4 sub-buffers of
# KIB/4 KiB, the benchmark's event enabled, started.
lttng_session() {
  lttng create "$1" --output="$dir/$1" >/dev/null &&
    lttng enable-channel -u -s "$1" c --subbuf-size=$(($2 * 1024 / 4)) --num-subbuf=4 >/dev/null &&
    lttng enable-event -u -s "$1" -c c usertrace_bench:ev >/dev/null &&
    lttng start "$1" >/dev/null
}
# lttng_discarded NAME: stops and destroys it; prints its discarded events.
lttng_discarded() {
  lttng stop "$1" >/dev/null
  lttng list "$1" | awk '/Discarded events:/ {n += $3} END {print n + 0}'
  lttng destroy "$1" >/dev/null
}
# ut_lost ERRFILE: the events usertrace record said its rings lost.
ut_lost() { awk '/ lost [0-9]+ events/ {for (i = 1; i < NF; i++) if ($i == "lost") n += $(i + 1)} END {print n + 0}' "$1"; }
# field NAME FILE
field() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

rounds=${ROUNDS:-3}
if [ "${ONLY:-cost}" = cost ]; then
  echo
  echo "cost: 4-byte event, bursts of 1,000 every 5 ms, 200 bursts each per run, both recorders live; $rounds runs per size, in turn"
  for run in $(seq "$rounds"); do
    for kib in 256 1024 65536; do
      s=ut47cost${run}k$kib
      lttng_session "$s" "$kib" || { echo "lttng session failed"; exit 1; }
      USERTRACE_SHM_RING_KIB=$kib "$usertrace" record -e shmlt_ev4 -o "$dir/$s.data" -- "$bin" cost 200 >"$dir/$s.out" 2>"$dir/$s.err"
      echo "$kib $(field usertrace_median_ns "$dir/$s.out") $(field lttng_median_ns "$dir/$s.out") $(ut_lost "$dir/$s.err") $(lttng_discarded "$s") $(field emitted "$dir/$s.out")" >>"$dir/cost"
      rm -rf "${dir:?}/$s" "$dir/$s.data"
    done
  done
  echo "| ring (KiB) | usertrace, median ns/event | LTTng-UST, median ns/event | ratio | usertrace lost | LTTng discarded | emitted each, per run |"
  echo "| ---: | ---: | ---: | ---: | --- | --- | ---: |"
  for kib in 256 1024 65536; do
    ut=$(awk -v k=$kib '$1 == k {print $2}' "$dir/cost" | median)
    lt=$(awk -v k=$kib '$1 == k {print $3}' "$dir/cost" | median)
    runs=$(awk -v k=$kib '$1 == k {printf "%s%s/%s", sep, $2, $3; sep = ", "}' "$dir/cost")
    lost=$(awk -v k=$kib '$1 == k {printf "%s%s", sep, $4; sep = ", "}' "$dir/cost")
    disc=$(awk -v k=$kib '$1 == k {printf "%s%s", sep, $5; sep = ", "}' "$dir/cost")
    echo "| $kib | $ut | $lt | $(awk -v a="$ut" -v b="$lt" 'BEGIN {printf "%.2f", a / b}') | $lost | $disc | $(awk -v k=$kib '$1 == k {print $6; exit}' "$dir/cost") |"
    echo "(runs, usertrace/LTTng ns: $runs)"
  done
fi

# lossless_one TRACER MODE VALUE THREADS: 0 if nothing was lost.
lossless_one() {
  local tracer=$1 mode=$2 value=$3 threads=$4 s=ut47ll$$ lost args
  if [ "$mode" = paced ]; then args=(paced "$tracer" "$value" "${SECONDS_PACED:-2}" "$threads"); else args=(burst "$tracer" "$value" "$threads"); fi
  if [ "$tracer" = lttng ]; then
    lttng_session "$s" 256 || return 2
    "$bin" "${args[@]}" >"$dir/ll.out" 2>"$dir/ll.err"
    lost=$(lttng_discarded "$s")
    rm -rf "${dir:?}/$s"
  else
    "$usertrace" record -e shmlt_ev4 -o "$dir/ll.data" -- "$bin" "${args[@]}" >"$dir/ll.out" 2>"$dir/ll.err"
    lost=$(ut_lost "$dir/ll.err")
    rm -f "$dir/ll.data"
  fi
  reached=$(field rate_reached "$dir/ll.out")
  echo "  $tracer $mode $value x$threads: lost $lost${reached:+, rate reached $reached/s}" >&2
  [ "$lost" = 0 ]
}
# highest TRACER MODE START THREADS: doubles from START until a loss (or
# until the producer no longer reaches the paced rate); prints the last
# value kept whole, and the first lost, as "kept lost".
highest() {
  local v=$3 kept=0
  while [ "$v" -le 64000000 ]; do
    lossless_one "$1" "$2" "$v" "$4" || { echo "$kept $v"; return; }
    kept=$v
    if [ "$2" = paced ]; then
      local reached
      reached=$(field rate_reached "$dir/ll.out")
      awk -v r="$reached" -v v="$v" 'BEGIN {exit !(r < 0.9 * v)}' && { echo "$kept (producer-bound: $reached/s reached)"; return; }
    fi
    v=$((v * 2))
  done
  echo "$kept"
}
if [ "${ONLY:-lossless}" = lossless ]; then
  echo
  echo "lossless, 256 KiB (usertrace: a ring per thread; LTTng: 4 x 64 KiB per CPU), each tracer alone with its recorder:"
  echo "| threads | tracer | highest paced rate kept whole (events/s), first lost | largest burst per thread kept whole (events), first lost |"
  echo "| ---: | --- | --- | --- |"
  for threads in 1 4; do
    for tracer in usertrace lttng; do
      echo "| $threads | $tracer | $(highest $tracer paced 100000 $threads) | $(highest $tracer burst 4096 $threads) |"
    done
  done
fi
