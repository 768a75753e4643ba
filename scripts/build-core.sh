#!/usr/bin/env bash
# Builds core-rs for wasm32-unknown-unknown with Debian's rustc and writes the optimized,
# byte-reproducible wasm/meguri_core.wasm. Run scripts/setup-toolchain.sh first.
#
# Reproducibility: the checkout path is remapped to /src (rustc embeds source paths in panic
# locations), the target directory lives inside the crate, no timestamps are embedded, and
# wasm-opt strips the producers section and debug info. Two checkouts at different paths give
# identical bytes; CI rebuilds and requires equality with the committed binary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
crate="$root/core-rs"
out="$root/wasm/meguri_core.wasm"
rustc_bin=${MEGURI_RUSTC:-/usr/bin/rustc}
cargo_bin=${MEGURI_CARGO:-/usr/bin/cargo}
# Features every engine we target (Node 20, current browsers) has had for years.
features="+simd128,+bulk-memory,+mutable-globals,+nontrapping-fptoint"

for tool in "$rustc_bin" "$cargo_bin" wasm-opt; do
  command -v "$tool" >/dev/null || { echo "build-core: $tool not found; run scripts/setup-toolchain.sh" >&2; exit 1; }
done

export RUSTC="$rustc_bin"
export CARGO_TARGET_DIR="$crate/target"
export RUSTFLAGS="--remap-path-prefix=$crate=/src --remap-path-prefix=$HOME=/home -C target-feature=$features -C link-arg=--no-entry -C link-arg=-zstack-size=1048576"
export SOURCE_DATE_EPOCH=0
unset CARGO_BUILD_RUSTFLAGS CARGO_ENCODED_RUSTFLAGS || true

"$cargo_bin" build --quiet --release --locked --offline --target wasm32-unknown-unknown \
  --manifest-path "$crate/Cargo.toml"

raw="$crate/target/wasm32-unknown-unknown/release/meguri_core.wasm"
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --strip-debug --strip-producers "$raw" -o "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "build-core: wrote wasm/meguri_core.wasm ($(wc -c <"$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
