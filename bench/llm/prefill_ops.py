"""Where a Llama prefill goes, per operator and thread count, from ETDump.

    python3 bench/llm/prefill_ops.py --pte stories15m-int8.pte [--cli CLI]
        [--threads 1,2] [--tokens 128] [--repeat 40] [--rounds 1]

Runs `torchlight profile` on a prompt of --tokens tokens (positions 0..T-1)
at each thread count, --rounds times alternating, writing an ETDump, and
prints per operator class the sum over its calls of each call's minimum
over the runs (and over the rounds), at each thread count, and the ratio
between the first and last thread counts: which operators scale and which
run serially. Linears are told apart by their place in the layer (a Llama
block's wq, wk, wv, wo, w1, w3, w2, then the classifier on the last
position); "execute" is Method::execute's minimum, "between ops" what it
holds beyond the operators' minima (dispatch, the tracer, waits).
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from torchlight.devtools.inspector import Inspector  # noqa: E402

# ETDump names each operator call "native_call_" + its name without the namespace.
CALL = "native_call_"
LINEAR_OPS = ("linear_int8.out", "linear_8da4w.out", "linear.out", "mm.out", "addmm.out")
# A Llama block's linears in program order.
LAYER_LINEARS = ("wq/wk/wv/wo", "wq/wk/wv/wo", "wq/wk/wv/wo", "wq/wk/wv/wo", "w1/w3",
                 "w1/w3", "w2")


def op_class(name: str, linear_index: int, linears: int) -> str:
    if linear_index < 0:
        return name
    if linear_index == linears - 1 and linears % 7 == 1:
        return "linear classifier (1 row)"
    return f"linear {LAYER_LINEARS[linear_index % 7]}"


def profile(cli: Path, pte: Path, inputs: list, threads: int, repeat: int,
            etdump: Path) -> dict:
    """Per instruction: (class, min ms); and execute's minimum."""
    run = subprocess.run([str(cli), "profile", str(pte), *sum((["--input", str(i)] for i in inputs), []),
                          "--repeat", str(repeat), "--threads", str(threads), "--etdump", str(etdump)],
                         check=True, capture_output=True, text=True)
    execute = next(line for line in run.stdout.splitlines() if line.startswith("execute"))
    execute_min = float(execute.split("min ")[1].split(" ms")[0])
    block = next(b for b in Inspector(etdump_path=etdump).event_blocks if b.name.startswith("Execute"))
    events = [e for e in block.events
              if e.perf_data is not None and e.instruction_id is not None and e.name.startswith(CALL)]
    for e in events:
        e.name = e.name[len(CALL):]
    linears = sum(e.name in LINEAR_OPS for e in events)
    found = {}
    index = 0
    for e in sorted(events, key=lambda e: e.instruction_id):
        li = -1
        if e.name in LINEAR_OPS:
            li = index
            index += 1
        found[e.instruction_id] = (op_class(e.name, li, linears), e.perf_data.min)
    found["execute"] = ("execute", execute_min)
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pte", type=Path, required=True)
    p.add_argument("--cli", type=Path, default=REPO / "build" / "release" / "bin" / "torchlight")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--repeat", type=int, default=40)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tokens, positions = tmp / "tokens.npy", tmp / "positions.npy"
        np.save(tokens, (np.arange(args.tokens, dtype=np.int64) % 300 + 3).reshape(1, -1))
        np.save(positions, np.arange(args.tokens, dtype=np.int64))
        best = {t: {} for t in threads}  # threads -> instruction -> (class, min)
        for _ in range(args.rounds):
            for t in threads:
                got = profile(args.cli, args.pte, [tokens, positions], t, args.repeat,
                              tmp / "trace.etdp")
                for key, (cls, ms) in got.items():
                    old = best[t].get(key)
                    best[t][key] = (cls, ms if old is None else min(old[1], ms))
    sums = {t: collections.defaultdict(float) for t in threads}
    calls = collections.Counter()
    for t in threads:
        for key, (cls, ms) in best[t].items():
            sums[t][cls] += ms
            if t == threads[0] and key != "execute":
                calls[cls] += 1
    for t in threads:
        ops = sum(v for k, v in sums[t].items() if k != "execute")
        sums[t]["between ops"] = sums[t]["execute"] - ops
        sums[t]["sum of operators"] = ops
    first, last = threads[0], threads[-1]
    head = " | ".join(f"{t} thr ms | share" for t in threads)
    print(f"| operator | calls | {head} | {first}/{last} thr |")
    print("|---|---|" + "---|---|" * len(threads) + "---|")
    order = sorted((k for k in sums[first] if k not in ("execute", "sum of operators", "between ops")),
                   key=lambda k: -sums[first][k])
    for cls in order + ["sum of operators", "between ops", "execute"]:
        cells = " | ".join(f"{sums[t][cls]:.3f} | {100 * sums[t][cls] / sums[t]['execute']:.1f}%"
                           for t in threads)
        ratio = sums[first][cls] / sums[last][cls] if sums[last][cls] > 0 else float("nan")
        print(f"| {cls} | {calls.get(cls, '')} | {cells} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
