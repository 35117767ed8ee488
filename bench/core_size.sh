#!/usr/bin/env bash
# Stripped size of the core runtime (Program + Method + file loader, no
# kernels), built -Os in its own build folder, next to a baseline program
# and the reference figure. Run: ./torchlight exec bench/core_size.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/size
[ -f $dir/build.ninja ] || cmake -G Ninja -S . -B $dir -DCMAKE_BUILD_TYPE=MinSizeRel \
  -DTORCHLIGHT_BUILD_TESTS=OFF -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" \
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,--gc-sections" >/dev/null
cmake --build $dir --target torchlight_size_probe torchlight_size_baseline >/dev/null
for t in torchlight_size_probe torchlight_size_baseline; do
  strip -o $dir/$t.stripped $dir/bench/$t
done
probe=$(stat -c %s $dir/torchlight_size_probe.stripped)
base=$(stat -c %s $dir/torchlight_size_baseline.stripped)
printf '%-40s %8d bytes\n' "size probe (stripped, -Os)" "$probe"
printf '%-40s %8d bytes\n' "baseline program (stripped, -Os)" "$base"
awk -v d=$((probe - base)) 'BEGIN { printf "%-40s %8d bytes (%.1f KB)\n", "core runtime = probe - baseline", d, d / 1024 }' 
echo "reference (ExecuTorch CI, whole probe stripped): 44-52 KB"
