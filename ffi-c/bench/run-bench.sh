#!/usr/bin/env bash
# The per-event cost table of BENCHMARKS.md, every row in one run of one
# process (bench.c). Run where user_events and uprobes exist, as root:
#   harness/in-guest 'bash ffi-c/bench/run-bench.sh'
# It builds nothing: `ffi-c/bench/run-bench.sh build` (on the host) compiles
# bench.c -O2 against the prefix installed by ffi-c/run-tests.sh host.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${USERTRACE_C_BUILD:-/tmp/usertrace-c-tests}
prefix=$build/prefix
bin=$build/bin/bench
dir=/tmp/usertrace-bench
t=/sys/kernel/tracing

if [ "${1:-}" = build ]; then
  mkdir -p "$build/bin"
  exec cc -O2 -g -Wall -Wextra -I"$prefix/include" -I"$here" "$here/bench.c" "$here/bench_tp.c" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lusertrace -llttng-ust -ldl -o "$bin"
fi

[ -x "$bin" ] || { echo "run-bench: build first: $0 build" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"

# LTTng: a root session daemon needs /var/run/lttng and /dev/shm writable.
lttng=1
{ mkdir -p /var/run/lttng 2>/dev/null || { mount -t tmpfs tmpfs /run && mkdir -p /run/lttng; }; } || lttng=0
[ -d /dev/shm ] || mkdir -p /dev/shm
mountpoint -q /dev/shm || mount -t tmpfs tmpfs /dev/shm || true
export LTTNG_HOME=$dir/lttng-home
mkdir -p "$LTTNG_HOME"
if [ "$lttng" = 1 ] && ! lttng-sessiond --daemonize >"$dir/sessiond.log" 2>&1; then
  lttng=0
fi
[ "$lttng" = 1 ] || { echo "run-bench: LTTng cannot run here:"; cat "$dir/sessiond.log" 2>/dev/null; }

# USDT: a uprobe (with the semaphore as ref_ctr) on every probe site.
python3 "$here/uprobe_lines.py" "$bin" usdt_bench >"$dir/uprobes"
while read -r line; do echo "$line" >>"$t/uprobe_events" || echo "run-bench: uprobe_events refused: $line"; done <"$dir/uprobes"

echo 0 >"$t/tracing_on"
echo 8192 >"$t/buffer_size_kb"
echo >"$t/trace"
echo 1 >"$t/tracing_on"
"$bin" "$dir" "$lttng" >"$dir/table.md" &
pid=$!
for _ in $(seq 1200); do [ -e "$dir/disabled-done" ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
echo 1 >"$t/events/usdt_bench/enable"
echo 1 >"$t/events/user_events/bench_raw/enable"
echo 1 >"$t/events/user_events/bench_ev4/enable"
echo 1 >"$t/events/user_events/bench_span4/enable"
echo 1 >"$t/events/user_events/bench_span_end/enable"
if [ "$lttng" = 1 ]; then
  lttng create bench --output="$dir/lttng-trace" >/dev/null &&
    lttng enable-event -u usertrace_bench:ev >/dev/null && lttng start >/dev/null || echo "run-bench: lttng session failed"
fi
wait $pid
rc=$?
echo 0 >"$t/events/usdt_bench/enable"
echo 0 >"$t/events/user_events/bench_raw/enable"
echo 0 >"$t/events/user_events/bench_ev4/enable"
echo 0 >"$t/events/user_events/bench_span4/enable"
echo 0 >"$t/events/user_events/bench_span_end/enable"
if [ "$lttng" = 1 ]; then
  lttng stop >/dev/null
  echo "lttng recorded: $(lttng view 2>/dev/null | grep -c usertrace_bench:ev) events"
  lttng destroy >/dev/null
fi
# (ftrace's `trace` prints user events as "Unknown type N", so count entries.)
entries=$(cat "$t"/per_cpu/cpu*/stats | awk '/^entries:/ {n += $2} /^overrun:/ {o += $2} END {print n " (overrun " o ")"}')
echo "ftrace recorded: $(grep -c 'probe4_' "$t/trace") USDT uprobe hits; $entries entries in all (rows b, c, d, d': 80000 expected, f: 40000 more)"
while read -r name _; do echo "-:${name#p:}" >>"$t/uprobe_events"; done <"$dir/uprobes"
echo "per-event ns, 20000 events per row:"
cat "$dir/table.md"
exit $rc
