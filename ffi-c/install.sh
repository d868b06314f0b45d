#!/usr/bin/env bash
# Builds libusertrace (release) and installs it into a prefix.
#
#   ffi-c/install.sh [--help] [--libdir LIBDIR] PREFIX
#
# installs
#   LIBDIR/libusertrace.so.0             (SONAME; .so.0.1.0 with symlinks)
#   LIBDIR/libusertrace.a
#   PREFIX/include/usertrace.h
#   LIBDIR/pkgconfig/usertrace.pc
#   LIBDIR/cmake/usertrace/usertraceConfig.cmake (+ ConfigVersion)
# so that these work:
#   PKG_CONFIG_PATH=LIBDIR/pkgconfig cc app.c $(pkg-config --cflags --libs usertrace)
#   cc -static app.c $(pkg-config --static --cflags --libs usertrace)   # libusertrace.a
#   find_package(usertrace REQUIRED)   # CMake, with CMAKE_PREFIX_PATH=PREFIX;
#   target_link_libraries(app PRIVATE usertrace::usertrace)   # or usertrace::usertrace_static
#
# Options:
#   --libdir LIBDIR        where the libraries go: a folder under PREFIX
#                          (default lib; lib64, lib/x86_64-linux-gnu) or an
#                          absolute path (outside PREFIX, CMake finds it with
#                          usertrace_DIR=LIBDIR/cmake/usertrace).
# usertrace.pc names no run path (-Wl,-rpath): a program finds
# libusertrace.so.0 where ld.so looks (ldconfig's folders, LD_LIBRARY_PATH),
# or where it was linked to look (-Wl,-rpath,LIBDIR). Installed as root
# without DESTDIR into one of ldconfig's folders (/usr/local/lib), it runs
# ldconfig, whose cache is how ld.so finds libraries there.
#
# Environment:
#   DESTDIR=DIR            stage the files under DIR/PREFIX and DIR/LIBDIR (PREFIX
#                          must then be absolute); usertrace.pc still names PREFIX,
#                          and the CMake files find their paths from where they are.
#   USERTRACE_NO_BUILD=1   install what is already built.
#   CARGO_TARGET_DIR       where cargo builds (default: the repository's target/).
set -euo pipefail
# Why this script and not cargo-c (`cargo cinstall`), which builds and
# installs a .so with its SONAME, a .a, a .pc and a cbindgen header, with
# --libdir and --destdir too: it writes no CMake package, which we ship and
# test (find_package(usertrace)); it is built from the `cargo` crate, so every
# packager and CI machine would first compile cargo itself, minutes on a
# small machine, where this script needs only the cargo it already has; and
# what it would save is the part below that is tested anyway (the .pc
# without rpath, Libs.private for -static, the SONAME symlinks).
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
libdir_arg=lib
prefix_arg=
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --libdir) [ -n "${2:-}" ] || { echo "$0: --libdir needs a folder" >&2; exit 2; }; libdir_arg=$2; shift 2 ;;
    --libdir=?*) libdir_arg=${1#--libdir=}; shift ;;
    -*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [ -z "$prefix_arg" ] || { usage >&2; exit 2; }; prefix_arg=$1; shift ;;
  esac
done
[ -n "$prefix_arg" ] || { usage >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
destdir=${DESTDIR:-}
if [ -n "$destdir" ]; then
  case "$prefix_arg" in
    /*) prefix=$(realpath -ms "$prefix_arg") ;;
    *) echo "$0: with DESTDIR, PREFIX must be absolute (got $prefix_arg)" >&2; exit 2 ;;
  esac
else
  prefix=$(realpath -ms "$prefix_arg")
fi
case "$libdir_arg" in
  /*) libdir=$(realpath -ms "$libdir_arg") ;;
  *) libdir=$(realpath -ms "$prefix/$libdir_arg") ;;
esac
# Where the files go; $prefix and $libdir are where they will be used from.
stage=$destdir$prefix
libstage=$destdir$libdir
# usertrace.pc's libdir, and the way from LIBDIR to PREFIX for the CMake
# files: relative while LIBDIR is inside PREFIX, so that a staged or moved
# tree still finds its header; else the absolute PREFIX.
case "$libdir/" in
  "${prefix%/}"/*)
    pc_libdir="\${prefix}${libdir#"${prefix%/}"}"
    libdir_to_prefix=$(realpath -ms --relative-to="$libdir" "$prefix") ;;
  *)
    pc_libdir=$libdir
    libdir_to_prefix= ;;
esac
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
major=${version%%.*}
minor=$(echo "$version" | cut -d. -f2)
# The header's USERTRACE_VERSION is written by gen-header.sh; installing it
# beside a library of another version would give programs a header that
# lies about the library.
grep -qx "#define USERTRACE_VERSION \"$version\"" "$here/include/usertrace.h" || {
  echo "$0: include/usertrace.h is not of version $version (Cargo.toml's): run ffi-c/gen-header.sh" >&2
  exit 1
}

if [ "${USERTRACE_NO_BUILD:-}" != 1 ]; then
  (cd "$root" && cargo build --quiet --release -p usertrace-c)
fi
# The system libraries libusertrace.a needs (rustc's native-static-libs),
# less -lgcc_s: the compiler driver adds the unwinder itself, libgcc_s for a
# dynamic link and libgcc_eh for `cc -static`, which has no libgcc_s to find.
static_libs="-lutil -lrt -lpthread -lm -ldl -lc"
ptr_bytes=$(($(getconf LONG_BIT) / 8))

install -d "$libstage/pkgconfig" "$libstage/cmake/usertrace" "$stage/include"
install -m 755 "$target/release/libusertrace.so" "$libstage/libusertrace.so.$version"
ln -sfn "libusertrace.so.$version" "$libstage/libusertrace.so.$major"
ln -sfn "libusertrace.so.$major" "$libstage/libusertrace.so"
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
install -m 644 "$work/libusertrace.a" "$libstage/libusertrace.a"
install -m 644 "$here/include/usertrace.h" "$stage/include/usertrace.h"

cat >"$work/usertrace.pc" <<PC
prefix=$prefix
libdir=$pc_libdir
includedir=\${prefix}/include

Name: usertrace
Description: Linux user_events tracepoints: one load when off, one writev when on
Version: $version
Libs: -L\${libdir} -lusertrace
Libs.private: $static_libs
Cflags: -I\${includedir}
PC
install -m 644 "$work/usertrace.pc" "$libstage/pkgconfig/usertrace.pc"

# The CMake package. Relocatable: LIBDIR is two folders up from the file,
# and PREFIX as far from LIBDIR as it was at install (when LIBDIR is inside
# it), so a staged (DESTDIR) or moved tree works as well.
if [ -n "$libdir_to_prefix" ]; then
  cmake_prefix="get_filename_component(_usertrace_prefix \"\${_usertrace_libdir}/$libdir_to_prefix\" ABSOLUTE)"
else
  cmake_prefix="set(_usertrace_prefix \"$prefix\")"
fi
cat >"$work/usertraceConfig.cmake" <<CMAKE
# usertrace's CMake package, written by ffi-c/install.sh:
#   find_package(usertrace $version REQUIRED)
#   target_link_libraries(app PRIVATE usertrace::usertrace)          # libusertrace.so.$major
#   target_link_libraries(app PRIVATE usertrace::usertrace_static)   # libusertrace.a
get_filename_component(_usertrace_libdir "\${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
$cmake_prefix

include(CMakeFindDependencyMacro)
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_dependency(Threads)

if(NOT TARGET usertrace::usertrace)
  add_library(usertrace::usertrace SHARED IMPORTED)
  set_target_properties(usertrace::usertrace PROPERTIES
    IMPORTED_LOCATION "\${_usertrace_libdir}/libusertrace.so.$version"
    IMPORTED_SONAME "libusertrace.so.$major"
    INTERFACE_INCLUDE_DIRECTORIES "\${_usertrace_prefix}/include")
endif()

if(NOT TARGET usertrace::usertrace_static)
  add_library(usertrace::usertrace_static STATIC IMPORTED)
  # What Rust's standard library inside libusertrace.a needs (usertrace.pc's Libs.private).
  set_target_properties(usertrace::usertrace_static PROPERTIES
    IMPORTED_LOCATION "\${_usertrace_libdir}/libusertrace.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "C"
    INTERFACE_INCLUDE_DIRECTORIES "\${_usertrace_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;util;rt;m;dl")
endif()

unset(_usertrace_prefix)
unset(_usertrace_libdir)
CMAKE
cat >"$work/usertraceConfigVersion.cmake" <<CMAKE
# Written by ffi-c/install.sh. Semantic versioning: before 1.0 a release is
# compatible with requests of its own minor version; from 1.0 on, of its major.
set(PACKAGE_VERSION "$version")
if(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR EQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" EQUAL 0 AND PACKAGE_FIND_VERSION_COUNT GREATER 1 AND NOT PACKAGE_FIND_VERSION_MINOR EQUAL "$minor")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
# Built for this machine's word size: not for a build of another one.
if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P EQUAL $ptr_bytes)
  set(PACKAGE_VERSION "\${PACKAGE_VERSION} ($((ptr_bytes * 8))-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
CMAKE
install -m 644 "$work/usertraceConfig.cmake" "$work/usertraceConfigVersion.cmake" "$libstage/cmake/usertrace/"
# ld.so finds libraries in ldconfig's folders through its cache: until
# ldconfig runs, a program linked against a new libusertrace.so.0 in
# /usr/local/lib does not start.
if [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
  searched=$(ldconfig -vNX 2>/dev/null | cut -d: -f1 || true)
  if grep -qxF -- "$libdir" <<<"$searched"; then
    ldconfig
    echo "ran ldconfig: $libdir is one of its folders"
  fi
fi
echo "installed libusertrace $version into $stage${destdir:+ (prefix $prefix)}, the libraries into $libstage"
