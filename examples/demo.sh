#!/usr/bin/env bash
# The Torchlight demo, the README's main job: export the small GPT the
# project trained on the Brown corpus (examples/llm/models/brown_gpt_bpe.pt,
# with its BPE tokenizer brown_gpt_bpe.tokenizer.json) to a .pte program, then
# generate text from it in C++ with `torchlight llm`, streaming tokens and
# printing the runner's stats. The exporter puts the tokenizer.json beside
# the .pte and names it in the program's get_tokenizer(), so the runner finds
# it without --tokenizer.
#
# Runs inside the toolchain from the repository root (`./torchlight demo`
# provisions it and builds build/release first). Extra arguments go to
# `torchlight llm`, e.g. `./torchlight demo --prompt "She said" --seed 3`.
set -euo pipefail

repo="$(pwd)"
cli="$repo/${TORCHLIGHT_CLI:-build/release/bin/torchlight}"  # Overridable to try another build.
checkpoint="$repo/examples/llm/models/brown_gpt_bpe.pt"
tokenizer="$repo/examples/llm/models/brown_gpt_bpe.tokenizer.json"
pte="$repo/build/demo/brown_gpt_bpe.pte"

fail() { echo "demo: error: $*" >&2; exit 1; }
[ -x "$cli" ] || fail "$cli is missing; build it with ./torchlight build"
[ -f "$checkpoint" ] || fail "$checkpoint is missing (examples/llm/README.md says how to train it)"
[ -f "$tokenizer" ] || fail "$tokenizer is missing (train_gpt.py writes it beside the checkpoint)"

# Re-export only when the checkpoint or the exporter changed.
if [ ! -f "$pte" ] || [ -n "$(find "$checkpoint" "$tokenizer" "$repo/python/torchlight" "$repo/examples/llm/export_gpt.py" \
      -newer "$pte" -print -quit)" ]; then
  echo "demo: exporting $checkpoint -> $pte"
  python3 "$repo/examples/llm/export_gpt.py" --checkpoint "$checkpoint" --pte "$pte" \
    --custom-op --tokens 0 --prompt "" >/dev/null
fi

echo "demo: generating from C++ (torchlight llm, 2 threads)"
echo
"$cli" llm --model "$pte" --prompt "The jury said" --max-new-tokens 200 \
  --temperature 0.7 --top-p 0.9 --seed 7 --threads 2 "$@"
