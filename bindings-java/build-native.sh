#!/usr/bin/env bash
# Builds a JNI library with cargo and copies it where a jar carries it:
#   build-native.sh CLASSES_DIR          the binding's, libusertrace_jni.so (crate bindings-java),
#                                        to CLASSES_DIR/dev/usertrace/native/<os>-<arch>/
#   build-native.sh CLASSES_DIR bench    the benchmarks' own, libusertrace_bench_jni.so (crate
#                                        bindings-java/bench-native), to
#                                        CLASSES_DIR/dev/usertrace/bench/native/<os>-<arch>/
# Maven runs this (process-resources); CARGO_TARGET_DIR is honoured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-native.sh CLASSES_DIR [bench]}
case "${2:-}" in
  '') package=usertrace-java lib=usertrace_jni dir=dev/usertrace/native ;;
  bench) package=usertrace-java-bench lib=usertrace_bench_jni dir=dev/usertrace/bench/native ;;
  *) echo "build-native.sh: unknown library '$2' (none, or bench)" >&2; exit 2 ;;
esac
target=${CARGO_TARGET_DIR:-$here/../target}
case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) arch=$(uname -m) ;;
esac
os=$(uname -s | tr '[:upper:]' '[:lower:]')
# Not --quiet: a first build takes minutes, and cargo's lines (on stderr,
# which Maven shows) say what it is doing meanwhile.
echo "build-native.sh: cargo build --release -p $package" >&2
(cd "$here" && CARGO_TARGET_DIR=$target cargo build --release -p "$package")
mkdir -p "$out/$dir/$os-$arch"
cp "$target/release/lib$lib.so" "$out/$dir/$os-$arch/lib$lib.so"
