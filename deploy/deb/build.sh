#!/usr/bin/env bash
# Builds the Debian packages, and checks them:
#   usertrace_VERSION_ARCH.deb         the command, its man pages and its
#                                      bash, zsh and fish completions
#   libusertrace0_VERSION_ARCH.deb     the C library's shared object
#   libusertrace-dev_VERSION_ARCH.deb  its header, static library, pkg-config
#                                      and CMake files, and the .so link
#
#   deploy/deb/build.sh [OUT]          (default /tmp/usertrace-deb)
#
# The files are what cli/install.sh and ffi-c/install.sh install under
# /usr (with DESTDIR; the libraries in Debian's multiarch folder), so a
# package holds what every other install path holds, made by the same
# scripts; dpkg-deb wraps them. (cargo-deb would need the man pages and
# completions as files listed in Cargo.toml, generated beforehand by the
# binary: the install script already does both.) The checks, each PASS or
# FAIL, then `N passed, M failed`: each package's control fields and file
# list; the command from the package runs and is its version; a C program
# builds with the -dev package's pkg-config file and runs on libusertrace0's
# library; dpkg installs all three and purges them without a trace.
# Nothing is installed on this machine: the packages are unpacked into a
# scratch folder (dpkg-deb -x), or installed by dpkg into a root of its own.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-/tmp/usertrace-deb}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
maintainer="usertrace developers <usertrace@users.noreply.github.com>"
homepage=$(sed -n 's/^homepage = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
work=$(mktemp -d /tmp/usertrace-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

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

# The oldest glibc the ELF files under DIR need, from their versioned
# symbols: what `Depends: libc6 (>= ...)` must say.
glibc_needed() {
  find "$1" -type f \( -perm -u+x -o -name '*.so*' \) -exec objdump -T {} + 2>/dev/null |
    sed -n 's/.*GLIBC_\([0-9][0-9.]*\).*/\1/p' | sort -uV | tail -1
}

# PACKAGE DIR DEPENDS DESCRIPTION...: DIR/DEBIAN/control, then the .deb.
wrap() {
  local package=$1 dir=$2 depends=$3
  shift 3
  local size
  size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
  mkdir -p "$dir/DEBIAN"
  {
    echo "Package: $package"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $size"
    [ -n "$depends" ] && echo "Depends: $depends"
    echo "Section: devel"
    echo "Priority: optional"
    echo "Homepage: $homepage"
    echo "Description: $1"
    shift
    for line in "$@"; do echo " $line"; done
  } >"$dir/DEBIAN/control"
  dpkg-deb --root-owner-group --build "$dir" "$out/${package}_${version}_${arch}.deb"
}

build_cli() {
  local dir=$work/usertrace
  DESTDIR=$dir "$root/cli/install.sh" /usr || return 1
  wrap usertrace "$dir" "libc6 (>= $(glibc_needed "$dir"))" \
    "record user_events and shared-memory tracepoints into timelines" \
    "usertrace records the tracepoints of programs instrumented with usertrace" \
    "(C, Rust, Python, Java) with the kernel's task records, into JSON lines," \
    "perf.data, Perfetto and Chrome timelines, latency reports and OpenTelemetry."
}

build_library() {
  local stage=$work/c-stage lib=usr/lib/$multiarch
  DESTDIR=$stage "$root/ffi-c/install.sh" --libdir "lib/$multiarch" /usr || return 1
  # The runtime package: the shared object under its SONAME.
  local runtime=$work/libusertrace0 dev=$work/libusertrace-dev
  mkdir -p "$runtime/$lib" "$dev"
  mv "$stage/$lib"/libusertrace.so.0* "$runtime/$lib/" || return 1
  # Everything else, the unversioned .so link included, is for building.
  cp -a "$stage/." "$dev/"
  wrap libusertrace0 "$runtime" "libc6 (>= $(glibc_needed "$runtime"))" \
    "usertrace tracepoints for C and C++ (shared library)" \
    "One memory load per tracepoint while nobody listens; one writev into the" \
    "kernel's trace buffers (user_events), or one record into shared memory," \
    "when usertrace record or perf attaches." || return 1
  wrap libusertrace-dev "$dev" "libusertrace0 (= $version)" \
    "usertrace tracepoints for C and C++ (development files)" \
    "The header, the static library, and the pkg-config and CMake files for" \
    "building against libusertrace."
}

deb() { echo "$out/${1}_${version}_${arch}.deb"; }

# PACKAGE FIELD VALUE: the control field says exactly that.
field_is() {
  local got
  got=$(dpkg-deb -f "$(deb "$1")" "$2") || return 1
  [ "$got" = "$3" ] || { echo "$1: $2 is '$got', not '$3'"; return 1; }
}

# PACKAGE PATH...: each path is in the package.
holds() {
  local package=$1 listing
  shift
  listing=$(dpkg-deb -c "$(deb "$package")") || return 1
  for path in "$@"; do
    grep -qE " \./$path( ->|$)" <<<"$listing" || { echo "$package lacks /$path:"; echo "$listing"; return 1; }
  done
}

cli_package_is_whole() {
  field_is usertrace Package usertrace && field_is usertrace Version "$version" && field_is usertrace Architecture "$arch" &&
    dpkg-deb -f "$(deb usertrace)" Depends | grep -qE '^libc6 \(>= 2\.[0-9]+\)$' &&
    holds usertrace usr/bin/usertrace usr/share/man/man1/usertrace.1 usr/share/man/man1/usertrace-record.1 \
      usr/share/bash-completion/completions/usertrace usr/share/zsh/site-functions/_usertrace \
      usr/share/fish/vendor_completions.d/usertrace.fish
}

cli_from_the_package_runs() {
  local x=$work/x-cli
  dpkg-deb -x "$(deb usertrace)" "$x" || return 1
  local said
  said=$("$x/usr/bin/usertrace" --version) || return 1
  [ "$said" = "usertrace $version" ] || { echo "--version says '$said'"; return 1; }
  # Its exit status says whether this kernel has user_events; its JSON is
  # the check.
  "$x/usr/bin/usertrace" status --format json >"$work/status.json"
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["transport"]["name"])' "$work/status.json"
}

library_packages_are_whole() {
  field_is libusertrace0 Package libusertrace0 && field_is libusertrace-dev Depends "libusertrace0 (= $version)" &&
    holds libusertrace0 "usr/lib/$multiarch/libusertrace.so.0" "usr/lib/$multiarch/libusertrace.so.$version" &&
    holds libusertrace-dev usr/include/usertrace.h "usr/lib/$multiarch/libusertrace.so" "usr/lib/$multiarch/libusertrace.a" \
      "usr/lib/$multiarch/pkgconfig/usertrace.pc" "usr/lib/$multiarch/cmake/usertrace/usertraceConfig.cmake" &&
    ! grep -qE '\.(h|a|pc)$' <<<"$(dpkg-deb -c "$(deb libusertrace0)")"
}

# The C example, built with the -dev package's usertrace.pc (under a
# sysroot: pkg-config prefixes its paths) and run on libusertrace0's .so.
c_program_builds_and_runs_from_the_packages() {
  local x=$work/x-c
  dpkg-deb -x "$(deb libusertrace0)" "$x" && dpkg-deb -x "$(deb libusertrace-dev)" "$x" || return 1
  local flags
  flags=$(PKG_CONFIG_SYSROOT_DIR=$x PKG_CONFIG_LIBDIR=$x/usr/lib/$multiarch/pkgconfig pkg-config --cflags --libs usertrace) || return 1
  # shellcheck disable=SC2086
  cc -std=gnu99 -Wall -Werror -o "$work/example_c" "$root/examples/c/main.c" $flags || return 1
  # ldd's lines held first: `ldd | grep -q` under pipefail fails whenever
  # grep has its match and exits before ldd is done writing (SIGPIPE).
  local linked
  linked=$(LD_LIBRARY_PATH=$x/usr/lib/$multiarch ldd "$work/example_c") || return 1
  grep -q "$x/usr/lib/$multiarch/libusertrace.so.0" <<<"$linked" || return 1
  LD_LIBRARY_PATH=$x/usr/lib/$multiarch "$work/example_c"
}

# dpkg itself installs all three, into an empty root of its own (libc6 is
# not in that root's database: its dependency is the one forced), and
# removes them again leaving nothing.
dpkg_installs_and_removes_them() {
  local r=$work/dpkg-root
  mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" && : >"$r/var/lib/dpkg/status" && : >"$r/var/lib/dpkg/available" || return 1
  dpkg --root="$r" --force-depends --force-script-chrootless --log=/dev/null -i \
    "$(deb libusertrace0)" "$(deb libusertrace-dev)" "$(deb usertrace)" || return 1
  [ -x "$r/usr/bin/usertrace" ] && [ -e "$r/usr/lib/$multiarch/libusertrace.so.0" ] && [ -e "$r/usr/include/usertrace.h" ] || return 1
  dpkg --root="$r" --log=/dev/null -l | grep -E '^ii +(usertrace|libusertrace0|libusertrace-dev)[: ]' | wc -l | grep -qx 3 || return 1
  dpkg --root="$r" --force-depends --force-script-chrootless --log=/dev/null -P usertrace libusertrace-dev libusertrace0 || return 1
  local left
  left=$(find "$r/usr" -type f 2>/dev/null)
  [ -z "$left" ] || { echo "left after purge: $left"; return 1; }
}

mkdir -p "$out"
rm -f "$out"/*.deb
check cli_package_builds build_cli
check library_packages_build build_library
check cli_package_has_its_fields_man_pages_and_completions cli_package_is_whole
check cli_from_the_package_runs cli_from_the_package_runs
check library_packages_split_runtime_and_development library_packages_are_whole
check c_program_builds_and_runs_from_the_packages c_program_builds_and_runs_from_the_packages
check dpkg_installs_and_removes_them dpkg_installs_and_removes_them
echo "deploy/deb/build.sh: $(cd "$out" && ls -- *.deb 2>/dev/null | tr '\n' ' ')in $out"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
