"""XNNPACK delegate speed: our exported, XNNPACK-delegated programs in our
runtime against PyTorch eager, 1 and 2 threads, side by side in one run.

    ./torchlight exec python3 bench/xnnpack_compare.py
    ./torchlight exec python3 bench/xnnpack_compare.py --models mobilenet_v2 --runs 50

Models: torchvision mobilenet_v2 and resnet18 (weights=None, seed 0, input
1x3x224x224), float32, plus mobilenet_v2 statically quantized to int8 with
PyTorch's XNNPACKQuantizer (per-channel). Each (model, engine, threads)
triple is timed in its own fresh child process, so neither engine's worker
threads (our pthreadpool, PyTorch's OpenMP team) spin beside the other's,
and the pool is sized before anything runs. Eager runs under
torch.inference_mode with torch.set_num_threads. A round times every triple
once (median of --runs calls after --warmup calls); --rounds rounds run
interleaved and each triple reports its best round, so a burst of load from
other processes on the machine skews no single engine. Also prints, per
model, how many edge operators went to XNNPACK and how many stayed on
portable kernels.

A model name ending in "_f32relu6" (e.g. mobilenet_v2_int8_f32relu6) is
exported the way the exporter did before it lowered pt2e's dq -> relu6 -> q
as a qint8 clamp (a convert to float, a float clamp and a convert back per
relu6), so both lowerings are timed side by side.

Engines: "eager"; "ours" (the delegate as shipped: float convolutions with
one group run on Torchlight's conv2d and int8 depthwise 3x3 ones on its
depthwise_qs8 kernel between XNNPACK stages, backends/xnnpack/stage_plan.h);
"ours-xnn" (the same program with every convolution left to XNNPACK,
TORCHLIGHT_XNNPACK_CONV=xnnpack), so the split's gain is measured side by
side too; "ours-avx512" (the delegate with the GEMM capped at AVX-512,
TORCHLIGHT_GEMM_ISA=avx512: on AMX CPUs, the routing and kernels without
the AMX path); "base" (the same program on another build's runtime module,
--base-ext DIR: a directory holding its _torchlight_runtime*.so, e.g. a copy
of main's, so a change is timed before and after in one run). --engines
picks a subset; "ours" always runs, "eager" unless --no-eager (its
2-thread calls take seconds on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torchlight  # noqa: E402
from torchlight.backends.xnnpack import XnnpackPartitioner, preprocess  # noqa: E402
from torchlight.delegation import call_delegate  # noqa: E402

SHAPE = (1, 3, 224, 224)
ENGINES = ("ours", "base", "ours-avx512", "ours-xnn", "eager")


ROUND_TRIP = "_f32relu6"


def _model(name: str):
    import torchvision
    torch.manual_seed(0)
    name = name.removesuffix(ROUND_TRIP)
    base = name.replace("_int8", "")
    model = getattr(torchvision.models, base)(weights=None).eval()
    x = (torch.randn(SHAPE),)
    if name.endswith("_int8"):
        from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torch.ao.quantization.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer, get_symmetric_quantization_config)
        m = torch.export.export_for_training(model, x).module()
        m = prepare_pt2e(m, XNNPACKQuantizer().set_global(
            get_symmetric_quantization_config(is_per_channel=True)))
        for _ in range(4):
            m(torch.randn(SHAPE))
        model = convert_pt2e(m)
    return model, x


def _counts(edge) -> tuple:
    """(operators in XNNPACK partitions, operators left to portable kernels)."""
    gm = edge.exported_program().graph_module
    delegated = portable = 0
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is call_delegate:
            lowered = getattr(gm, node.args[0].target)
            delegated += sum(1 for n in lowered.original_module.graph.nodes
                             if n.op == "call_function" and "getitem" not in str(n.target))
        elif "getitem" not in str(node.target):
            portable += 1
    return delegated, portable


def export(name: str, directory: Path) -> dict:
    model, x = _model(name)
    ep = torch.export.export(model, x)
    requantize_same = preprocess._Serializer.requantize_same
    if name.endswith(ROUND_TRIP):  # No qint8 clamps: the float round trip per relu6.
        preprocess._Serializer.requantize_same = lambda self, node: None
    try:
        edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        prog = edge.to_executorch()
    finally:
        preprocess._Serializer.requantize_same = requantize_same
    path = directory / f"{name}.pte"
    prog.save(path)
    delegated, portable = _counts(edge)
    return {"path": str(path), "delegated": delegated, "portable": portable,
            "portable_ops": prog.operators()}


def _time(fn, warmup: int, runs: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def child(name: str, directory: str, engine: str, threads: int, warmup: int,
          runs: int) -> dict:
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    model, x = _model(name)  # Seeded: the same weights and input the program was made from.
    if engine == "eager":
        with torch.inference_mode():
            return {"ms": _time(lambda: model(*x), warmup, runs), "threads": threads}
    import torchlight.runtime as rt
    rt.extension().set_num_threads(threads)
    module = rt.load(str(Path(directory) / f"{name}.pte"))
    inputs = list(x)
    ms = _time(lambda: module.run("forward", inputs), warmup, runs)
    with torch.inference_mode():
        expected = model(*x)
    out = module.run("forward", inputs)[0]
    # An all-zero reference (it happens: see README) makes the error meaningless.
    scale = float(expected.abs().max())
    error = float((out - expected).abs().max()) / scale if scale > 0 else float("nan")
    return {"ms": ms, "rel_error": error, "threads": rt.extension().num_threads()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="mobilenet_v2,resnet18,mobilenet_v2_int8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--keep", metavar="DIR",
                   help="export the programs into DIR and keep them (for torchlight profile)")
    p.add_argument("--no-eager", action="store_true",
                   help="leave eager out (its columns and ratios print nan)")
    p.add_argument("--base-ext", metavar="DIR",
                   help="engine 'base': the runtime module in DIR (another build's)")
    p.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        name, directory, engine, threads, warmup, runs = args.child
        print(json.dumps(child(name, directory, engine, int(threads), int(warmup), int(runs))))
        return

    models = args.models.split(",")
    thread_counts = [int(t) for t in args.threads.split(",")]
    engines = [e for e in ENGINES if e in args.engines.split(",") or e in ("ours", "eager")]
    if args.no_eager:
        engines.remove("eager")
    if "base" in engines and not args.base_ext:
        p.error("engine 'base' needs --base-ext DIR")
    best: dict = {}  # (model, engine, threads) -> best round's result
    with tempfile.TemporaryDirectory(prefix="xnnpack-bench-") as scratch:
        directory = args.keep or scratch
        Path(directory).mkdir(parents=True, exist_ok=True)
        counts = {name: export(name, Path(directory)) for name in models}
        for _ in range(args.rounds):
            for name in models:
                for threads in thread_counts:
                    for engine in engines:
                        env = dict(os.environ)
                        env.pop("TORCHLIGHT_XNNPACK_CONV", None)
                        env.pop("TORCHLIGHT_GEMM_ISA", None)
                        env.pop("TORCHLIGHT_PYTHON_EXT_DIR", None)
                        if engine == "base":
                            env["TORCHLIGHT_PYTHON_EXT_DIR"] = str(Path(args.base_ext).resolve())
                        if engine == "ours-xnn":
                            env["TORCHLIGHT_XNNPACK_CONV"] = "xnnpack"
                        if engine == "ours-avx512":
                            env["TORCHLIGHT_GEMM_ISA"] = "avx512"
                        result = subprocess.run(
                            [sys.executable, __file__, "--child", name, directory, engine,
                             str(threads), str(args.warmup), str(args.runs)],
                            capture_output=True, text=True, check=True, env=env)
                        r = json.loads(result.stdout.strip().splitlines()[-1])
                        key = (name, engine, threads)
                        if key not in best or r["ms"] < best[key]["ms"]:
                            best[key] = r

    others = [e for e in engines if e not in ("ours", "eager")]
    header = f"{'model':<20} {'threads':>7} {'eager ms':>9} {'ours ms':>8} {'ours/eager':>10} " \
             f"{'rel err':>8}"
    for e in others:
        header += f" {e + ' ms':>14} {'ours/' + e:>16}"
    print(header)
    for name in models:
        for threads in thread_counts:
            ours = best[(name, "ours", threads)]
            eager = best.get((name, "eager", threads), {"ms": float("nan")})
            line = (f"{name:<20} {threads:>7} {eager['ms']:>9.2f} {ours['ms']:>8.2f} "
                    f"{ours['ms'] / eager['ms']:>10.2f} {ours['rel_error']:>8.1e}")
            for e in others:
                other = best[(name, e, threads)]
                line += f" {other['ms']:>14.2f} {ours['ms'] / other['ms']:>16.2f}"
            print(line)
    print()
    for name in models:
        best_eager = min(best.get((name, "eager", t), {"ms": float("nan")})["ms"]
                         for t in thread_counts)
        best_ours = min(best[(name, "ours", t)]["ms"] for t in thread_counts)
        line = (f"{name}: best ours {best_ours:.2f} ms / best eager {best_eager:.2f} ms = "
                f"{best_ours / best_eager:.2f}x")
        for e in others:
            best_other = min(best[(name, e, t)]["ms"] for t in thread_counts)
            line += f"; {e} {best_other:.2f} ms = {best_other / best_eager:.2f}x"
        print(line)
    print()
    print(f"{'model':<20} {'XNNPACK ops':>11} {'portable ops':>12}  portable kernels")
    for name, info in counts.items():
        print(f"{name:<20} {info['delegated']:>11} {info['portable']:>12}  "
              f"{', '.join(info['portable_ops']) or '-'}")


if __name__ == "__main__":
    main()
