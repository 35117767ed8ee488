#!/usr/bin/env bash
# Load time and run latency of each reference fixture through the CLI, with
# the file loader and mmap side by side. Run: ./torchlight exec bench/fixture_latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/release/bin/torchlight
for f in tests/fixtures/upstream/*.pte; do
  for mode in file mmap; do
    out=$($cli run "$f" --load-mode $mode --repeat 1000 --fill ones)
    load=$(echo "$out" | grep -E '^ *load ' | head -n 1 | sed -E 's/ +/ /g')
    run=$(echo "$out" | grep -E '^ *latency ' | head -n 1 | sed -E 's/ +/ /g')
    printf '%-28s %-5s | %s | %s\n' "$(basename "$f")" "$mode" "$load" "$run"
  done
done
