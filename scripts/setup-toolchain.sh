#!/usr/bin/env bash
# Installs the Rust → WebAssembly toolchain meguri's core is built with: Debian's rustc and
# cargo (1.63 on bookworm), the wasm32 standard library, lld as the wasm linker and binaryen
# for wasm-opt. Debian's packages, not rustup, because they are what this project's machines
# and CI can reach, and pinning one distribution's compiler is what keeps the committed
# wasm binary byte-reproducible. Idempotent: it installs only what is missing.
set -euo pipefail

want=(rustc cargo libstd-rust-dev-wasm32 lld binaryen)
missing=()
for pkg in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-toolchain: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "setup-toolchain: $(/usr/bin/rustc --version)"
echo "setup-toolchain: $(/usr/bin/cargo --version)"
echo "setup-toolchain: $(wasm-opt --version)"
ld_lld=$(command -v rust-lld || command -v wasm-ld || command -v ld.lld || true)
echo "setup-toolchain: linker ${ld_lld:-none found}"
