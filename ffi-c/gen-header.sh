#!/usr/bin/env bash
# Regenerates include/usertrace.h with the pinned cbindgen (installs it
# into ~/.cargo/bin when missing or of another version).
#   ffi-c/gen-header.sh            # writes include/usertrace.h
#   ffi-c/gen-header.sh OUT        # writes OUT instead (the drift test)
set -euo pipefail
CBINDGEN_VERSION=0.27.0
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/include/usertrace.h}
if ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked >&2
fi
cbindgen --quiet --config "$here/cbindgen.toml" --crate usertrace-c --output "$out" "$here"
