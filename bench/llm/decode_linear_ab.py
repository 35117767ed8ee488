#!/usr/bin/env python3
"""Two or more builds of torchlight_decode_linear_bench side by side, per shape and ISA.

Each round runs every shape and ISA of BM_8da4w_decode_isa once with each
binary in turn (the order reversed every other round, so neither always runs
first), each run the min of --reps repetitions; the table is the min over
rounds of CPU time (us), then the first binary's time over each other's (above
1: that one is faster). On a loaded machine only these minima say anything.

  ./torchlight exec python3 bench/llm/decode_linear_ab.py \\
      --bins old=build/ab_old/torchlight_decode_linear_bench \\
             new=build/release/bench/llm/torchlight_decode_linear_bench \\
      --isas 1,2 --rounds 8

ISA numbers as in the bench: 0 generic, 1 avx2, 2 avxvnni, 3 avx512vnni.
Only the worktree is visible inside `./torchlight exec`: copy other builds'
binaries under it first.
"""
import argparse
import json
import subprocess
import sys

SHAPES = "288x288,288x768,768x288,288x32000,768x768,768x2048,2048x768,768x32000"


def cpu_us(path, isa, k, n, reps, min_time):
    flt = f"BM_8da4w_decode_isa/isa:{isa}/K:{k}/N:{n}$"
    out = subprocess.run([path, f"--benchmark_filter={flt}", f"--benchmark_min_time={min_time}",
                          f"--benchmark_repetitions={reps}", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs or any("error_message" in b for b in runs):
        raise SystemExit(f"{path}: no run of {flt} (does this CPU run isa {isa}?)")
    return min(b["cpu_time"] for b in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bins", nargs="+", required=True, help="NAME=PATH, the first is the base")
    ap.add_argument("--isas", default="1,2")
    ap.add_argument("--shapes", default=SHAPES, help="KxN,...")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--min_time", default="0.02s")
    a = ap.parse_args()
    bins = [b.split("=", 1) for b in a.bins]
    isas = a.isas.split(",")
    shapes = [s.split("x") for s in a.shapes.split(",")]
    best = {}
    for r in range(a.rounds):
        for isa in isas:
            for k, n in shapes:
                for name, path in (bins if r % 2 == 0 else bins[::-1]):
                    t = cpu_us(path, isa, k, n, a.reps, a.min_time)
                    key = (isa, k, n, name)
                    best[key] = min(best.get(key, float("inf")), t)
        print(f"round {r + 1} of {a.rounds}", file=sys.stderr, flush=True)
    names = [b[0] for b in bins]
    print("| isa | K x N | " + " | ".join(names) + " | " +
          " | ".join(f"{names[0]} / {x}" for x in names[1:]) + " |")
    print("|" + "---|" * (2 * len(names) + 1))
    for isa in isas:
        for k, n in shapes:
            ts = [best[(isa, k, n, name)] for name in names]
            print(f"| {isa} | {k} x {n} | " + " | ".join(f"{t:.2f}" for t in ts) + " | " +
                  " | ".join(f"{ts[0] / t:.2f}x" for t in ts[1:]) + " |")


if __name__ == "__main__":
    main()
