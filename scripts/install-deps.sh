#!/usr/bin/env bash
# Installs the Debian 12 packages meshsim needs, only those that are missing.
# Idempotent and quiet when everything is already there. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost-graph-dev libboost-program-options-dev
  libabsl-dev libhdf5-dev hdf5-tools libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-h5py python3-matplotlib python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq >/dev/null
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
