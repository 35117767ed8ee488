#!/usr/bin/env python3
"""Optimized GEMM vs the portable kernel vs torch, side by side.

Runs torchlight_gemm_bench (Google Benchmark, JSON out), times
torch.nn.functional.linear on the same shapes and thread counts in this
process, and prints one table: microseconds, GFLOP/s, and the ratios
ours/portable (speed-up) and torch/ours (> 1: we are faster).

Every number is the fastest single call (torch timed the same way here):
on a shared machine that is the call least disturbed by other processes,
and both sides get the same treatment. See README.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time

SHAPES = [  # (M, K, N): activations [M, K], weight [N, K]
    (1, 768, 768), (1, 768, 3072), (1, 3072, 768), (1, 768, 50257), (1, 768, 32000),
    (128, 768, 768), (128, 768, 2304), (128, 3072, 768),
]
THREADS = (1, 2)


def run_bench(binary, min_time, repetitions):
    """{benchmark name: fastest single call in us} from the Google Benchmark binary."""
    cmd = [binary, "--benchmark_format=json", f"--benchmark_min_time={min_time}s",
           f"--benchmark_repetitions={repetitions}",
           "--benchmark_filter=^(linear|portable|peak)/"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    times = {}
    peak = None
    for b in json.loads(out[out.index("{"):])["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = b["run_name"].removesuffix("/real_time")
        if name.startswith("peak/"):
            gflops = b["flops"] / 1e9
            peak = gflops if peak is None else max(peak, gflops)
            continue
        times[name] = min(b["min_us"], times.get(name, float("inf")))
    return times, peak


def time_torch(m, k, n, threads, seconds, repetitions):
    import torch
    torch.set_num_threads(threads)  # The BLAS's own pool: see torch_times().
    x = torch.randn(m, k)
    w = torch.randn(n, k)
    b = torch.randn(n)
    out = torch.empty(m, n)
    # addmm(bias, x, w.t()) is what F.linear runs for 2-D input, with out=
    # so torch does not allocate per call either.
    for _ in range(3):
        torch.addmm(b, x, w.t(), out=out)
    best = float("inf")
    for _ in range(repetitions):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            t = time.perf_counter()
            torch.addmm(b, x, w.t(), out=out)
            best = min(best, time.perf_counter() - t)
    return best * 1e6


def torch_times(threads, seconds, repetitions):
    """{shape: us} from a child process whose BLAS and OpenMP pools have
    `threads` threads: OpenBLAS sizes its pool from the environment at load
    and ignores torch.set_num_threads()."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--torch-worker", str(threads), "--min-time", str(seconds),
           "--repetitions", str(repetitions)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return {tuple(int(x) for x in key.split("x")): us for key, us in json.loads(out).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default="build/release/bench/gemm/torchlight_gemm_bench")
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per benchmark run")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--torch-worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        times = {f"{m}x{k}x{n}": time_torch(m, k, n, args.torch_worker, args.min_time,
                                            args.repetitions) for (m, k, n) in SHAPES}
        print(json.dumps(times))
        return

    ours, peak = run_bench(args.bench, args.min_time, args.repetitions)
    torch_us = {} if args.no_torch else {
        t: torch_times(t, args.min_time, args.repetitions) for t in THREADS}
    if peak:
        print(f"AVX-512 FMA peak, one core: {peak:.0f} GFLOP/s ({2 * peak:.0f} for two)")
    head = (f"{'shape MxKxN':<16} {'thr':>3} {'ours us':>10} {'GFLOP/s':>8} {'GB/s':>6} "
            f"{'portable us':>12} {'torch us':>10} {'ours/port':>10} {'torch/ours':>10}")
    print(head)
    print("-" * len(head))
    for (m, k, n) in SHAPES:
        shape = f"{m}x{k}x{n}"
        port = ours.get(f"portable/{shape}/t1")
        for t in THREADS:
            mine = ours.get(f"linear/{shape}/t{t}")
            if mine is None:
                continue
            gflops = 2.0 * m * n * k / mine / 1e3
            gbs = 4.0 * n * k / mine / 1e3
            theirs = torch_us.get(t, {}).get((m, k, n))
            cells = [f"{shape:<16}", f"{t:>3}", f"{mine:>10.1f}", f"{gflops:>8.1f}",
                     f"{gbs:>6.1f}",
                     f"{port:>12.1f}" if port else f"{'-':>12}",
                     f"{theirs:>10.1f}" if theirs else f"{'-':>10}",
                     f"{port / mine:>10.1f}" if port else f"{'-':>10}",
                     f"{theirs / mine:>10.2f}" if theirs else f"{'-':>10}"]
            print(" ".join(cells))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
