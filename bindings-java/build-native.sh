#!/usr/bin/env bash
# Builds the JNI library with cargo and copies it to
# $1/dev/usertrace/native/<os>-<arch>/, where the jar carries it.
# Maven runs this (process-resources); CARGO_TARGET_DIR is honoured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-native.sh CLASSES_DIR}
target=${CARGO_TARGET_DIR:-$here/../target}
case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) arch=$(uname -m) ;;
esac
os=$(uname -s | tr '[:upper:]' '[:lower:]')
(cd "$here" && CARGO_TARGET_DIR=$target cargo build --quiet --release -p usertrace-java)
mkdir -p "$out/dev/usertrace/native/$os-$arch"
cp "$target/release/libusertrace_jni.so" "$out/dev/usertrace/native/$os-$arch/libusertrace_jni.so"
