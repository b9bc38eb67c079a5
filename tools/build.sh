#!/usr/bin/env bash
# Build into a directory: tools/build.sh DIR [configure options...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q "$@"
make -j"$(nproc)" >/dev/null
