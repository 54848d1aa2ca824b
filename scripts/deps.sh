#!/usr/bin/env bash
# scripts/deps.sh [build|test] -- install what cgshim needs on a Debian or
# Ubuntu machine: "build" (default) what the shim, the launcher and
# `cgshim report` need, "test" that plus the CPU test suites' own needs
# (cmocka, readelf, groff for the man pages, headless chromium for the HTML
# report's check: about 15 s to install). The one install step: scripts/setup.sh (so demo.sh and
# test.sh) and .ci/run call it. Installs only what dpkg lacks, with sudo when
# not root; a failing apt-get prints its own output. CGSHIM_NO_INSTALL=1 only
# lists what is missing. The CUDA toolkit headers are not a Debian package
# here: their absence is an error with the place looked at. "aarch64": the
# cross build and its emulated tests (cross/aarch64-linux-gnu.txt, issue
# 37): the cross compiler, qemu-user-static and Debian's arm64 libc and
# cmocka (multiarch: adds the arm64 architecture to dpkg first; Debian's
# mirrors carry it, Ubuntu's arm64 packages live on ports.ubuntu.com).
set -euo pipefail
what=${1:-build}
case "$what" in
build) pkgs=(meson ninja-build gcc pkg-config python3 uthash-dev libjansson-dev libdw-dev zlib1g-dev graphviz) ;;
test) pkgs=(meson ninja-build gcc pkg-config python3 uthash-dev libjansson-dev libdw-dev zlib1g-dev graphviz
            libcmocka-dev binutils groff-base chromium clang-format-14 valgrind python3-pytest) ;;
aarch64) pkgs=(meson ninja-build pkg-config python3 uthash-dev gcc-aarch64-linux-gnu libc6-dev-arm64-cross
               qemu-user-static libc6:arm64 libcmocka-dev:arm64) ;;
*) echo "usage: scripts/deps.sh [build|test|aarch64]" >&2; exit 1 ;;
esac

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "deps: CUDA toolkit headers not found: $cuda/include/cuda.h (install the CUDA toolkit, or set CUDA_HOME)" >&2
  exit 1
fi

if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
  echo "deps: not a Debian/Ubuntu system; install the equivalents of: ${pkgs[*]}" >&2
  exit 0
fi
need=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "${CGSHIM_NO_INSTALL:-0}" = 1 ]; then
  echo "deps: missing (CGSHIM_NO_INSTALL=1, not installing): ${need[*]}" >&2
  exit 0
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "deps: missing ${need[*]}; not root and no sudo: install them as root" >&2
    exit 1
  fi
  SUDO=(sudo)
fi
echo "deps: installing ${need[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if [ "$what" = aarch64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${SUDO[@]}" dpkg --add-architecture arm64
fi
if ! "${SUDO[@]}" apt-get update -qq >"$log" 2>&1 ||
   ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >>"$log" 2>&1; then
  cat "$log" >&2
  echo "deps: apt-get failed (output above); needed: ${need[*]}" >&2
  exit 1
fi
