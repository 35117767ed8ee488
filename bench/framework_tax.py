"""Framework tax: nanoseconds per instruction on chains of tiny operators,
where the kernels' arithmetic is negligible and what remains is the runtime's
own cost per call (dispatch, argument checks, Status handling).

Exports four 200-instruction chains on one float (or [4] floats) and runs
each through `torchlight run --repeat`, for our CLI and, with --baseline, a
second CLI (an older build) side by side in the same run, interleaved.

    ./torchlight exec python3 bench/framework_tax.py [--baseline OTHER/bin/torchlight]
    ./torchlight exec python3 bench/framework_tax.py --etdump --repeat 1000

With --etdump, each chain also runs with an ETDump tracer attached
(`run --etdump`, every run recorded), so the row "etdump" minus "ours" is
the tracer's cost per instruction. Every recorded run is kept in memory, so
keep --repeat small (1000 runs of 200 instructions is about 60 MB).

Prints load time (program + method) and per-instruction time from the
minimum and median run latency, and the ratios to the baseline.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import torchlight  # noqa: E402

N = 200


class SubChain(torch.nn.Module):
    """200 x (x - 1.0): the issue's chain (sub.out against a constant)."""

    def forward(self, x):
        for _ in range(N):
            x = x - 1.0
        return x


class SubMulChain(torch.nn.Module):
    """100 x (sub, mul) of two inputs: tensor-tensor arithmetic."""

    def forward(self, x, y):
        for _ in range(N // 2):
            x = torch.mul(torch.sub(x, y), y)
        return x


class ClampChain(torch.nn.Module):
    """200 x clamp with Scalar bounds (clamp.out and its prepared dense path)."""

    def forward(self, x):
        for i in range(N):
            x = torch.clamp(x, min=-float(i), max=float(i + 1))
        return x


class ReluChain(torch.nn.Module):
    """200 x relu: the unary family (unary_ops.h and its prepared dense path)."""

    def forward(self, x):
        for _ in range(N):
            x = torch.relu(x)
        return x


class GeluChain(torch.nn.Module):
    """200 x gelu: an activation with an argument (approximate), prepared at load."""

    def forward(self, x):
        for _ in range(N):
            x = torch.nn.functional.gelu(x)
        return x


class LeakyReluChain(torch.nn.Module):
    """200 x leaky_relu: an activation with a Scalar argument."""

    def forward(self, x):
        for _ in range(N):
            x = torch.nn.functional.leaky_relu(x, 0.1)
        return x


class PermuteChain(torch.nn.Module):
    """200 x permute(1, 0) of a [2, 2]: the data-movement family (permute_copy)."""

    def forward(self, x):
        for _ in range(N):
            x = x.permute(1, 0)
        return x


class CatSliceChain(torch.nn.Module):
    """100 x (cat, slice) of a [2, 2]: cat's memcpy blocks and a contiguous slice."""

    def forward(self, x):
        for _ in range(N // 2):
            x = torch.cat([x, x])[:2]
        return x


class SelectExpandChain(torch.nn.Module):
    """100 x (select, expand) of a [2, 2]: a row selected, then broadcast back."""

    def forward(self, x):
        for _ in range(N // 2):
            x = x[1].expand(2, 2)
        return x


class SliceExpandChain(torch.nn.Module):
    """100 x (slice, expand) of a [2, 2]: a row sliced, then broadcast back."""

    def forward(self, x):
        for _ in range(N // 2):
            x = x[1:].expand(2, 2)
        return x


class ConvertChain(torch.nn.Module):
    """100 x (to float64, to float32) of a [4]: dtype-changing copies."""

    def forward(self, x):
        for _ in range(N // 2):
            x = x.to(torch.float64).to(torch.float32)
        return x


class SumChain(torch.nn.Module):
    """200 x sum(dim=-1, keepdim=True) of a [2, 4]: a reduction (sum.IntList_out)."""

    def forward(self, x):
        for _ in range(N):
            x = x.sum(dim=-1, keepdim=True)
        return x


class IndexChain(torch.nn.Module):
    """200 x x[order] of a [4, 2] by a constant int64 index: index.Tensor_out."""

    def __init__(self):
        super().__init__()
        self.register_buffer("order", torch.tensor([3, 1, 0, 2]))

    def forward(self, x):
        for _ in range(N):
            x = x[self.order]
        return x


class MeanGapsChain(torch.nn.Module):
    """100 x x.mean(dim=(0, 2), keepdim=True).expand(2, 2, 2): mean.out over
    non-adjacent dims, then expand_copy."""

    def forward(self, x):
        for _ in range(N // 2):
            x = x.mean(dim=(0, 2), keepdim=True).expand(2, 2, 2)
        return x


class MaskChain(torch.nn.Module):
    """100 x (x[mask], cat back to [4, 2]) with a constant bool mask: index.Tensor_out
    with a mask, then cat."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tensor([True, False, True, False]))

    def forward(self, x):
        for _ in range(N // 2):
            x = torch.cat([x[self.mask], x[:2]])
        return x


class FlipChain(torch.nn.Module):
    """200 x flip(0) of a [2, 2]: flip.out, prepared at load (dims checked once)."""

    def forward(self, x):
        for _ in range(N):
            x = torch.flip(x, [0])
        return x


class TrilChain(torch.nn.Module):
    """200 x tril of a [2, 2]: tril.out, prepared at load (dtype and rank checked once)."""

    def forward(self, x):
        for _ in range(N):
            x = torch.tril(x)
        return x


class IndexSelectChain(torch.nn.Module):
    """200 x index_select(x, 0, order) of a [2, 2] by a constant int64 index:
    index_select.out, prepared at load (dim, index rank and dtypes checked once)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("order", torch.tensor([1, 0]))

    def forward(self, x):
        for _ in range(N):
            x = torch.index_select(x, 0, self.order)
        return x


CHAINS = {
    "sub x200 [1]": (SubChain(), (torch.ones(1),)),
    "sub+mul x100 [4]": (SubMulChain(), (torch.ones(4), torch.ones(4))),
    "clamp x200 [1]": (ClampChain(), (torch.ones(1),)),
    "relu x200 [4]": (ReluChain(), (torch.ones(4),)),
    "gelu x200 [4]": (GeluChain(), (torch.ones(4),)),
    "leaky_relu x200 [4]": (LeakyReluChain(), (torch.ones(4),)),
    "permute x200 [2,2]": (PermuteChain(), (torch.ones(2, 2),)),
    "cat+slice x100 [2,2]": (CatSliceChain(), (torch.ones(2, 2),)),
    "select+expand x100": (SelectExpandChain(), (torch.ones(2, 2),)),
    "slice+expand x100": (SliceExpandChain(), (torch.ones(2, 2),)),
    "to f64+f32 x100 [4]": (ConvertChain(), (torch.ones(4),)),
    "sum(-1) x200 [2,4]": (SumChain(), (torch.ones(2, 4),)),
    "index x200 [4,2]": (IndexChain(), (torch.ones(4, 2),)),
    "mean(0,2)+expand x100": (MeanGapsChain(), (torch.ones(2, 2, 2),)),
    "mask+cat x100 [4,2]": (MaskChain(), (torch.ones(4, 2),)),
    "flip x200 [2,2]": (FlipChain(), (torch.ones(2, 2),)),
    "tril x200 [2,2]": (TrilChain(), (torch.ones(2, 2),)),
    "index_select x200": (IndexSelectChain(), (torch.ones(2, 2),)),
}


def export(model, inputs, path):
    program = torchlight.to_edge(torch.export.export(model, inputs)).to_executorch()
    path.write_bytes(program.buffer)


def to_us(value, unit):
    return float(value) * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[unit]


def measure(cli, pte, repeat, extra=()):
    out = subprocess.run([cli, "run", str(pte), "--repeat", str(repeat), "--fill", "ones",
                          *extra], capture_output=True, text=True, check=True).stdout
    load = re.search(r"^load\s+([\d.]+) (\w+)", out, re.M)
    lat = re.search(r"^latency\s+median ([\d.]+) (\w+), min ([\d.]+) (\w+)", out, re.M)
    return (to_us(load[1], load[2]), to_us(lat[1], lat[2]), to_us(lat[3], lat[4]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=str(ROOT / "build/release/bin/torchlight"))
    parser.add_argument("--baseline", help="another torchlight CLI to compare against")
    parser.add_argument("--repeat", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; best kept")
    parser.add_argument("--etdump", action="store_true",
                        help="also run ours with an ETDump tracer attached")
    parser.add_argument("--only", help="run only the chains whose name contains this")
    options = parser.parse_args()
    clis = {"ours": (options.cli, ())}
    if options.baseline:
        clis["baseline"] = (options.baseline, ())
    with tempfile.TemporaryDirectory() as tmp:
        if options.etdump:
            clis["etdump"] = (options.cli, ("--etdump", str(pathlib.Path(tmp) / "trace.etdp")))
        rows = []
        for name, (model, inputs) in CHAINS.items():
            if options.only and options.only not in name:
                continue
            pte = pathlib.Path(tmp) / (re.sub(r"\W+", "_", name) + ".pte")
            export(model.eval(), inputs, pte)
            best = {}
            for _ in range(options.rounds):
                for who, (cli, extra) in clis.items():
                    load, median, low = measure(cli, pte, options.repeat, extra)
                    old = best.get(who)
                    best[who] = (min(load, old[0]), min(median, old[1]), min(low, old[2])) if old \
                        else (load, median, low)
            rows.append((name, best))
    print(f"{'chain':<20} {'build':<9} {'load us':>9} {'ns/instr (min)':>15} "
          f"{'ns/instr (median)':>18}")
    for name, best in rows:
        for who, (load, median, low) in best.items():
            print(f"{name:<20} {who:<9} {load:>9.0f} {low * 1e3 / N:>15.1f} {median * 1e3 / N:>18.1f}")
        if "baseline" in best:
            ours, base = best["ours"], best["baseline"]
            print(f"{'':<20} {'ratio':<9} {ours[0] / base[0]:>9.2f} {ours[2] / base[2]:>15.2f} "
                  f"{ours[1] / base[1]:>18.2f}")


if __name__ == "__main__":
    main()
