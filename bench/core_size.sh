#!/usr/bin/env bash
# Stripped size of the core runtime (Program + Method + file loader, no
# kernels): the size probe, next to a baseline program and the reference
# figure, in two builds:
#   messages    the default runtime (every error a full sentence)
#   codes only  -DTORCHLIGHT_ERROR_MESSAGES=OFF (runtime/core/status.h)
# Both -Os with what a size-conscious embedded build uses: function/data
# sections collected by the linker, no unwind tables (the runtime has no
# exceptions), code and data in one segment, no build-id note.
# Run: ./torchlight exec bench/core_size.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cxx_flags="-ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables"
link_flags="-Wl,--gc-sections -Wl,-z,noseparate-code -Wl,--build-id=none"

measure() {  # measure DIR LABEL MESSAGES
  local dir=$1 label=$2 messages=$3
  cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=MinSizeRel -DTORCHLIGHT_BUILD_TESTS=OFF \
    -DTORCHLIGHT_ERROR_MESSAGES="$messages" -DCMAKE_CXX_FLAGS="$cxx_flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$link_flags" >/dev/null
  cmake --build "$dir" --target torchlight_size_probe torchlight_size_baseline >/dev/null
  for t in torchlight_size_probe torchlight_size_baseline; do
    strip -o "$dir/$t.stripped" "$dir/bench/$t"
  done
  local probe base
  probe=$(stat -c %s "$dir/torchlight_size_probe.stripped")
  base=$(stat -c %s "$dir/torchlight_size_baseline.stripped")
  echo "== $label"
  awk -v p="$probe" -v b="$base" 'BEGIN {
    printf "  %-38s %8d bytes (%.1f KB)\n", "size probe (stripped, -Os)", p, p / 1024
    printf "  %-38s %8d bytes\n", "baseline program (stripped, -Os)", b
    printf "  %-38s %8d bytes (%.1f KB)\n", "core runtime = probe - baseline", p - b, (p - b) / 1024
  }'
}

measure build/size "messages (default)" ON
measure build/size-codes "codes only (TORCHLIGHT_ERROR_MESSAGES=OFF)" OFF
echo "reference (ExecuTorch CI, whole probe stripped): 44-52 KB"
