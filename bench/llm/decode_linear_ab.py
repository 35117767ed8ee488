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

--threads 2 times BM_8da4w_decode_split/threads:2/split:1 instead (the
columns split over a 2-thread pool in the operator's chunks, on the ISA the
process picks, wall time; --isas is ignored). --probe PATH adds the read
bandwidth torchlight_read_bandwidth measures over an array of each shape's
weight bytes (nibbles and scales) at the same thread count, the best of
its runs (one per round), and each binary's GB/s as a share of it.
"""
import argparse
import json
import subprocess
import sys

SHAPES = "288x288,288x768,768x288,288x32000,768x768,768x2048,2048x768,768x32000"


def call_us(path, isa, k, n, reps, min_time, threads):
    """The least time of one call (us): CPU time on one thread, wall time on two."""
    if threads == 1:
        flt, key = f"BM_8da4w_decode_isa/isa:{isa}/K:{k}/N:{n}$", "cpu_time"
    else:
        flt, key = f"BM_8da4w_decode_split/threads:2/split:1/K:{k}/N:{n}/real_time$", "real_time"
    out = subprocess.run([path, f"--benchmark_filter={flt}", f"--benchmark_min_time={min_time}",
                          f"--benchmark_repetitions={reps}", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs or any("error_message" in b for b in runs):
        raise SystemExit(f"{path}: no run of {flt} (does this CPU run isa {isa}?)")
    return min(b[key] for b in runs)


def weight_bytes(k, n):
    """Packed nibbles and float32 scales of group 32, as the bench counts them."""
    return n * k // 2 + 4 * n * (k // 32)


def probe_gb_s(path, nbytes, threads):
    out = subprocess.run([path, str(nbytes), str(threads)], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)["gb_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bins", nargs="+", required=True, help="NAME=PATH, the first is the base")
    ap.add_argument("--isas", default="1,2")
    ap.add_argument("--shapes", default=SHAPES, help="KxN,...")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--min_time", default="0.02s")
    ap.add_argument("--threads", type=int, default=1, choices=(1, 2))
    ap.add_argument("--probe", default=None, help="torchlight_read_bandwidth's path")
    a = ap.parse_args()
    bins = [b.split("=", 1) for b in a.bins]
    isas = a.isas.split(",") if a.threads == 1 else ["pool"]
    shapes = [(int(k), int(n)) for k, n in (s.split("x") for s in a.shapes.split(","))]
    best, probe = {}, {}
    for r in range(a.rounds):
        for isa in isas:
            for k, n in shapes:
                for name, path in (bins if r % 2 == 0 else bins[::-1]):
                    t = call_us(path, isa, k, n, a.reps, a.min_time, a.threads)
                    key = (isa, k, n, name)
                    best[key] = min(best.get(key, float("inf")), t)
                if a.probe:
                    gb = probe_gb_s(a.probe, weight_bytes(k, n), a.threads)
                    probe[(k, n)] = max(probe.get((k, n), 0.0), gb)
        print(f"round {r + 1} of {a.rounds}", file=sys.stderr, flush=True)
    names = [b[0] for b in bins]
    shares = " | probe GB/s | " + " | ".join(f"{x} share" for x in names) if a.probe else ""
    print("| isa | K x N | " + " | ".join(f"{x} us" for x in names) + " | " +
          " | ".join(f"{names[0]} / {x}" for x in names[1:]) + shares + " |")
    print("|" + "---|" * (2 * len(names) + 1 + (1 + len(names) if a.probe else 0)))
    for isa in isas:
        for k, n in shapes:
            ts = [best[(isa, k, n, name)] for name in names]
            row = (f"| {isa} | {k} x {n} | " + " | ".join(f"{t:.2f}" for t in ts) + " | " +
                   " | ".join(f"{ts[0] / t:.2f}x" for t in ts[1:]))
            if a.probe:
                gb = probe[(k, n)]
                row += f" | {gb:.1f} | " + " | ".join(
                    f"{weight_bytes(k, n) / (t * 1e3) / gb:.2f} ({weight_bytes(k, n) / (t * 1e3):.1f} GB/s)"
                    for t in ts)
            print(row + " |")


if __name__ == "__main__":
    main()
