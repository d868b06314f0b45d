#!/usr/bin/env bash
# Regenerates include/usertrace.h with the pinned cbindgen (installs it
# into ~/.cargo/bin when missing or of another version), and writes the
# crate's version (the workspace Cargo.toml's) into its USERTRACE_VERSION*
# macros, so that the header and the library cannot name two versions.
#   ffi-c/gen-header.sh            # writes include/usertrace.h
#   ffi-c/gen-header.sh OUT        # writes OUT instead (the drift test)
set -euo pipefail
CBINDGEN_VERSION=0.27.0
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/include/usertrace.h}
if ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked >&2
fi
# The version as cargo resolves it (path+file:///…/ffi-c#usertrace-c@0.1.0).
pkgid=$(cd "$here" && cargo pkgid -p usertrace-c)
version=${pkgid##*[#@]}
# MAJOR.MINOR.PATCH, less any pre-release or build suffix (0.2.0-rc.1).
IFS=. read -r major minor patch <<<"${version%%[-+]*}"
for n in "$major" "$minor" "$patch"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "$0: cannot read MAJOR.MINOR.PATCH from version $version ($pkgid)" >&2; exit 1; }
done
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cbindgen --quiet --config "$here/cbindgen.toml" --crate usertrace-c --output "$tmp" "$here"
sed -e "s/@USERTRACE_VERSION_MAJOR@/$major/" -e "s/@USERTRACE_VERSION_MINOR@/$minor/" \
  -e "s/@USERTRACE_VERSION_PATCH@/$patch/" -e "s/@USERTRACE_VERSION@/$version/" "$tmp" >"$out"
if grep -n '@USERTRACE_[A-Z_]*@' "$out"; then
  echo "$0: placeholders left in $out" >&2
  exit 1
fi
