#!/usr/bin/env bash
# System libraries for the CHOLMOD peer (scikit-sparse 0.4.16 builds against SuiteSparse 5.x,
# Debian 12's libsuitesparse-dev) and OpenBLAS. Installs only what is missing; needs root (or
# sudo) and Debian's package index. Fails with a clear message otherwise.
set -euo pipefail
pkgs=(libsuitesparse-dev libopenblas-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
    echo "error: need ${missing[*]} (SuiteSparse headers for scikit-sparse / CHOLMOD) and no apt-get here;" \
         "install them with your package manager and re-run" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: installing ${missing[*]} needs root or sudo" >&2; exit 1; }
    SUDO="sudo"
fi
echo "installing ${missing[*]} (apt-get)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
