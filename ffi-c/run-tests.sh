#!/usr/bin/env bash
# Tests of the C SDK: real C programs (under ASan where it helps).
#   ffi-c/run-tests.sh host    builds and installs libusertrace into $build/prefix,
#                              builds every test program, runs the tests that need no
#                              user_events (header drift, C/C++ compile, header included
#                              twice, exported symbols, install + pkg-config examples,
#                              static link, DESTDIR + CMake package, API errors,
#                              the span macros' fast path and control flow)
#   ffi-c/run-tests.sh guest   in a kernel with user_events (harness/in-guest), runs
#                              the programs built by `host`: exact values through
#                              `usertrace record` and `perf script`, threads, dlclose,
#                              spans from C and C++.
#                              Without user_events every test fails; none is skipped.
# Prints `PASS name` / `FAIL name` (with the log) per test, then `N passed, M failed`.
# $build defaults to /tmp/usertrace-c-tests (USERTRACE_C_BUILD); the guest writes only there.
set -uo pipefail
mode=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
build=${USERTRACE_C_BUILD:-/tmp/usertrace-c-tests}
prefix=$build/prefix
cli=$target/debug/usertrace
tracefs=/sys/kernel/tracing
passed=0
failed=0
mkdir -p "$build/logs"

run_test() { # NAME COMMAND...
  local name=$1 log=$build/logs/$1.log
  shift
  if ("$@") >"$log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    sed 's/^/    /' "$log" | tail -40
    failed=$((failed + 1))
  fi
}

CFLAGS_TEST=(-std=gnu99 -Wall -Wextra -Werror -g -I"$prefix/include" -I"$here/tests/c")
LIBS_TEST=(-L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lusertrace)
CXXFLAGS_TEST=(-std=c++11 "${CFLAGS_TEST[@]:1}")
# The span macros' host tests replace the library's span calls with
# tests/c/fake_spans.h, which logs them.
WRAP_SPANS=(-Wl,--wrap=usertrace_event_begin_span,--wrap=usertrace_provider_end_span)

# ---------------------------------------------------------------- host
build_all() {
  (cd "$root" && cargo build --quiet -p usertrace-cli) || return 1
  "$here/install.sh" "$prefix" || return 1
  local b=$build/bin
  mkdir -p "$b"
  cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/api_errors.c" "${LIBS_TEST[@]}" -o "$b/api_errors" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/emit_all.c" "${LIBS_TEST[@]}" -o "$b/emit_all" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/threads.c" "${LIBS_TEST[@]}" -lpthread -o "$b/threads" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/release_while_emitting.c" "${LIBS_TEST[@]}" -lpthread -o "$b/release_while_emitting" &&
    cc "${CFLAGS_TEST[@]}" -fPIC -shared "$here/tests/c/plugin.c" "${LIBS_TEST[@]}" -o "$b/libcplug.so" &&
    cc "${CFLAGS_TEST[@]}" -fPIC -shared "$here/tests/c/plugin_raw.c" -o "$b/libcraw.so" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/dlclose_main.c" "${LIBS_TEST[@]}" -ldl -o "$b/dlclose_main" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/span_errors.c" "${LIBS_TEST[@]}" -o "$b/span_errors" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/span_macros.c" "${LIBS_TEST[@]}" "${WRAP_SPANS[@]}" -o "$b/span_macros" &&
    c++ "${CXXFLAGS_TEST[@]}" -fsanitize=address "$here/tests/cpp/span_guard.cpp" "${LIBS_TEST[@]}" "${WRAP_SPANS[@]}" -o "$b/span_guard" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/spans.c" "${LIBS_TEST[@]}" -lpthread -o "$b/spans" &&
    c++ "${CXXFLAGS_TEST[@]}" "$here/tests/cpp/spans.cpp" "${LIBS_TEST[@]}" -o "$b/spans_cpp"
}

header_is_current() {
  "$here/gen-header.sh" "$build/usertrace.h" && diff -u "$here/include/usertrace.h" "$build/usertrace.h" || {
    echo "include/usertrace.h differs from what cbindgen generates: run ffi-c/gen-header.sh"
    return 1
  }
}

header_compiles() { # COMPILER STD
  local src=$build/header_use.$3
  cat >"$src" <<'SRC'
#include <usertrace.h>
USERTRACE_EVENT(e, USERTRACE_FIELD_U32(a), USERTRACE_FIELD_STR(b), USERTRACE_FIELD_CHARS(c, 4));
USERTRACE_EVENT0(z);
USERTRACE_SPAN(s, USERTRACE_FIELD_U64(a), USERTRACE_FIELD_STR(b));
USERTRACE_SPAN0(s0);
USERTRACE_PROVIDER(hdr, &e, &z, &s, &s0);
static void scoped(void) {
  USERTRACE_SPAN_SCOPED(hdr, s, usertrace_u64(1), usertrace_str("b"));
  USERTRACE_SPAN_SCOPED0(hdr, s0);
}
int main(void) {
  if (usertrace_provider_register(&hdr) != USERTRACE_OK) return 0;
  USERTRACE_EMIT(e, usertrace_u32(1), usertrace_str("b"), usertrace_bytes("cc", 2));
  USERTRACE_EMIT0(z);
  uint64_t id = USERTRACE_SPAN_BEGIN(s, usertrace_u64(1), usertrace_str("b"));
  USERTRACE_SPAN_END(hdr, USERTRACE_SPAN_BEGIN0(s0));
  USERTRACE_SPAN_END(hdr, id);
  scoped();
  return USERTRACE_ENABLED(e) ? 1 : 0;
}
SRC
  $1 -std="$2" -Wall -Wextra -Werror -pedantic -I"$here/include" -c "$src" -o "$build/header_use.o"
}

# A program whose headers each include usertrace.h: the guard covers the
# whole header, cbindgen's trailer (the inline value constructors) too.
header_included_twice() { # COMPILER STD LANG
  $1 -x "$3" -std="$2" -Wall -Wextra -Werror -pedantic -I"$here/include" "$here/tests/c/include_twice.c" \
    -x none "${LIBS_TEST[@]}" -o "$build/bin/include_twice_$3" && "$build/bin/include_twice_$3"
}

# USERTRACE_ENABLED compiled at -O2, with and without -fPIC (as in a shared
# library): the function is one load of the event's word, a test and a
# return. No call, and no second load (no pointer to follow).
enabled_is_one_load() { # PIC-FLAG...
  local src=$build/enabled_check.c obj=$build/enabled_check.o asm
  cat >"$src" <<'SRC'
#include <usertrace.h>
USERTRACE_EVENT(e, USERTRACE_FIELD_U32(a));
USERTRACE_PROVIDER(one, &e);
int enabled_check(void) { return USERTRACE_ENABLED(e); }
SRC
  cc -std=c99 -O2 "$@" -I"$here/include" -c "$src" -o "$obj" || return 1
  asm=$(objdump -d --no-show-raw-insn --disassemble=enabled_check "$obj" | sed -n '/<enabled_check>:/,$p' | tail -n +2)
  echo "$asm"
  local loads calls
  loads=$(echo "$asm" | grep -c '(%')
  calls=$(echo "$asm" | grep -c -E '\b(call|jmp) ')
  [ "$loads" = 1 ] || { echo "expected 1 memory load, found $loads"; return 1; }
  [ "$calls" = 0 ] || { echo "expected no call, found $calls"; return 1; }
}

# A span while nobody listens, compiled at -O2 as C and as C++ (where the
# scoped span is a usertrace::span), with and without -fPIC: up to the
# branch on the begin event's word and on the path that falls through it
# (nobody listening) to the return, one load and no call. The end costs
# nothing there: the compiler knows the id is 0.
span_disabled_is_one_load() { # LANG PIC-FLAG...
  local lang=$1 src=$build/span_check.$1 obj=$build/span_check.o fn asm
  shift
  cat >"$src" <<'SRC'
#include <usertrace.h>
USERTRACE_SPAN(s, USERTRACE_FIELD_U32(a));
USERTRACE_PROVIDER(one, &s);
#ifdef __cplusplus
extern "C" {
#endif
void span_begin_end(void) {
  uint64_t id = USERTRACE_SPAN_BEGIN(s, usertrace_u32(7));
  USERTRACE_SPAN_END(one, id);
}
void span_scoped(void) { USERTRACE_SPAN_SCOPED(one, s, usertrace_u32(7)); }
#ifdef __cplusplus
}
#endif
SRC
  if [ "$lang" = c ]; then cc -std=c99 -O2 "$@" -I"$here/include" -c "$src" -o "$obj" || return 1
  else c++ -std=c++11 -O2 "$@" -I"$here/include" -c "$src" -o "$obj" || return 1; fi
  for fn in span_begin_end span_scoped; do
    # The instructions to the first conditional jump, then those after it
    # up to the first return: the path taken while the word is 0.
    asm=$(objdump -d --no-show-raw-insn --disassemble="$fn" "$obj" | sed -n "/<$fn>:/,\$p" | tail -n +2 |
      awk '{ print } /\tj[a-z]+ / && !/\tjmp / { branched = 1 } branched && /\tret/ { exit }')
    echo "$fn:"
    echo "$asm"
    local loads calls
    echo "$asm" | grep -q $'\tret' || { echo "no return on the fall-through path of $fn"; return 1; }
    loads=$(echo "$asm" | grep -c '(%')
    calls=$(echo "$asm" | grep -c -E '\b(call|jmp) ')
    [ "$loads" = 1 ] || { echo "$fn: expected 1 memory load, found $loads"; return 1; }
    [ "$calls" = 0 ] || { echo "$fn: expected no call, found $calls"; return 1; }
  done
}

exports_only_usertrace() {
  local so=$prefix/lib/libusertrace.so.0 others
  readelf -d "$so" | grep -q 'SONAME.*\[libusertrace\.so\.0\]' || { echo "SONAME is not libusertrace.so.0"; return 1; }
  others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^usertrace_')
  [ -z "$others" ] || { echo "exported beyond usertrace_*: $others"; return 1; }
  others=$(nm -g --defined-only "$prefix/lib/libusertrace.a" | awk 'NF == 3 {print $3}' | grep -v '^usertrace_')
  [ -z "$others" ] || { echo "libusertrace.a has globals beyond usertrace_*: $(echo "$others" | head)"; return 1; }
  nm -D --defined-only "$so" | grep -c ' usertrace_'
}

examples_build_from_prefix() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$build/bin/example_c" "$root/examples/c/main.c" $(pkg-config --cflags --libs usertrace) &&
    c++ -std=c++11 -Wall -Wextra -Werror -pedantic -o "$build/bin/example_cpp" "$root/examples/cpp/main.cpp" $(pkg-config --cflags --libs usertrace) &&
    readelf -d "$build/bin/example_c" | grep -q 'NEEDED.*libusertrace\.so\.0' &&
    "$build/bin/example_c" && "$build/bin/example_cpp"
}

static_library_links() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cc -std=c99 -o "$build/bin/example_static" "$root/examples/c/main.c" $(pkg-config --cflags usertrace) \
    "$prefix/lib/libusertrace.a" $(pkg-config --static --libs-only-l usertrace | sed 's/-lusertrace//') &&
    ! readelf -d "$build/bin/example_static" | grep -q libusertrace && "$build/bin/example_static"
}

# `cc -static` with nothing but what `pkg-config --static` says: a program
# with libusertrace.a (and libc) inside, needing no shared library at all.
static_link_with_pkg_config() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  local exe=$build/bin/example_pc_static
  # shellcheck disable=SC2046 # pkg-config's words are separate arguments
  cc -static -std=c99 -o "$exe" "$root/examples/c/main.c" $(pkg-config --static --cflags --libs usertrace) || return 1
  if readelf -d "$exe" | grep NEEDED; then echo "$exe needs shared libraries"; return 1; fi
  "$exe"
}

# install.sh --help prints its usage (and installs nothing); DESTDIR stages
# the files while usertrace.pc names the real prefix.
install_honours_help_and_destdir() {
  local out stage=$build/stage real=/opt/usertrace-destdir-test f
  out=$(cd "$build" && "$here/install.sh" --help) || return 1
  echo "$out" | grep -q DESTDIR || { echo "--help does not mention DESTDIR: $out"; return 1; }
  [ ! -e "$build/--help" ] || { echo "--help was taken for a prefix"; return 1; }
  rm -rf "$stage"
  DESTDIR=$stage USERTRACE_NO_BUILD=1 "$here/install.sh" "$real" || return 1
  [ ! -e "$real" ] || { echo "$real was written, outside DESTDIR"; return 1; }
  for f in lib/libusertrace.so.0 lib/libusertrace.a include/usertrace.h lib/pkgconfig/usertrace.pc \
    lib/cmake/usertrace/usertraceConfig.cmake lib/cmake/usertrace/usertraceConfigVersion.cmake; do
    [ -e "$stage$real/$f" ] || { echo "missing $stage$real/$f"; return 1; }
  done
  grep -qx "prefix=$real" "$stage$real/lib/pkgconfig/usertrace.pc" || { cat "$stage$real/lib/pkgconfig/usertrace.pc"; return 1; }
}

# find_package(usertrace) on the prefix staged above: usertrace::usertrace
# and usertrace::usertrace_static build and run (emits are no-ops without
# user_events), and a version the package is not compatible with is refused.
cmake_find_package_builds_and_runs() {
  local stage=$build/stage/opt/usertrace-destdir-test cm=$build/cmake out
  [ -e "$stage/lib/cmake/usertrace/usertraceConfig.cmake" ] || { echo "run install_honours_help_and_destdir first"; return 1; }
  rm -rf "$cm"
  cmake -S "$here/tests/cmake" -B "$cm/ok" -DCMAKE_PREFIX_PATH="$stage" -DUSERTRACE_WANT=0.1 &&
    cmake --build "$cm/ok" || return 1
  out=$("$cm/ok/app") || { echo "app failed: $out"; return 1; }
  echo "$out" | grep -q '^cmake app: register \(ok\|unavailable\), emit ok$' || { echo "app said: $out"; return 1; }
  out=$("$cm/ok/app_static") || { echo "app_static failed: $out"; return 1; }
  echo "$out"
  readelf -d "$cm/ok/app" | grep -q 'NEEDED.*libusertrace\.so\.0' || { echo "app does not load libusertrace.so.0"; return 1; }
  if readelf -d "$cm/ok/app_static" | grep -q libusertrace; then echo "app_static loads libusertrace"; return 1; fi
  if cmake -S "$here/tests/cmake" -B "$cm/too_new" -DCMAKE_PREFIX_PATH="$stage" -DUSERTRACE_WANT=1.0 >"$cm/too_new.log" 2>&1; then
    echo "find_package(usertrace 1.0) accepted version 0.x"; return 1
  fi
  grep -q 'compatible with requested version "1.0"' "$cm/too_new.log" || { cat "$cm/too_new.log"; return 1; }
}

host() {
  run_test builds_and_installs build_all
  run_test header_is_current header_is_current
  run_test header_compiles_as_c99 header_compiles cc c99 c
  run_test header_compiles_as_c11 header_compiles cc c11 c
  run_test header_compiles_as_cxx11 header_compiles c++ c++11 cpp
  run_test header_compiles_as_cxx17 header_compiles c++ c++17 cpp
  run_test header_included_twice_in_c header_included_twice cc c99 c
  run_test header_included_twice_in_cxx header_included_twice c++ c++11 c++
  run_test enabled_is_one_load enabled_is_one_load
  run_test enabled_is_one_load_in_pic_code enabled_is_one_load -fPIC
  run_test span_disabled_is_one_load span_disabled_is_one_load c
  run_test span_disabled_is_one_load_in_pic_code span_disabled_is_one_load c -fPIC
  run_test span_disabled_is_one_load_in_cxx span_disabled_is_one_load cpp
  run_test span_disabled_is_one_load_in_cxx_pic_code span_disabled_is_one_load cpp -fPIC
  run_test exports_only_usertrace_symbols exports_only_usertrace
  run_test examples_build_from_prefix_with_pkg_config examples_build_from_prefix
  run_test static_library_links static_library_links
  run_test static_link_with_pkg_config_static static_link_with_pkg_config
  run_test install_honours_help_and_destdir install_honours_help_and_destdir
  run_test cmake_find_package_builds_and_runs cmake_find_package_builds_and_runs
  run_test api_errors_under_asan "$build/bin/api_errors"
  run_test span_errors_under_asan "$build/bin/span_errors"
  run_test span_macros_call_begin_and_end_at_scope_exit "$build/bin/span_macros"
  run_test span_guard_in_cxx_ends_once_and_moves "$build/bin/span_guard"
  run_test benchmark_builds "$here/bench/run-bench.sh" build
}

# --------------------------------------------------------------- guest
have_user_events() {
  [ -e "$tracefs/user_events_data" ] || { echo "no $tracefs/user_events_data: this kernel lacks user_events"; return 1; }
  [ -x "$build/bin/emit_all" ] && [ -x "$cli" ] || { echo "run 'ffi-c/run-tests.sh host' first (missing $build/bin or $cli)"; return 1; }
}

record() { # OUT PATTERN -- CMD...
  local out=$1 pattern=$2
  shift 3
  "$cli" record --format json --buffer-size 1024 -e "$pattern" -o "$out" -- "$@"
}

record_sees_exact_values() {
  have_user_events && record "$build/all.json" 'ctest_*' -- "$build/bin/emit_all" 3 &&
    python3 "$here/tests/check_output.py" record-all "$build/all.json"
}

perf_script_sees_exact_values() {
  have_user_events || return 1
  local data=$build/perf.data
  rm -f "$data"
  timeout 300 "$build/bin/emit_all" 40 100 &
  local emitter=$!
  for _ in $(seq 300); do [ -e "$tracefs/events/user_events/ctest_dyn" ] && break; sleep 0.1; done
  timeout 300 perf record -q -e user_events:ctest_all -e user_events:ctest_dyn -a -o "$data" &
  local perf=$!
  wait "$emitter"
  local rc=$?
  # SIGTERM, not SIGINT: a non-interactive shell starts background jobs
  # with SIGINT ignored. perf writes its file and exits on either.
  kill -TERM "$perf"
  wait "$perf"
  [ "$rc" = 0 ] || { echo "emit_all failed ($rc)"; return 1; }
  perf script -i "$data" >"$build/perf.txt" 2>"$build/perf.err" || { cat "$build/perf.err"; return 1; }
  python3 "$here/tests/check_output.py" perf-all "$build/perf.txt"
}

threaded_emitters_lose_nothing() {
  have_user_events && record "$build/mt.json" 'ctest_mt' -- "$build/bin/threads" 4 5000 &&
    python3 "$here/tests/check_output.py" record-threads "$build/mt.json" 4 5000
}

release_while_emitting_is_safe() {
  have_user_events && timeout 300 "$build/bin/release_while_emitting" 1000
}

dlclose_unregisters_tracepoints() {
  have_user_events && "$build/bin/dlclose_main" "$build/bin/libcplug.so" cplug_ev intact
}

dlclose_control_shows_the_hazard() {
  have_user_events && "$build/bin/dlclose_main" "$build/bin/libcraw.so" craw_ev modified
}

api_errors_with_user_events() {
  have_user_events && "$build/bin/api_errors"
}

examples_events_arrive() {
  have_user_events &&
    record "$build/ex.json" 'example_*' -- sh -c "'$build/bin/example_c' --wait && '$build/bin/example_cpp' --wait" &&
    python3 "$here/tests/check_output.py" record-example "$build/ex.json"
}

span_errors_with_user_events() {
  have_user_events && "$build/bin/span_errors"
}

# tests/c/spans.c then tests/cpp/spans.cpp, under one recording: every
# event, in order, with its ids, values, thread and process.
spans_arrive_in_exact_order() {
  have_user_events || return 1
  rm -f "$build/spans.ids" "$build/spans_cpp.ids"
  record "$build/spans.json" 'cspan_*,cxxspan_*' -- \
    sh -c "'$build/bin/spans' '$build/spans.ids' && '$build/bin/spans_cpp' '$build/spans_cpp.ids'" &&
    python3 "$here/tests/check_output.py" record-spans "$build/spans.json" "$build/spans.ids" "$build/spans_cpp.ids"
}

guest() {
  run_test api_errors_with_user_events api_errors_with_user_events
  run_test record_sees_exact_values record_sees_exact_values
  run_test perf_script_sees_exact_values perf_script_sees_exact_values
  run_test threaded_emitters_lose_nothing threaded_emitters_lose_nothing
  run_test release_while_emitting_is_safe release_while_emitting_is_safe
  run_test dlclose_unregisters_tracepoints dlclose_unregisters_tracepoints
  run_test dlclose_control_shows_the_hazard dlclose_control_shows_the_hazard
  run_test examples_events_arrive examples_events_arrive
  run_test span_errors_with_user_events span_errors_with_user_events
  run_test spans_arrive_in_exact_order spans_arrive_in_exact_order
}

case "$mode" in
  host) host ;;
  guest) guest ;;
  *) echo "usage: $0 host|guest" >&2; exit 2 ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
