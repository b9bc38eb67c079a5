#!/usr/bin/env bash
# Install what building and testing need on Debian 12 (idempotent).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
PKGS=(build-essential autoconf automake libtool pkg-config bison flex
      liburcu-dev libbsd-dev libreadline-dev libncurses-dev libcmocka-dev
      python3 python3-pytest python3-matplotlib bird2 gobgpd exabgp bgpdump
      clang libclang-rt-14-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's bird2 package starts its own daemon; we only want its binaries
# (as a reference and as an independent client), so keep it stopped.
# The same for GoBGP and ExaBGP, which the BGP interop tests start themselves.
for svc in bird gobgpd exabgp; do
  $SUDO systemctl stop "$svc" >/dev/null 2>&1 || true
  $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
done
