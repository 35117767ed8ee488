#!/usr/bin/env bash
# A long fuzzing campaign: every libFuzzer target (or those named) for a
# fixed time, printing per target the executions, edges (cov:), features,
# exec/s and what was found. A measurement, not a test: it never fails CI.
#
#   ./torchlight build fuzz
#   ./torchlight exec bench/fuzz_campaign.sh [--seconds S] [--jobs J] [TARGET...]
#
# Defaults: 300 s per target, one job. Corpora grow in build/fuzz/work/
# (kept between campaigns); reproducers land in build/fuzz/work/T/artifacts.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=300 jobs=1 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(fuzz/run_fuzzer.sh --list)

total=0 found=0
echo "fuzz campaign: ${seconds} s x ${jobs} job(s) per target, $(date -u +%FT%TZ)"
for t in "${targets[@]}"; do
  out="$(fuzz/run_fuzzer.sh "$t" --seconds "$seconds" --jobs "$jobs")"
  rc=$?
  echo "$out"
  runs="$(echo "$out" | grep -oE ' runs [0-9]+' | head -1 | awk '{print $2}')"
  total=$((total + ${runs:-0}))
  [ $rc = 0 ] || found=$((found + 1))
done
echo "total executions: $total; targets with findings: $found"
