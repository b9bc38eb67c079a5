#!/usr/bin/env bash
# Pack the benchmark's programs with their shared libraries, to run them on
# a machine that has none of our packages (a lent machine with more cores,
# no network, another distribution):
#   bench/bundle.sh DIR [PROGRAM...]
# Default programs: build/bird, build/birdc, bench/bgpblast/bgpblast, and
# Debian's /usr/sbin/bird as `bird2` (the reference). Each PROGRAM may be
# NAME=PATH. DIR/bin/NAME is a wrapper: it runs the program with DIR/lib
# (every library it needs but the C library's) on the library path, or,
# when BUNDLE_GLIBC=1 (a host whose C library is older than ours), through
# our own loader and C library from DIR/glibc. bench/scaling-suite.sh
# takes DIR.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: bench/bundle.sh DIR [NAME=PATH...]}
shift
if [ $# -eq 0 ]; then
  set -- bird="$top/build/bird" birdc="$top/build/birdc" bgpblast="$top/bench/bgpblast/bgpblast"
  [ -x /usr/sbin/bird ] && set -- "$@" bird2=/usr/sbin/bird
fi
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/real" "$dir/lib" "$dir/glibc"
# The C library's own objects: they go with the loader, never on the
# library path of the host's loader.
is_glibc() {
  case $(basename "$1") in
    ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*) return 0 ;;
  esac
  return 1
}
for spec in "$@"; do
  name=${spec%%=*} path=${spec#*=}
  [ "$name" = "$spec" ] && name=$(basename "$path")
  [ -x "$path" ] || { echo "bundle: $path is not a program" >&2; exit 1; }
  cp -L "$path" "$dir/real/$name"
  ldd "$path" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
    if is_glibc "$lib"; then cp -Ln "$lib" "$dir/glibc/"; else cp -Ln "$lib" "$dir/lib/"; fi
  done
  cat >"$dir/bin/$name" <<EOF
#!/bin/sh
d=\$(cd "\$(dirname "\$0")/.." && pwd)
if [ "\${BUNDLE_GLIBC:-0}" = 1 ]; then
  exec "\$d/glibc/$(basename "$(ldd "$path" | awk '/ld-linux/ { print $1 }')")" --library-path "\$d/lib:\$d/glibc" "\$d/real/$name" "\$@"
fi
LD_LIBRARY_PATH="\$d/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/real/$name" "\$@"
EOF
  chmod +x "$dir/bin/$name"
done
du -sh "$dir"
