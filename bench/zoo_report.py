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
from test_model_zoo import ZOO, _randomise_batch_norm  # noqa: E402

CLI = REPO / "build" / "release" / "bin" / "torchlight"


def cli_timings(pte: Path, inputs, workdir: Path, repeat: int):
    args = [str(CLI), "run", str(pte), "--repeat", str(repeat)]
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
    print(f"{'model':<14}{'ops':>5}{'arena bytes':>14}{'max abs err':>14}{'atol/rtol':>16}"
          f"{'load ms':>10}{'run ms':>10}")
    for name, ops, arena, error, atol, rtol, load_ms, run_ms in rows:
        print(f"{name:<14}{len(ops):>5}{arena:>14,}{error:>14.3g}{f'{atol:g}/{rtol:g}':>16}"
              f"{load_ms:>10.2f}{run_ms:>10.3f}")
    print()
    for name, ops, *_ in rows:
        print(f"{name}: {', '.join(ops)}")


if __name__ == "__main__":
    main()
