#!/usr/bin/env bash
# Builds the guest kernel that harness/in-guest boots when the host kernel
# lacks user_events: Debian's linux-source-6.12, x86_64_defconfig with
# user-events.config merged over it. About an hour on 2 cores, so the result
# is cached and reused.
#   build.sh               build unless cached; prints the bzImage path
#   build.sh --print-path  prints where the cached bzImage lives; builds nothing
# USERTRACE_KERNEL_CACHE overrides the cache folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${USERTRACE_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/usertrace/kernel}
if [ "${1:-}" = --print-path ] || [ -f "$out/bzImage" ]; then
  echo "$out/bzImage"
  exit 0
fi
# Callers read the path from stdout, so the build's chatter goes to stderr.
exec 3>&1 1>&2
export DEBIAN_FRONTEND=noninteractive
need=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils)
dpkg -s "${need[@]}" >/dev/null 2>&1 || { apt-get update -qq; apt-get install -y -qq "${need[@]}"; }
# The tree lives in the cache so an interrupted build resumes where it stopped;
# extraction goes through a scratch folder so a half-unpacked tree is never used.
work=$out/build
src=$work/linux-source-6.12
if [ ! -d "$src" ]; then
  rm -rf "$work/unpack" && mkdir -p "$work/unpack"
  tar -C "$work/unpack" -xf /usr/src/linux-source-6.12.tar.xz
  mv "$work/unpack/linux-source-6.12" "$src" && rmdir "$work/unpack"
fi
cd "$src"
make -s x86_64_defconfig
scripts/kconfig/merge_config.sh -m .config "$here/user-events.config" >/dev/null
make -s olddefconfig
grep -q '^CONFIG_USER_EVENTS=y' .config || { echo "CONFIG_USER_EVENTS did not survive olddefconfig" >&2; exit 1; }
make -j"$(nproc)" bzImage
release=$(make -s kernelrelease)
# Copy then rename: a bzImage in the cache must be complete, since its mere
# presence skips the build next time.
cp .config "$out/config"
cp arch/x86/boot/bzImage "$out/bzImage.tmp" && mv "$out/bzImage.tmp" "$out/bzImage"
# Only the bzImage is reused; the tree is several GB.
cd / && rm -rf "$work"
echo "built $out/bzImage ($release)"
echo "$out/bzImage" >&3
