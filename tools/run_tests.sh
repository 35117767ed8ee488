#!/usr/bin/env bash
# Runs inside the toolchain after the builds: the gtest suites plain and
# under ASan/UBSan, a short smoke run of every fuzzer (when build/fuzz has
# them), then the Python tests. Ends with one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs="${TORCHLIGHT_JOBS:-$(nproc)}"
passed=0
failed=0

count() {  # count LOG: adds ctest's totals from its summary line
  local line total fails
  line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n 1)"
  [ -n "$line" ] || { failed=$((failed + 1)); return; }
  total="$(echo "$line" | sed -E 's/.* out of ([0-9]+).*/\1/')"
  fails="$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed.*/\1/')"
  passed=$((passed + total - fails))
  failed=$((failed + fails))
}

status=0
for config in release asan; do
  echo "=== ctest ($config) ==="
  log="build/$config/ctest.log"
  # halt_on_error makes a sanitizer report fail the test instead of scrolling by.
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "build/$config" -j "$jobs" --output-on-failure "$@" 2>&1 | tee "$log" |
    { grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true; }
  # ctest's own status: with pipefail, a `|| true` after the whole pipeline
  # would run on ctest's failure and leave PIPESTATUS as true's 0.
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  count "$log"
done

if [ -d build/fuzz/bin ] && [ $# -eq 0 ]; then
  # A fixed number of runs per target from a fixed seed (about a minute in
  # all); the long campaigns are bench/fuzz_campaign.sh.
  echo "=== fuzz smoke ==="
  log="build/fuzz/smoke.log"
  fuzz/run_fuzzer.sh --smoke 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  # A finding counts as a failure unless its target has open findings on
  # record (fuzz/crashes; run_fuzzer.sh says so and does not fail).
  found=$(( $(grep -cE ': FOUND' "$log") - $(grep -cE ': has open findings' "$log") ))
  passed=$((passed + $(grep -cE '^[a-z_0-9]+ +runs ' "$log") - found))
  failed=$((failed + found))
fi

if [ -d python/tests ] && [ $# -eq 0 ]; then
  echo "=== pytest ==="
  log="build/release/pytest.log"
  # One worker per core when pytest-xdist is there (the toolchain installs
  # it): most tests export with torch on one thread. loadfile keeps each
  # file's tests, and its module fixtures (builds, exports), in one worker.
  parallel=()
  if [ "$jobs" -gt 1 ] && python3 -c 'import xdist' 2>/dev/null; then
    parallel=(-n "$jobs" --dist loadfile)
  fi
  python3 -m pytest -q "${parallel[@]}" python/tests 2>&1 | tee "$log"
  rc="${PIPESTATUS[0]}"
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then status=1; fi
  p="$(grep -oE '[0-9]+ passed' "$log" | tail -n 1 | grep -oE '[0-9]+' || echo 0)"
  f="$(grep -oE '[0-9]+ failed' "$log" | tail -n 1 | grep -oE '[0-9]+' || echo 0)"
  passed=$((passed + p)); failed=$((failed + f))
fi

# Written on the host by tools/host_cli_test.sh before this script ran.
if [ -f build/release/host_cli.log ]; then
  echo "=== CLI outside the checkout (host) ==="
  cat build/release/host_cli.log
  p="$(grep -c '^PASS' build/release/host_cli.log)"
  f="$(grep -c '^FAIL' build/release/host_cli.log)"
  passed=$((passed + p)); failed=$((failed + f))
  [ "$f" = 0 ] || status=1
fi

echo "tests: $passed passed, $failed failed"
exit $status
