#!/usr/bin/env bash
# Builds what PyPI takes, and checks it:
#   - abi3 wheels for x86_64 and aarch64 Linux, tagged manylinux2014
#     (glibc 2.17): maturin links them through zig (PyPI's `ziglang`), so
#     they need no newer glibc than 2.17 whatever glibc this machine has;
#   - the sdist, from which `pip install` builds on any platform with Rust.
# Rust's standard library for a target without it (aarch64's on x86_64) is
# added with `rustup target add`.
# Each wheel must be what `auditwheel show` says it is consistent with
# (manylinux_2_17_ARCH, no library outside the manylinux set); the x86_64
# wheel and the sdist are each installed into a fresh venv, in which a
# tracepoint must register.
#   bindings-python/build-wheels.sh [OUT]   (default /tmp/usertrace-python/dist)
# The tools live in a venv of their own, made once: $USERTRACE_WHEEL_TOOLS
# (default ~/.cache/usertrace/wheel-tools). Prints PASS/FAIL per check, then
# `N passed, M failed` (harness/test-all runs it beside the guest).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Absolute: maturin runs in bindings-python/, the checks where we were called.
out=$(realpath -m "${1:-/tmp/usertrace-python/dist}")
tools=${USERTRACE_WHEEL_TOOLS:-$HOME/.cache/usertrace/wheel-tools}
# Pinned: a new maturin or zig may tag or link differently.
pins=(maturin==1.16.0 ziglang==0.17.1 auditwheel==6.8.2)
manylinux=manylinux2014
glibc=2_17
passed=0
failed=0
work=$(mktemp -d /tmp/usertrace-wheels.XXXXXX)
trap 'rm -rf "$work"' EXIT

check() { # NAME COMMAND...
  local name=$1 log=$work/$1.log
  shift
  if ("$@") >"$log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    sed 's/^/    /' "$log" | tail -30
    failed=$((failed + 1))
  fi
}

tools_ready() {
  local pin frozen
  frozen=$("$tools/bin/python" -m pip freeze 2>/dev/null)
  for pin in "${pins[@]}"; do
    grep -qxF "$pin" <<<"$frozen" && continue
    echo "build-wheels: making the tools' venv in $tools (${pins[*]})"
    rm -rf "$tools"
    python3 -m venv "$tools" && "$tools/bin/python" -m pip install -q "${pins[@]}"
    return
  done
}

# Rust's standard library for each wheel's target: rustup adds the one
# missing (aarch64's on an x86_64 machine, x86_64's on an aarch64 one).
rust_targets_ready() {
  local arch target sysroot
  sysroot=$(cd "$here" && rustc --print sysroot) || return 1
  for arch in x86_64 aarch64; do
    target=$arch-unknown-linux-gnu
    [ -d "$sysroot/lib/rustlib/$target/lib" ] && continue
    command -v rustup >/dev/null || {
      echo "Rust in $sysroot has no standard library for $target, and there is no rustup to add it"
      return 1
    }
    echo "build-wheels: adding Rust's $target target (rustup target add $target)"
    (cd "$here" && rustup target add "$target") || return 1
  done
}

# ARCH: the wheel for ARCH-unknown-linux-gnu, into $out.
build_wheel() {
  local arch=$1
  rm -f "$out"/usertrace-*-"$manylinux"_"$arch".*.whl
  # maturin finds zig as `python -m ziglang`, in the tools' venv on PATH.
  (cd "$here" && PATH=$tools/bin:$PATH maturin build --release --zig --compatibility "$manylinux" \
    --target "$arch-unknown-linux-gnu" -o "$out") || return 1
  wheel_of "$arch" >/dev/null
}

wheel_of() { # ARCH: the one wheel built for it
  local found=("$out"/usertrace-*-"$manylinux"_"$1".*.whl)
  [ -e "${found[0]}" ] && [ "${#found[@]}" = 1 ] || { echo "no single $manylinux wheel for $1 in $out: ${found[*]}"; return 1; }
  echo "${found[0]}"
}

# ARCH: auditwheel says the wheel is consistent with manylinux_2_17_ARCH.
auditwheel_agrees() {
  local wheel
  wheel=$(wheel_of "$1") || return 1
  "$tools/bin/auditwheel" show "$wheel" | tee "$work/show.txt"
  grep -q "is consistent with the following platform tag:" "$work/show.txt" &&
    tr -d '\n' <"$work/show.txt" | grep -q "\"manylinux_${glibc}_$1\"" || {
    echo "auditwheel does not find $(basename "$wheel") consistent with manylinux_${glibc}_$1"
    return 1
  }
}

build_sdist() {
  rm -f "$out"/usertrace-*.tar.gz
  (cd "$here" && PATH=$tools/bin:$PATH maturin sdist -o "$out") || return 1
  local sdist=("$out"/usertrace-*.tar.gz)
  # What a build from it needs: the core crate it wraps, and the licences.
  tar tzf "${sdist[0]}" >"$work/sdist.txt" || return 1
  for f in LICENSE-APACHE LICENSE-MIT core/Cargo.toml core/src/lib.rs bindings-python/src/lib.rs python/usertrace/__init__.py; do
    grep -q "^usertrace-[^/]*/\(.*/\)\?$f$" "$work/sdist.txt" || { echo "the sdist lacks $f"; return 1; }
  done
}

# PACKAGE: installed alone into a fresh venv, it imports and reports.
installs_and_imports() {
  local package=$1 venv=$work/venv-$RANDOM
  python3 -m venv "$venv" && "$venv/bin/python" -m pip install -q --no-deps "$package" || return 1
  # Outside the source tree, so that the installed package is what imports;
  # a tracepoint that registers proves the native part loads and works
  # (through user_events, or shared memory where there is none).
  (cd "$work" && "$venv/bin/python" -c '
import usertrace
tp = usertrace.Provider("ut_wheel_check").tracepoint("ready", n="u32")
assert tp.registration_error is None, (tp.registration_error, usertrace.status())
print(usertrace.__version__, "registered; status:", usertrace.status())
') || return 1
}

mkdir -p "$out"
check wheel_tools_install tools_ready
check rust_targets_install rust_targets_ready
check wheel_builds_for_x86_64 build_wheel x86_64
check wheel_builds_for_aarch64 build_wheel aarch64
check auditwheel_finds_x86_64_wheel_manylinux_2_17 auditwheel_agrees x86_64
check auditwheel_finds_aarch64_wheel_manylinux_2_17 auditwheel_agrees aarch64
check sdist_builds_with_core_and_licences build_sdist
check x86_64_wheel_installs_and_imports installs_and_imports "$(wheel_of x86_64 2>/dev/null)"
check sdist_installs_and_imports installs_and_imports "$(ls "$out"/usertrace-*.tar.gz 2>/dev/null | head -1)"
echo "build-wheels: $(ls "$out" 2>/dev/null | tr '\n' ' ')in $out"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
