#!/usr/bin/env bash
# Builds libusertrace (release) and installs it into a prefix:
#   ffi-c/install.sh PREFIX
# gives PREFIX/lib/libusertrace.so.0 (SONAME; .so.0.1.0 with symlinks),
# PREFIX/lib/libusertrace.a, PREFIX/include/usertrace.h and
# PREFIX/lib/pkgconfig/usertrace.pc, so that
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc app.c $(pkg-config --cflags --libs usertrace)
# works (add --static for libusertrace.a). USERTRACE_NO_BUILD=1 installs
# what is already built. CARGO_TARGET_DIR is honoured.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
major=${version%%.*}

if [ "${USERTRACE_NO_BUILD:-}" != 1 ]; then
  (cd "$root" && cargo build --quiet --release -p usertrace-c)
fi
# The system libraries libusertrace.a needs (rustc's native-static-libs).
static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$target/release/libusertrace.so" "$prefix/lib/libusertrace.so.$version"
ln -sfn "libusertrace.so.$version" "$prefix/lib/libusertrace.so.$major"
ln -sfn "libusertrace.so.$major" "$prefix/lib/libusertrace.so"
# libusertrace.a as one relocatable object whose only global symbols are
# usertrace_*: Rust's std inside it cannot clash with another Rust static
# library in the same program. (.llvmbc is dropped so that binutils' LLVM
# plugin, if installed, leaves the object alone.)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ld -r --whole-archive "$target/release/libusertrace.a" -o "$work/usertrace.o"
objcopy --wildcard --keep-global-symbol='usertrace_*' --remove-section=.llvmbc --remove-section=.llvmcmd "$work/usertrace.o"
rm -f "$work/libusertrace.a"
ar rcs "$work/libusertrace.a" "$work/usertrace.o"
install -m 644 "$work/libusertrace.a" "$prefix/lib/libusertrace.a"
install -m 644 "$here/include/usertrace.h" "$prefix/include/usertrace.h"
cat >"$prefix/lib/pkgconfig/usertrace.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: usertrace
Description: Linux user_events tracepoints: one load when off, one writev when on
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lusertrace
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
echo "installed libusertrace $version into $prefix"
