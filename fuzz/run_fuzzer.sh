#!/usr/bin/env bash
# Runs the libFuzzer targets of build/fuzz (inside the toolchain; use it as
# ./torchlight fuzz ...).
#
#   run_fuzzer.sh --list
#   run_fuzzer.sh TARGET [--runs N] [--jobs J] [--seconds S] [--seed K] [--work NAME]
#   run_fuzzer.sh TARGET --replay FILE_OR_DIR...
#   run_fuzzer.sh --smoke [--runs N]      every target, N runs each (CI)
#
# A run starts from the checked-in seeds (fuzz/corpus/TARGET) plus what
# earlier runs found (build/fuzz/work/TARGET/corpus, not checked in; --work
# NAME uses build/fuzz/work/NAME instead, e.g. one per TORCHLIGHT_GEMM_ISA
# so campaigns can run side by side), with
# fuzz/dict/*.dict, -rss_limit_mb=2048 and -timeout=1 (TORCHLIGHT_FUZZ_RSS_MB,
# _MALLOC_MB, _TIMEOUT, _MAX_LEN change them). With --jobs J, J
# processes each do N runs. Exit 0 when nothing was found; otherwise 1,
# with the path of every reproducer (crash-, leak-, timeout-, oom-, slow-)
# printed. The last line per target: runs, edges (cov), features, exec/s,
# peak RSS.
set -uo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
bin="$repo/build/fuzz/bin"
work_root="$repo/build/fuzz/work"

# Stacks for UBSan reports too; symbolized when llvm-symbolizer is present
# (else addr2line -f -C -i -e build/fuzz/bin/fuzz_T OFFSET does it).
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

die() { echo "run_fuzzer: error: $*" >&2; exit 2; }

targets() {
  for f in fuzz/fuzz_*.cpp; do basename "$f" .cpp | sed 's/^fuzz_//'; done
}

dict_for() {
  case "$1" in
    program|method_meta) echo fuzz/dict/pte.dict ;;
    llm_metadata) echo fuzz/dict/llm_metadata.dict ;;
    npy) echo fuzz/dict/npy.dict ;;
    tokenizer_*) echo fuzz/dict/tokenizer.dict ;;
    xnnpack_payload) echo fuzz/dict/xnnpack.dict ;;
    bundled_program) echo fuzz/dict/bundled_program.dict ;;
  esac
}

timeout="${TORCHLIGHT_FUZZ_TIMEOUT:-1}"  # Seconds per input.
# Lower limits find what one input makes us allocate (e.g. RSS 1024,
# malloc 512); a longer -max_len lets seeds with large constants mutate.
rss_mb="${TORCHLIGHT_FUZZ_RSS_MB:-2048}"
malloc_mb="${TORCHLIGHT_FUZZ_MALLOC_MB:-$rss_mb}"
max_len="${TORCHLIGHT_FUZZ_MAX_LEN:-32768}"
common_flags=(-rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" -timeout="$timeout"
              -max_len="$max_len" -print_final_stats=1)

# fuzz_one TARGET RUNS JOBS SECONDS SEED [WORK]: one campaign; prints its summary line.
fuzz_one() {
  local target="$1" runs="$2" jobs="$3" seconds="$4" seed="$5"
  local exe="$bin/fuzz_$target" work="$work_root/${6:-$target}"
  [ -x "$exe" ] || die "no fuzzer $exe (./torchlight build fuzz; targets: $(targets | tr '\n' ' '))"
  mkdir -p "$work/corpus" "$work/artifacts"
  rm -f "$work"/artifacts/* "$work"/fuzz-*.log "$work/run.log"
  local flags=("${common_flags[@]}" -runs="$runs" -artifact_prefix="$work/artifacts/"
               -dict="$repo/$(dict_for "$target")")
  [ "$seconds" -gt 0 ] && flags+=(-max_total_time="$seconds")
  [ "$seed" -gt 0 ] && flags+=(-seed="$seed")
  local rc
  if [ "$jobs" -gt 1 ]; then
    (cd "$work" && "$exe" "${flags[@]}" -jobs="$jobs" -workers="$jobs" \
       corpus "$repo/fuzz/corpus/$target" >"$work/run.log" 2>&1)
    rc=$?
    cat "$work"/fuzz-*.log >>"$work/run.log" 2>/dev/null
  else
    (cd "$work" && "$exe" "${flags[@]}" corpus "$repo/fuzz/corpus/$target" >"$work/run.log" 2>&1)
    rc=$?
  fi
  summarize "$target" "$work/run.log"
  # A timeout on a loaded machine (2 cores, several fuzzers) is often the
  # machine: a timeout that does not recur alone is kept but not counted.
  local f
  for f in "$work"/artifacts/timeout-* "$work"/artifacts/slow-unit-*; do
    [ -f "$f" ] || continue
    if "$exe" -timeout="$timeout" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" "$f" >/dev/null 2>&1; then
      mv "$f" "$work/artifacts/unconfirmed-$(basename "$f")"
      echo "$target: $(basename "$f") did not recur when run alone (machine load); kept as unconfirmed-*"
      [ "$rc" = 70 ] && rc=0
    fi
  done
  local found
  found="$(ls "$work"/artifacts/ 2>/dev/null | grep -E '^(crash|leak|timeout|oom|slow-unit)-' || true)"
  if [ -n "$found" ] || [ "$rc" != 0 ]; then
    echo "$target: FOUND (exit $rc); log $work/run.log"
    grep -m 3 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY' \
      "$work/run.log" | sed 's/^/  /'
    for f in $found; do echo "  reproducer: $work/artifacts/$f"; done
    return 1
  fi
  return 0
}

# summarize TARGET LOG: executions (all jobs), edges, features, exec/s,
# peak RSS (the largest job's).
summarize() {
  local target="$1" log="$2"
  local runs cov ft eps rss
  runs="$(grep -hoE 'stat::number_of_executed_units: *[0-9]+' "$log" | awk '{s += $NF} END {print s + 0}')"
  cov="$(grep -hoE ' cov: [0-9]+' "$log" | awk '{if ($2 > m) m = $2} END {print m + 0}')"
  ft="$(grep -hoE ' ft: [0-9]+' "$log" | awk '{if ($2 > m) m = $2} END {print m + 0}')"
  eps="$(grep -hoE 'stat::average_exec_per_sec: *[0-9]+' "$log" | awk '{s += $NF} END {print s + 0}')"
  rss="$(grep -hoE 'stat::peak_rss_mb: *[0-9]+' "$log" | awk '{if ($NF > m) m = $NF} END {print m + 0}')"
  printf '%-24s runs %-10s cov %-6s ft %-7s exec/s %-6s peak RSS %s MB\n' "$target" "$runs" "$cov" \
    "$ft" "$eps" "$rss"
}

replay() {
  local target="$1"; shift
  local exe="$bin/fuzz_$target" files=() status=0
  [ -x "$exe" ] || die "no fuzzer $exe"
  for arg in "$@"; do
    if [ -d "$arg" ]; then
      while IFS= read -r f; do files+=("$f"); done < <(find "$arg" -type f ! -name '.*' | sort)
    else
      files+=("$arg")
    fi
  done
  for f in "${files[@]}"; do
    if "$exe" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" -timeout="$timeout" "$f" \
         >/tmp/run_fuzzer_replay.$$ 2>&1; then
      echo "ok     $f"
    else
      echo "FAILS  $f"
      grep -m 2 -E 'ERROR:|runtime error:|SUMMARY' /tmp/run_fuzzer_replay.$$ | sed 's/^/  /'
      status=1
    fi
  done
  rm -f /tmp/run_fuzzer_replay.$$
  return $status
}

[ $# -gt 0 ] || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
case "$1" in
  --list) targets; exit 0 ;;
  --smoke)
    shift
    runs=20000
    [ "${1:-}" = --runs ] && runs="$2"
    status=0
    # From the seeds alone, with a fixed seed, so every CI run tries the
    # same inputs; 12 s cap per target keeps the whole step near 1.5 min.
    work_root="$repo/build/fuzz/smoke"
    rm -rf "$work_root"
    for t in $(targets); do
      if ! fuzz_one "$t" "$runs" 1 12 1; then
        # A target with open findings (reproducers in crashes/T, each listed in
        # crashes/README.md) is reported but does not fail CI until they are fixed.
        if [ -n "$(ls -A "$repo/fuzz/crashes/$t" 2>/dev/null)" ]; then
          echo "$t: has open findings (fuzz/crashes/$t); not failing the smoke"
        else
          status=1
        fi
      fi
    done
    exit $status
    ;;
esac

target="$1"; shift
targets | grep -x "$target" >/dev/null || die "unknown target '$target' (targets: $(targets | tr '\n' ' '))"
runs=-1 jobs=1 seconds=0 seed=0 work_name="$target"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --work) work_name="$2"; shift 2 ;;
    --replay) shift; replay "$target" "$@"; exit $? ;;
    *) die "unknown option '$1'" ;;
  esac
done
[ "$runs" != -1 ] || [ "$seconds" != 0 ] || die "give --runs N or --seconds S"
fuzz_one "$target" "$runs" "$jobs" "$seconds" "$seed" "$work_name"
