#!/usr/bin/env python3
"""Two builds of torchlight_quantized_bench side by side on one filter, alternating.

Each round runs the filter once with each binary (the order reversed every
other round); per benchmark the table gives each binary's min and median CPU
time (us) over the rounds and the first binary's time over the second's
(above 1: the second is faster). CPU time: read only 1-thread cases on a
shared machine.

  cp /work/main/build/release/bench/quantized/torchlight_quantized_bench scratch/quantized_bench_main
  ./torchlight exec python3 bench/quantized/bench_ab.py \\
      --bins main=scratch/quantized_bench_main new=build/release/bench/quantized/torchlight_quantized_bench \\
      --filter 'BM_shape_8da4w/.*/1/real_time' --rounds 5

Only the worktree is visible inside `./torchlight exec`: copy other builds'
binaries under it first.
"""
import argparse
import json
import statistics
import subprocess


def run(path, flt, min_time):
    out = subprocess.run([path, f"--benchmark_filter={flt}", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    return {bm["name"]: bm["cpu_time"] for bm in json.loads(out)["benchmarks"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bins", nargs=2, required=True, metavar="NAME=PATH")
    parser.add_argument("--filter", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", default="0.2s")
    args = parser.parse_args()
    bins = dict(b.split("=", 1) for b in args.bins)
    names = list(bins)
    times = {name: {} for name in names}
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            for bm, t in run(bins[name], args.filter, args.min_time).items():
                times[name].setdefault(bm, []).append(t)
    a, b = names
    print(f"| benchmark | {a} min / median us | {b} min / median us | {a} / {b}: mins | medians |")
    print("|---|---|---|---|---|")
    for bm, ta in times[a].items():
        tb = times[b].get(bm)
        if not tb:
            continue
        print(f"| {bm} | {min(ta):.0f} / {statistics.median(ta):.0f} | {min(tb):.0f} / {statistics.median(tb):.0f} "
              f"| {min(ta) / min(tb):.2f}x | {statistics.median(ta) / statistics.median(tb):.2f}x |")


if __name__ == "__main__":
    main()
