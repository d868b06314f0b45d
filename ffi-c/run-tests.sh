#!/usr/bin/env bash
# Tests of the C SDK: real C programs (under ASan where it helps).
#   ffi-c/run-tests.sh host    builds and installs libusertrace into $build/prefix,
#                              builds every test program, runs the tests that need no
#                              tracer (header drift, version, C/C++ compile, no
#                              old-style casts in C++, header included twice, exported
#                              symbols, install + pkg-config examples, --libdir and no
#                              rpath, static link, DESTDIR + CMake package, API errors
#                              without user_events, status and transport as `usertrace
#                              status` says them, events shared by two files, the
#                              span macros' fast path and control flow); then, with
#                              USERTRACE_TRANSPORT=shm (shared memory, on any kernel),
#                              the guest's tests that need only `usertrace record`
#                              (exact values, threads, spans from C and C++, spans'
#                              trace context, events
#                              shared by two files, the examples, API and span errors
#                              with registrations that succeed: the `*_over_shm*`
#                              tests), and dlclose over shared memory with its control.
#   ffi-c/run-tests.sh MODE NAME...  only the tests NAME of MODE.
#   ffi-c/run-tests.sh guest   in a kernel with user_events (harness/in-guest), runs
#                              the programs built by `host`: exact values through
#                              `usertrace record` and `perf script`, threads, dlclose,
#                              spans from C and C++, events shared by two files,
#                              stacks walked by perf and by `record --call-graph fp`.
#                              Without user_events every test fails; none is skipped.
# Prints `PASS name` / `FAIL name` (with the log) per test, then `N passed, M failed`.
# $build defaults to /tmp/usertrace-c-tests (USERTRACE_C_BUILD); the guest writes only there.
set -uo pipefail
mode=${1:-}
only=("${@:2}")
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
  # `run-tests.sh MODE NAME...` runs only the tests named.
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then return 0; fi
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
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/dlclose_keeps_library.c" -ldl -o "$b/dlclose_keeps_library" &&
    cc "${CFLAGS_TEST[@]}" -fPIC -shared "$here/tests/c/plugin_leak.c" "${LIBS_TEST[@]}" -o "$b/libcleak.so" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/dlclose_shm_main.c" "${LIBS_TEST[@]}" -ldl -o "$b/dlclose_shm_main" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/span_errors.c" "${LIBS_TEST[@]}" -o "$b/span_errors" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/transport.c" "${LIBS_TEST[@]}" -o "$b/transport" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/diagnosis.c" "${LIBS_TEST[@]}" -o "$b/diagnosis" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/span_macros.c" "${LIBS_TEST[@]}" "${WRAP_SPANS[@]}" -o "$b/span_macros" &&
    c++ "${CXXFLAGS_TEST[@]}" -fsanitize=address "$here/tests/cpp/span_guard.cpp" "${LIBS_TEST[@]}" "${WRAP_SPANS[@]}" -o "$b/span_guard" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/spans.c" "${LIBS_TEST[@]}" -lpthread -o "$b/spans" &&
    cc "${CFLAGS_TEST[@]}" -fsanitize=address "$here/tests/c/trace_context_api.c" "${LIBS_TEST[@]}" -o "$b/trace_context_api" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/trace_context_spans.c" "${LIBS_TEST[@]}" -o "$b/trace_context_spans" &&
    c++ "${CXXFLAGS_TEST[@]}" "$here/tests/cpp/spans.cpp" "${LIBS_TEST[@]}" -o "$b/spans_cpp" &&
    cc "${CFLAGS_TEST[@]}" "$here/tests/c/version.c" "${LIBS_TEST[@]}" -o "$b/version" &&
    cc "${CFLAGS_TEST[@]}" -O2 -fno-omit-frame-pointer "$here/tests/c/frames.c" "${LIBS_TEST[@]}" -o "$b/frames" &&
    build_two_files
}

# tests/c/two_files_{a,b}.c: both as C, and with two_files_b.c as C++ (the
# objects' C linkage), each file compiled on its own and then linked.
build_two_files() {
  local o=$build/obj
  mkdir -p "$o"
  cc "${CFLAGS_TEST[@]}" -c "$here/tests/c/two_files_a.c" -o "$o/two_files_a.o" &&
    cc "${CFLAGS_TEST[@]}" -c "$here/tests/c/two_files_b.c" -o "$o/two_files_b.o" &&
    c++ "${CXXFLAGS_TEST[@]}" -Wold-style-cast -x c++ -c "$here/tests/c/two_files_b.c" -o "$o/two_files_b_cxx.o" &&
    cc "$o/two_files_a.o" "$o/two_files_b.o" "${LIBS_TEST[@]}" -o "$build/bin/two_files" &&
    c++ "$o/two_files_a.o" "$o/two_files_b_cxx.o" "${LIBS_TEST[@]}" -o "$build/bin/two_files_cxx"
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
  {
    usertrace_trace_context parent, mine;
    char traceparent[USERTRACE_TRACEPARENT_SIZE];
    (void)usertrace_trace_context_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &parent);
    USERTRACE_SPAN_END(hdr, USERTRACE_SPAN_BEGIN_IN(s, &parent, &mine, usertrace_u64(1), usertrace_str("b")));
    USERTRACE_SPAN_END(hdr, USERTRACE_SPAN_BEGIN_IN0(s0, NULL, &mine));
    (void)usertrace_trace_context_format(&mine, traceparent, sizeof traceparent);
  }
  scoped();
  return USERTRACE_ENABLED(e) ? 1 : 0;
}
SRC
  $1 -std="$2" -Wall -Wextra -Werror -pedantic -I"$here/include" -c "$src" -o "$build/header_use.o"
}

# The header compiled as C++ with the warnings the issue (#24) was about:
# no C-style cast may come from its macros (-Wold-style-cast).
header_has_no_old_style_casts_in_cxx() { # STD
  c++ -std="$1" -Wall -Wextra -Wold-style-cast -Werror -I"$here/include" -c "$here/tests/cpp/no_old_style_casts.cpp" \
    -o "$build/no_old_style_casts.o"
}

# The header's USERTRACE_VERSION* and the library's usertrace_version() are
# both the version cargo gives the crate (read here from cargo metadata, not
# as gen-header.sh reads it).
version_is_the_crates() {
  local version
  version=$(cd "$root" && cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "usertrace-c"))') || return 1
  echo "cargo: usertrace-c $version"
  "$build/bin/version" "$version"
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
# With `shared`, the event is another file's (USERTRACE_EVENT_DECLARE):
# hidden, so PIC code reaches it without a load from the GOT.
enabled_is_one_load() { # static|shared PIC-FLAG...
  local src=$build/enabled_check.c obj=$build/enabled_check.o asm
  if [ "$1" = shared ]; then
    printf '%s\n' '#include <usertrace.h>' 'USERTRACE_EVENT_DECLARE(e);' \
      'int enabled_check(void) { return USERTRACE_ENABLED(e); }' >"$src"
  else
    cat >"$src" <<'SRC'
#include <usertrace.h>
USERTRACE_EVENT(e, USERTRACE_FIELD_U32(a));
USERTRACE_PROVIDER(one, &e);
int enabled_check(void) { return USERTRACE_ENABLED(e); }
SRC
  fi
  shift
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
  # readelf's lines held first, here and below: `readelf | grep -q` under
  # pipefail fails whenever grep exits before readelf is done (SIGPIPE).
  grep -q 'SONAME.*\[libusertrace\.so\.0\]' <<<"$(readelf -d "$so")" || { echo "SONAME is not libusertrace.so.0"; return 1; }
  others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^usertrace_')
  [ -z "$others" ] || { echo "exported beyond usertrace_*: $others"; return 1; }
  others=$(nm -g --defined-only "$prefix/lib/libusertrace.a" | awk 'NF == 3 {print $3}' | grep -v '^usertrace_')
  [ -z "$others" ] || { echo "libusertrace.a has globals beyond usertrace_*: $(echo "$others" | head)"; return 1; }
  nm -D --defined-only "$so" | grep -c ' usertrace_'
}

# usertrace.pc names no run path: the examples, which the guest runs too,
# bring their own.
examples_build_from_prefix() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  local rpath=-Wl,-rpath,$prefix/lib
  cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$build/bin/example_c" "$root/examples/c/main.c" $(pkg-config --cflags --libs usertrace) "$rpath" &&
    c++ -std=c++11 -Wall -Wextra -Werror -pedantic -o "$build/bin/example_cpp" "$root/examples/cpp/main.cpp" $(pkg-config --cflags --libs usertrace) "$rpath" &&
    grep -q 'NEEDED.*libusertrace\.so\.0' <<<"$(readelf -d "$build/bin/example_c")" &&
    "$build/bin/example_c" && "$build/bin/example_cpp"
}

static_library_links() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cc -std=c99 -o "$build/bin/example_static" "$root/examples/c/main.c" $(pkg-config --cflags usertrace) \
    "$prefix/lib/libusertrace.a" $(pkg-config --static --libs-only-l usertrace | sed 's/-lusertrace//') &&
    ! grep -q libusertrace <<<"$(readelf -d "$build/bin/example_static")" && "$build/bin/example_static"
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
  echo "$out" | grep -q -- --libdir || { echo "--help does not mention --libdir: $out"; return 1; }
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

# install.sh --libdir lib64: the libraries, usertrace.pc and the CMake
# package go to PREFIX/lib64 (and nothing to PREFIX/lib). usertrace.pc's
# Libs are -L and -l alone, no -Wl,-rpath: a program built with nothing but
# what pkg-config says has no run path, and runs with LD_LIBRARY_PATH.
install_honours_libdir() {
  local p=$build/libdir-prefix exe=$build/bin/example_no_rpath version f libs loads
  version=$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/usertrace.pc")
  rm -rf "$p"
  USERTRACE_NO_BUILD=1 "$here/install.sh" --libdir lib64 "$p" || return 1
  for f in "lib64/libusertrace.so.$version" lib64/libusertrace.so.0 lib64/libusertrace.so lib64/libusertrace.a \
    lib64/pkgconfig/usertrace.pc lib64/cmake/usertrace/usertraceConfig.cmake \
    lib64/cmake/usertrace/usertraceConfigVersion.cmake include/usertrace.h; do
    [ -e "$p/$f" ] || { echo "missing $p/$f"; find "$p"; return 1; }
  done
  [ ! -e "$p/lib" ] || { echo "$p/lib was made:"; find "$p/lib"; return 1; }
  grep -qx 'libdir=${prefix}/lib64' "$p/lib64/pkgconfig/usertrace.pc" || { cat "$p/lib64/pkgconfig/usertrace.pc"; return 1; }
  if grep -n rpath "$p/lib64/pkgconfig/usertrace.pc"; then echo "usertrace.pc names a run path"; return 1; fi
  export PKG_CONFIG_PATH=$p/lib64/pkgconfig
  libs=$(pkg-config --libs usertrace | sed 's/ *$//') || return 1
  echo "pkg-config --libs: $libs"
  [ "$libs" = "-L$p/lib64 -lusertrace" ] || { echo "expected -L$p/lib64 -lusertrace"; return 1; }
  # shellcheck disable=SC2046 # pkg-config's words are separate arguments
  cc -std=c99 -Wall -Wextra -Werror -o "$exe" "$root/examples/c/main.c" $(pkg-config --cflags --libs usertrace) || return 1
  if readelf -d "$exe" | grep -E 'RPATH|RUNPATH'; then echo "$exe has a run path"; return 1; fi
  loads=$(LD_LIBRARY_PATH=$p/lib64 ldd "$exe") || return 1
  grep -q "libusertrace\.so\.0 => $p/lib64/libusertrace\.so\.0 " <<<"$loads" || { echo "$loads"; return 1; }
  LD_LIBRARY_PATH=$p/lib64 "$exe"
}

# --libdir as a multiarch folder (two levels under PREFIX) and as an
# absolute path outside PREFIX: usertrace.pc's libdir; and the CMake
# package of each (found through CMAKE_PREFIX_PATH, and usertrace_DIR)
# builds programs that run with that libdir's library.
install_libdir_multiarch_and_absolute() {
  local p=$build/libdir-prefix2 abs=$build/libdir-elsewhere cm=$build/cmake-libdir arch dir loads
  arch=$(cc -print-multiarch)
  arch=${arch:-x86_64-linux-gnu}
  rm -rf "$p" "$abs" "$cm"
  USERTRACE_NO_BUILD=1 "$here/install.sh" --libdir="lib/$arch" "$p" || return 1
  grep -qx "libdir=\${prefix}/lib/$arch" "$p/lib/$arch/pkgconfig/usertrace.pc" || { cat "$p/lib/$arch/pkgconfig/usertrace.pc"; return 1; }
  USERTRACE_NO_BUILD=1 "$here/install.sh" --libdir "$abs/lib" "$p" || return 1
  [ -e "$abs/lib/libusertrace.so.0" ] && [ -e "$abs/lib/libusertrace.a" ] || { echo "nothing in $abs/lib"; find "$abs"; return 1; }
  grep -qx "libdir=$abs/lib" "$abs/lib/pkgconfig/usertrace.pc" || { cat "$abs/lib/pkgconfig/usertrace.pc"; return 1; }
  cmake -S "$here/tests/cmake" -B "$cm/multiarch" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_LIBRARY_ARCHITECTURE="$arch" &&
    cmake --build "$cm/multiarch" || return 1
  grep -qx "usertrace_DIR:PATH=$p/lib/$arch/cmake/usertrace" "$cm/multiarch/CMakeCache.txt" ||
    { grep usertrace_DIR "$cm/multiarch/CMakeCache.txt"; return 1; }
  cmake -S "$here/tests/cmake" -B "$cm/absolute" -Dusertrace_DIR="$abs/lib/cmake/usertrace" &&
    cmake --build "$cm/absolute" || return 1
  for dir in "$cm/multiarch:$p/lib/$arch" "$cm/absolute:$abs/lib"; do
    loads=$(ldd "${dir%%:*}/app") || return 1
    grep -q "libusertrace\.so\.0 => ${dir#*:}/libusertrace\.so\.0 " <<<"$loads" || { echo "$loads"; return 1; }
    "${dir%%:*}/app" && "${dir%%:*}/app_static" || return 1
  done
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
  run_test version_is_the_crates version_is_the_crates
  run_test header_compiles_as_c99 header_compiles cc c99 c
  run_test header_compiles_as_c11 header_compiles cc c11 c
  run_test header_compiles_as_cxx11 header_compiles c++ c++11 cpp
  run_test header_compiles_as_cxx17 header_compiles c++ c++17 cpp
  run_test header_has_no_old_style_casts_in_cxx11 header_has_no_old_style_casts_in_cxx c++11
  run_test header_has_no_old_style_casts_in_cxx17 header_has_no_old_style_casts_in_cxx c++17
  run_test header_included_twice_in_c header_included_twice cc c99 c
  run_test header_included_twice_in_cxx header_included_twice c++ c++11 c++
  run_test enabled_is_one_load enabled_is_one_load static
  run_test enabled_is_one_load_in_pic_code enabled_is_one_load static -fPIC
  run_test enabled_is_one_load_for_a_shared_event_in_pic_code enabled_is_one_load shared -fPIC
  run_test span_disabled_is_one_load span_disabled_is_one_load c
  run_test span_disabled_is_one_load_in_pic_code span_disabled_is_one_load c -fPIC
  run_test span_disabled_is_one_load_in_cxx span_disabled_is_one_load cpp
  run_test span_disabled_is_one_load_in_cxx_pic_code span_disabled_is_one_load cpp -fPIC
  run_test exports_only_usertrace_symbols exports_only_usertrace
  run_test examples_build_from_prefix_with_pkg_config examples_build_from_prefix
  run_test static_library_links static_library_links
  run_test static_link_with_pkg_config_static static_link_with_pkg_config
  run_test install_honours_help_and_destdir install_honours_help_and_destdir
  run_test install_honours_libdir_and_pc_has_no_rpath install_honours_libdir
  run_test install_libdir_multiarch_and_absolute install_libdir_multiarch_and_absolute
  run_test cmake_find_package_builds_and_runs cmake_find_package_builds_and_runs
  # Both check the kernel's path (registration unavailable without
  # user_events); USERTRACE_TRANSPORT=auto would register through shared
  # memory on a host without them.
  run_test api_errors_under_asan env USERTRACE_TRANSPORT=user_events "$build/bin/api_errors"
  run_test span_errors_under_asan env USERTRACE_TRANSPORT=user_events "$build/bin/span_errors"
  run_test transport_user_events_when_asked env USERTRACE_TRANSPORT=user_events "$build/bin/transport" user_events
  run_test transport_shm_when_asked env USERTRACE_TRANSPORT=shm "$build/bin/transport" shm
  run_test transport_setting_invalid_is_named env USERTRACE_TRANSPORT=pipes "$build/bin/transport" invalid
  run_test status_and_transport_say_what_usertrace_status_says status_and_transport_say_what_usertrace_status_says
  run_test trace_context_api_under_asan env USERTRACE_TRANSPORT=user_events "$build/bin/trace_context_api"
  run_test span_macros_call_begin_and_end_at_scope_exit "$build/bin/span_macros"
  run_test span_guard_in_cxx_ends_once_and_moves "$build/bin/span_guard"
  run_test two_files_share_one_event "$build/bin/two_files"
  run_test dlclose_of_its_last_user_keeps_libusertrace_loaded "$build/bin/dlclose_keeps_library" "$build/bin/libcplug.so"
  run_test two_files_share_one_event_with_cxx "$build/bin/two_files_cxx"
  run_test benchmark_builds "$here/bench/run-bench.sh" build
  # Then the guest's tests that need only `usertrace record`, through shared
  # memory (the guest runs them through user_events), and dlclose there.
  run_test record_sees_exact_values_over_shm over_shm record_sees_exact_values
  run_test threaded_emitters_lose_nothing_over_shm over_shm threaded_emitters_lose_nothing
  run_test spans_arrive_in_exact_order_over_shm over_shm spans_arrive_in_exact_order
  run_test spans_carry_their_trace_context_over_shm over_shm spans_carry_their_trace_context
  run_test two_files_events_arrive_over_shm over_shm two_files_events_arrive
  run_test examples_events_arrive_over_shm over_shm examples_events_arrive
  run_test api_errors_over_shm_under_asan over_shm api_errors_with_a_transport
  run_test span_errors_over_shm_under_asan over_shm span_errors_with_a_transport
  run_test dlclose_over_shm_unregisters_tracepoints dlclose_over_shm_unregisters_tracepoints
  run_test dlclose_over_shm_control_shows_the_hazard dlclose_over_shm_control_shows_the_hazard
}

# tests/c/diagnosis.c, given what `usertrace status --format json` says in
# the same environment (USERTRACE_TRANSPORT unset: auto, as a user has it).
status_and_transport_say_what_usertrace_status_says() {
  local json fields
  json=$(env -u USERTRACE_TRANSPORT "$cli" status --format json)
  # status exits 1 without user_events: only its output matters here.
  [ -n "$json" ] || return 1
  mapfile -t fields < <(python3 -c 'import json, sys
s = json.load(sys.stdin)
print(s["user_events"]["state"]); print(s["user_events"]["message"])
print("transport %s: %s" % (s["transport"]["name"], s["transport"]["reason"]))' <<<"$json") || return 1
  [ ${#fields[@]} = 3 ] || return 1
  env -u USERTRACE_TRANSPORT "$build/bin/diagnosis" "${fields[@]}"
}

# --------------------------------------------------------------- guest
have_built() {
  [ -x "$build/bin/emit_all" ] && [ -x "$cli" ] || { echo "run 'ffi-c/run-tests.sh host' first (missing $build/bin or $cli)"; return 1; }
}

# The tests that enable events or read them through tracefs or perf.
have_user_events() {
  [ -e "$tracefs/user_events_data" ] || { echo "no $tracefs/user_events_data: this kernel lacks user_events"; return 1; }
  have_built
}

# The tests that need only `usertrace record`, which `host` also runs over
# shared memory: with USERTRACE_TRANSPORT=shm they need /dev/shm, which
# every Linux has; otherwise the kernel's user_events.
have_transport() {
  if [ "${USERTRACE_TRANSPORT:-}" = shm ]; then
    [ -d /dev/shm ] && [ -w /dev/shm ] || { echo "/dev/shm is not a writable directory"; return 1; }
    have_built
  else
    have_user_events
  fi
}

record() { # OUT PATTERN -- CMD...
  local out=$1 pattern=$2
  shift 3
  "$cli" record --format json --buffer-size 1024 -e "$pattern" -o "$out" -- "$@"
}

record_sees_exact_values() {
  have_transport && record "$build/all.json" 'ctest_*' -- "$build/bin/emit_all" 3 &&
    python3 "$here/tests/check_output.py" record-all "$build/all.json"
}

# Runs the emitter COMMAND, and once TRACEPOINT exists `perf record -a
# PERF-ARGS`, which it stops when the emitter ends; `perf script` of the
# file goes to $build/NAME.txt.
perf_script_beside() { # NAME TRACEPOINT PERF-ARGS... -- COMMAND...
  local name=$1 tracepoint=$2 perf_args=()
  shift 2
  while [ "$1" != -- ]; do perf_args+=("$1"); shift; done
  shift
  local data=$build/$name.data
  rm -f "$data"
  timeout 300 "$@" &
  local emitter=$!
  for _ in $(seq 300); do [ -e "$tracefs/events/user_events/$tracepoint" ] && break; sleep 0.1; done
  timeout 300 perf record -q -a "${perf_args[@]}" -o "$data" &
  local perf=$!
  wait "$emitter"
  local rc=$?
  # SIGTERM, not SIGINT: a non-interactive shell starts background jobs
  # with SIGINT ignored. perf writes its file and exits on either.
  kill -TERM "$perf"
  wait "$perf"
  [ "$rc" = 0 ] || { echo "$1 failed ($rc)"; return 1; }
  perf script -i "$data" >"$build/$name.txt" 2>"$build/$name.err" || { cat "$build/$name.err"; return 1; }
}

perf_script_sees_exact_values() {
  have_user_events &&
    perf_script_beside perf ctest_dyn -e user_events:ctest_all -e user_events:ctest_dyn -- "$build/bin/emit_all" 40 100 &&
    python3 "$here/tests/check_output.py" perf-all "$build/perf.txt"
}

# perf's --call-graph fp walks a stack from the event's writev through
# the library's emit into the program's own frames, up to main: the
# library keeps frame pointers (.cargo/config.toml), as a program built
# with them expects of what it calls.
perf_walks_the_stack_through_an_emit() {
  have_user_events &&
    perf_script_beside frames ctest_frame_hit -e user_events:ctest_frame_hit --call-graph fp -- "$build/bin/frames" 100 &&
    python3 "$here/tests/check_output.py" perf-frames "$build/frames.txt"
}

# usertrace record --call-graph fp names the frames perf walks: in its
# JSON lines as it records; in its perf.data, which perf script walks as
# it walks its own; when convert reads that file later; and in the
# Perfetto trace convert makes of it, as each event's callstack, read with
# Perfetto's own protos (USERTRACE_PERFETTO_PYTHON, as test-all passes it).
record_names_the_frames_of_an_emit() {
  have_user_events || return 1
  [ -x "${USERTRACE_PERFETTO_PYTHON:-}" ] || { echo "USERTRACE_PERFETTO_PYTHON must name a python with Perfetto's protos (harness/perfetto-python)"; return 1; }
  local j=$build/stacks.jsonl d=$build/stacks.data n=20
  rm -f "$j" "$d" "$build/stacks_converted.jsonl" "$build/stacks.pftrace"
  "$cli" record --call-graph fp --buffer-size 1024 -e ctest_frame_hit -o "$j" -o "$d" -- "$build/bin/frames" $n &&
    python3 "$here/tests/check_output.py" record-frames "$j" $n &&
    perf script -i "$d" >"$build/stacks.txt" 2>"$build/stacks.err" &&
    python3 "$here/tests/check_output.py" perf-frames "$build/stacks.txt" &&
    "$cli" convert "$d" -o "$build/stacks_converted.jsonl" &&
    python3 "$here/tests/check_output.py" record-frames "$build/stacks_converted.jsonl" $n &&
    "$cli" convert "$d" -o "$build/stacks.pftrace" &&
    "$USERTRACE_PERFETTO_PYTHON" "$root/output/tests/check_pftrace.py" "$build/stacks.pftrace" >"$build/stacks.pftrace.json" &&
    python3 "$here/tests/check_output.py" pftrace-frames "$build/stacks.pftrace.json" $n
}

# The same for a program that was running before the recorder started:
# its code was mapped before any MMAP2 the session sees, so the recorder
# reads its /proc/PID/maps, live and into the perf.data file (as perf
# synthesizes them), for convert to name its frames from.
record_names_the_frames_of_a_running_program() {
  have_user_events || return 1
  local j=$build/stacks_running.jsonl d=$build/stacks_running.data n=20
  rm -f "$j" "$d" "$build/stacks_running_converted.jsonl"
  # frames waits for the recorder to enable its event, then emits n times.
  timeout 300 "$build/bin/frames" $n &
  local emitter=$!
  for _ in $(seq 300); do [ -e "$tracefs/events/user_events/ctest_frame_hit" ] && break; sleep 0.1; done
  timeout 300 "$cli" record --call-graph fp --buffer-size 1024 -e ctest_frame_hit -o "$j" -o "$d" &
  local recorder=$!
  wait "$emitter" || { echo "frames failed"; kill -TERM "$recorder"; return 1; }
  kill -TERM "$recorder"
  wait "$recorder" || { echo "the recorder failed"; return 1; }
  python3 "$here/tests/check_output.py" record-frames "$j" $n &&
    perf script -i "$d" >"$build/stacks_running.txt" 2>"$build/stacks_running.err" &&
    python3 "$here/tests/check_output.py" perf-frames "$build/stacks_running.txt" &&
    "$cli" convert "$d" -o "$build/stacks_running_converted.jsonl" &&
    python3 "$here/tests/check_output.py" record-frames "$build/stacks_running_converted.jsonl" $n
}

threaded_emitters_lose_nothing() {
  have_transport && record "$build/mt.json" 'ctest_mt' -- "$build/bin/threads" 4 5000 &&
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

# The API's contract with registrations that succeed (tests/c/api_errors.c
# expects what USERTRACE_TRANSPORT makes of this kernel).
api_errors_with_a_transport() {
  have_transport && "$build/bin/api_errors"
}

examples_events_arrive() {
  have_transport &&
    record "$build/ex.json" 'example_*' -- sh -c "'$build/bin/example_c' --wait && '$build/bin/example_cpp' --wait" &&
    python3 "$here/tests/check_output.py" record-example "$build/ex.json"
}

span_errors_with_a_transport() {
  have_transport && "$build/bin/span_errors"
}

# tests/c/spans.c then tests/cpp/spans.cpp, under one recording: every
# event, in order, with its ids, values, thread and process.
spans_arrive_in_exact_order() {
  have_transport || return 1
  rm -f "$build/spans.ids" "$build/spans_cpp.ids"
  record "$build/spans.json" 'cspan_*,cxxspan_*' -- \
    sh -c "'$build/bin/spans' '$build/spans.ids' && '$build/bin/spans_cpp' '$build/spans_cpp.ids'" &&
    python3 "$here/tests/check_output.py" record-spans "$build/spans.json" "$build/spans.ids" "$build/spans_cpp.ids"
}

# tests/c/trace_context_spans.c under a recording: each begin carries the
# trace context the program wrote down (remote parent, child, root).
spans_carry_their_trace_context() {
  have_transport || return 1
  rm -f "$build/trace_context.ids"
  record "$build/trace_context.json" 'ctrace_*' -- "$build/bin/trace_context_spans" "$build/trace_context.ids" &&
    python3 "$here/tests/check_output.py" record-trace-context "$build/trace_context.json" "$build/trace_context.ids"
}

# tests/c/two_files_{a,b}.c, as C and with b as C++, under one recording:
# the events each file emits, on the objects the other defines, with their
# exact values.
two_files_events_arrive() {
  have_transport || return 1
  rm -f "$build/two_files.ids" "$build/two_files_cxx.ids"
  record "$build/two_files.json" 'ctwo_*' -- \
    sh -c "'$build/bin/two_files' '$build/two_files.ids' && '$build/bin/two_files_cxx' '$build/two_files_cxx.ids'" &&
    python3 "$here/tests/check_output.py" record-two-files "$build/two_files.json" "$build/two_files.ids" "$build/two_files_cxx.ids"
}

# tests/c/dlclose_shm_main.c, over shared memory only: there the recorder
# writes the enable word itself, and last when its recording ends (to clear
# it). The program runs a recorder, unloads the library while it is
# attached, fills what the word was with canaries, and stops the recorder
# while it still runs. With libcplug.so the destructor freed the event's
# slot at dlclose: the recorder's last write is refused and the canaries
# stay intact. The recording holds the one event emitted before, from the
# program's pid.
dlclose_over_shm_unregisters_tracepoints() {
  dlclose_over_shm libcplug.so cplug_ev intact
}

# The control: libcleak.so's provider is written out by hand, without the
# destructor, so its slot stays live after dlclose and the recorder's last
# write lands on a canary.
dlclose_over_shm_control_shows_the_hazard() {
  dlclose_over_shm libcleak.so cleak_ev modified
}

dlclose_over_shm() { # LIBRARY EVENT intact|modified
  export USERTRACE_TRANSPORT=shm
  have_transport || return 1
  local out=$build/dlclose_shm_$2.json pid=$build/dlclose_shm_$2.pid
  rm -f "$out" "$pid"
  "$build/bin/dlclose_shm_main" "$cli" "$build/bin/$1" "$2" "$3" "$out" "$pid" &&
    python3 "$here/tests/check_output.py" record-dlclose "$out" "$2" "$pid"
}

# Runs a test function with USERTRACE_TRANSPORT=shm exported (inside
# run_test's subshell): its producers then take shared memory on any
# kernel, one with user_events too.
over_shm() { # FUNCTION
  export USERTRACE_TRANSPORT=shm
  "$@"
}

guest() {
  run_test api_errors_with_user_events api_errors_with_a_transport
  run_test record_sees_exact_values record_sees_exact_values
  run_test perf_script_sees_exact_values perf_script_sees_exact_values
  run_test perf_walks_the_stack_through_an_emit perf_walks_the_stack_through_an_emit
  run_test record_names_the_frames_of_an_emit record_names_the_frames_of_an_emit
  run_test record_names_the_frames_of_a_running_program record_names_the_frames_of_a_running_program
  run_test threaded_emitters_lose_nothing threaded_emitters_lose_nothing
  run_test release_while_emitting_is_safe release_while_emitting_is_safe
  run_test dlclose_unregisters_tracepoints dlclose_unregisters_tracepoints
  run_test dlclose_of_its_last_user_keeps_libusertrace_and_its_registrar "$build/bin/dlclose_keeps_library" "$build/bin/libcplug.so"
  run_test dlclose_control_shows_the_hazard dlclose_control_shows_the_hazard
  run_test examples_events_arrive examples_events_arrive
  run_test span_errors_with_user_events span_errors_with_a_transport
  run_test spans_arrive_in_exact_order spans_arrive_in_exact_order
  run_test spans_carry_their_trace_context spans_carry_their_trace_context
  run_test two_files_events_arrive two_files_events_arrive
}

case "$mode" in
  host) host ;;
  guest) guest ;;
  *) echo "usage: $0 host|guest" >&2; exit 2 ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
