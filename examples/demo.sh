#!/usr/bin/env bash
# The Torchlight demo: runs the reference fixtures through the CLI.
#
# Runs inside the toolchain from the repository root (`./torchlight demo`
# builds build/release first). For each fixture it writes concrete inputs as
# .npy, runs `torchlight run`, and checks the saved output against the same
# formula computed by NumPy. Any failed step ends the demo with status 1.
set -euo pipefail

repo="$(pwd)"
cli="$repo/${TORCHLIGHT_CLI:-build/release/bin/torchlight}"  # Overridable to try another build.
fixtures="$repo/tests/fixtures/upstream"
repeat=20

fail() { echo "demo: error: $*" >&2; exit 1; }
[ -x "$cli" ] || fail "$cli is missing; build it with ./torchlight build"
python3 -c 'import numpy' 2>/dev/null || fail "python3 with numpy is needed to write the inputs"

work="$(mktemp -d "${TMPDIR:-/tmp}/torchlight-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT

indent() { sed 's/^./  &/'; }

# npy FILE JSON: writes a float32 array.
npy() {
  python3 -c 'import json, sys, numpy as np
np.save(sys.argv[1], np.array(json.loads(sys.argv[2]), dtype=np.float32))' "$1" "$2"
}

# expect OUTPUT.npy FORMULA NAME=FILE...: the output must equal FORMULA
# evaluated by NumPy in float32 on the named inputs, exactly.
expect() {
  python3 - "$@" <<'PY'
import sys, numpy as np
out, formula, named = sys.argv[1], sys.argv[2], sys.argv[3:]
env = {name: np.load(path) for name, path in (a.split("=", 1) for a in named)}
want = np.asarray(eval(formula, {"np": np}, env), dtype=np.float32)
got = np.load(out)
def show(a):
    return "[" + ", ".join(show(x) if np.ndim(x) else f"{x:g}" for x in a) + "]"
if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
    print(f"  MISMATCH: {out} holds {got.dtype} {list(got.shape)} {show(got)}; "
          f"NumPy gives {show(want)} for {formula}")
    sys.exit(1)
print(f"  check     NumPy: {formula} = {show(want)}, and {out} matches exactly")
PY
}

# run_fixture FILE TITLE FORMULA NAME=JSON...: runs in a scratch directory
# holding a link to the fixture, the inputs and the outputs, so the command
# shown is exactly the command run.
run_fixture() {
  local model="$1" title="$2" formula="$3" dir="$work/${1%.pte}"
  shift 3
  mkdir -p "$dir"
  ln -s "$fixtures/$model" "$dir/$model"
  cd "$dir"
  echo
  echo "== $model: $title"
  local args=() named=() spec name
  for spec in "$@"; do
    name="${spec%%=*}"
    npy "$name.npy" "${spec#*=}"
    echo "  input     $name = ${spec#*=}  (written to $name.npy)"
    args+=(--input "$name.npy")
    named+=("$name=$name.npy")
  done
  echo "  \$ torchlight run $model ${args[*]} --output-dir out --repeat $repeat"
  "$cli" run "$model" "${args[@]}" --output-dir out --repeat "$repeat" | indent
  expect out/output0.npy "$formula" "${named[@]}"
  cd "$repo"
}

echo "Torchlight demo: the reference fixtures through the CLI"
echo
echo "\$ torchlight inspect tests/fixtures/upstream/add_eh.pte"
"$cli" inspect tests/fixtures/upstream/add_eh.pte | indent

run_fixture add.pte "a + b, two float32[1] inputs" "a + b" a='[1.5]' b='[2.25]'
run_fixture add_eh.pte "x + 1.0, the constant 1.0 kept in a segment" "x + 1" x='[1, 2, 3]'
run_fixture linear_constant_buffer.pte "3*x + 2, constants inline in the program" \
  "3 * x + 2" x='[[1, 2], [3, 4]]'

echo
echo "demo: all 3 fixtures gave the expected outputs"
