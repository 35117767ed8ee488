#!/usr/bin/env bash
# Builds llama.cpp's CPU tools (llama-bench, llama-quantize,
# llama-convert-llama2c-to-ggml) from the source the npm package
# node-llama-cpp ships (a git bundle of a llama.cpp release), inside the
# toolchain root with its compiler, native to this CPU. Cached: the source by
# package version, the build by version and CPU flags, so a machine change
# rebuilds and a second run is instant.
#
# usage: bench/llm/build_llamacpp.sh     prints the tools' directory as the
#                                        toolchain root sees it
set -euo pipefail

version="${NODE_LLAMA_CPP_VERSION:-3.22.1}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
root="${TORCHLIGHT_TOOLCHAIN_DIR:-/var/cache/torchlight/trixie-root}"
jobs="${TORCHLIGHT_JOBS:-$(nproc 2>/dev/null || echo 2)}"
log() { echo "[llama.cpp] $*" >&2; }

"$repo/tools/toolchain/provision.sh" >&2
# Inside the root, so the toolchain's compiler can build it; the root itself
# lives under /var/cache/torchlight.
inner="/var/cache/llamacpp/node-llama-cpp-$version"
src="$root$inner/src"
if [ ! -f "$src/CMakeLists.txt" ]; then
  command -v npm >/dev/null || { log "error: npm is needed to fetch node-llama-cpp"; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  log "fetching node-llama-cpp@$version from npm"
  (cd "$tmp" && npm pack --silent "node-llama-cpp@$version" >/dev/null)
  tar -xzf "$tmp"/node-llama-cpp-*.tgz -C "$tmp" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
  log "llama.cpp $(tr -d '\n ' <"$tmp/package/llama/llama.cpp.info.json")"
  mkdir -p "$(dirname "$src")"
  rm -rf "$src.partial"
  git clone --quiet "$tmp/package/llama/gitRelease.bundle" "$src.partial" 2>/dev/null
  cp "$tmp/package/llama/llama.cpp.info.json" "$src.partial/"
  mv "$src.partial" "$src"
fi

# One build per CPU feature set: GGML_NATIVE tunes for the machine.
flags_hash="$(grep -m1 '^flags' /proc/cpuinfo | md5sum | cut -c1-8)"
build="$inner/build-$flags_hash"
if [ ! -x "$root$build/bin/llama-bench" ] || [ ! -x "$root$build/bin/llama-convert-llama2c-to-ggml" ] ||
   [ ! -x "$root$build/bin/llama-quantize" ]; then
  log "building llama-bench, llama-quantize, llama-convert-llama2c-to-ggml in $root$build (a few minutes)"
  "$repo/tools/toolchain/run_in_root.sh" "$repo" bash -c "
    set -e
    cmake -G Ninja -S '$inner/src' -B '$build' -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
      -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build '$build' -j $jobs --target llama-bench llama-quantize llama-convert-llama2c-to-ggml >/dev/null
  " >&2
fi
echo "$build/bin"
