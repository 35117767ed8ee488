#!/usr/bin/env bash
# Checks, on the host, that the product CLI works outside the checkout: from
# a scratch directory, on files there, with relative paths. One PASS or FAIL
# line per check (tools/run_tests.sh counts them into the summary).
#
# usage: host_cli_test.sh LOG
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
log="$1"
scratch="$(mktemp -d /tmp/torchlight-cli-test.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
cp "$repo/tests/fixtures/upstream/add_eh.pte" "$scratch/model.pte"
: >"$log"

check() {  # check NAME EXPECTED_SUBSTRING CMD...: runs CMD in the scratch dir
  local name="$1" want="$2" out
  shift 2
  out="$(cd "$scratch" && "$@" 2>&1)"
  if [[ "$out" == *"$want"* ]]; then
    echo "PASS $name" >>"$log"
  else
    { echo "FAIL $name: wanted '$want' in:"; echo "$out" | tail -n 5; } >>"$log"
  fi
}

# add_eh.pte computes x + 1; ones in, twos out, and the .npy lands where asked.
check "run a relative path outside the checkout" "output 0  float32 [3] = [2, 2, 2]" \
  "$repo/torchlight" run model.pte --fill ones --output-dir out
check "outputs written relative to the caller" "out/output0.npy" ls out/output0.npy
check "inspect outside the checkout" "model.pte:" "$repo/torchlight" inspect model.pte
check "profile outside the checkout" "aten::add.out" "$repo/torchlight" profile model.pte --repeat 2
check "run --etdump writes the trace where asked" "ED00" \
  bash -c "'$repo/torchlight' run model.pte --etdump trace.etdp >/dev/null && head -c 12 trace.etdp | tail -c 4"
check "missing file named" "cannot open 'missing.pte'" "$repo/torchlight" run missing.pte
cat "$log"
! grep -q '^FAIL' "$log"
