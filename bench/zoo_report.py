"""Issue #3's figures for every zoo model: operators, arena bytes, max abs
error against eager PyTorch, and load / run latency from the CLI.

Run after a release build:  ./torchlight exec python3 bench/zoo_report.py
The models are the ones the zoo test checks (python/tests/test_model_zoo.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python" / "tests"))

import torchlight  # noqa: E402
from torchlight import runtime  # noqa: E402
from test_export_end_to_end import Affine, TwoMethods, _Bound  # noqa: E402
from test_model_zoo import ZOO, _randomise_batch_norm  # noqa: E402
from test_mutable_buffers import Accumulator  # noqa: E402

CLI = REPO / "build" / "release" / "bin" / "torchlight"


def cli_timings(pte: Path, inputs, workdir: Path, repeat: int, method: str = ""):
    args = [str(CLI), "run", str(pte), "--repeat", str(repeat)]
    if method:
        args += ["--method", method]
    for i, x in enumerate(inputs):
        path = workdir / f"input{i}.npy"
        np.save(path, x.numpy())
        args += ["--input", str(path)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    load = re.search(r"^\s*load\s+([\d.]+) (us|ms)", out, re.M)
    median = re.search(r"median ([\d.]+) (us|ms)", out)

    def ms(match):
        value = float(match.group(1))
        return value / 1000 if match.group(2) == "us" else value

    return ms(load), ms(median)


def _max_error(actual, expected) -> float:
    return (actual.double() - expected.double()).abs().max().item()


def program_level_rows(workdir: Path):
    """The zoo entries that are about the program rather than the network:
    a dynamic batch dimension (error: worst over batch 1, 2, 7, 16; latency
    at 16), two methods in one program (one row each), and a buffer updated
    in place (error after three calls, so it covers the carried state)."""
    rows = []

    class Batched(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Affine()

        def forward(self, x, y):
            return self.inner(x) * y

    model = Batched()
    batch = torch.export.Dim("batch", max=16)
    example = (torch.randn(5, 3, 4), torch.randn(5, 3, 4))
    prog = torchlight.to_edge(torch.export.export(
        model, example, dynamic_shapes=({0: batch}, {0: batch}))).to_executorch()
    module = runtime.load(prog.buffer)
    error = 0.0
    for n in (1, 2, 7, 16):
        inputs = (torch.randn(n, 3, 4), torch.randn(n, 3, 4))
        with torch.no_grad():
            error = max(error, _max_error(module.run("forward", list(inputs))[0], model(*inputs)))
    pte = workdir / "dynamic_batch.pte"
    prog.save(pte)
    rows.append(("dynamic_batch", prog.operators(), prog.memory_summary().total_bytes, error,
                 0.0, 0.0, *cli_timings(pte, inputs, workdir, repeat=20)))

    model = TwoMethods()
    x, y = torch.randn(4), torch.randn(4)
    prog = torchlight.to_edge({
        "forward": torch.export.export(model, (x,)),
        "shifted": torch.export.export(_Bound(model, "shifted"), (x, y)),
    }).to_executorch()
    module = runtime.load(prog.buffer)
    pte = workdir / "two_methods.pte"
    prog.save(pte)
    for method, inputs, expected in (("forward", (x,), model(x)),
                                     ("shifted", (x, y), model.shifted(x, y))):
        error = _max_error(module.run(method, list(inputs))[0], expected.detach())
        ops = sorted({op.qualified_name for plan in prog.program.execution_plan
                      if plan.name == method for op in plan.operators})
        rows.append((f"two_methods.{method}", ops, prog.memory_summary(method).total_bytes,
                     error, 0.0, 0.0, *cli_timings(pte, inputs, workdir, 20, method)))

    model = Accumulator()
    x = torch.randn(2, 3)
    prog = torchlight.to_edge(torch.export.export(Accumulator(), (x,))).to_executorch()
    module = runtime.load(prog.buffer)
    for _ in range(3):
        actual = module.run("forward", [x])[0]
        with torch.no_grad():
            expected = model(x)
    pte = workdir / "buffer_state.pte"
    prog.save(pte)
    rows.append(("buffer_state", prog.operators(), prog.memory_summary().total_bytes,
                 _max_error(actual, expected), 0.0, 0.0, *cli_timings(pte, (x,), workdir, 20)))
    return rows


def main() -> None:
    torch.manual_seed(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name in sorted(ZOO):
            spec = ZOO[name]
            model = spec.make().eval()
            with torch.no_grad():
                _randomise_batch_norm(model)
            inputs = spec.inputs()
            prog = torchlight.to_edge(torch.export.export(model, inputs)).to_executorch()
            pte = workdir / f"{name}.pte"
            prog.save(pte)
            with torch.no_grad():
                expected = model(*inputs)
            (actual,) = runtime.load(prog.buffer).run("forward", list(inputs))
            error = (actual.double() - expected.double()).abs().max().item()
            load_ms, run_ms = cli_timings(pte, inputs, workdir, repeat=20)
            rows.append((name, prog.operators(), prog.memory_summary().total_bytes, error,
                         spec.atol, spec.rtol, load_ms, run_ms))
        rows += program_level_rows(workdir)
    print(f"{'model':<20}{'ops':>5}{'arena bytes':>14}{'max abs err':>14}{'atol/rtol':>16}"
          f"{'load ms':>10}{'run ms':>10}")
    for name, ops, arena, error, atol, rtol, load_ms, run_ms in rows:
        tolerance = f"{atol:g}/{rtol:g}" if atol or rtol else "exact"
        print(f"{name:<20}{len(ops):>5}{arena:>14,}{error:>14.3g}{tolerance:>16}"
              f"{load_ms:>10.2f}{run_ms:>10.3f}")
    print()
    for name, ops, *_ in rows:
        print(f"{name}: {', '.join(ops)}")


if __name__ == "__main__":
    main()
