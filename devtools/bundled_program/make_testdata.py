"""Writes testdata/*.bpte with torchlight's Python writer, for the C++ tests
and the fuzz seed corpus. Run from the repository root:

    ./torchlight exec python3 devtools/bundled_program/make_testdata.py

add_mul.bpte          forward(x, q) = 3x + 2 + q over int32 [2, 2] (the
                      model of upstream's bundled_program.bpte), 10 cases
                      with expected outputs from eager PyTorch.
add_mul_wrong.bpte    the same, but case 3's expected output has element 2
                      off by one.
linear.bpte           Linear(4, 3) in float32, 4 cases, expected from eager.
bad_input_count.bpte  add_mul with case 1 given one input (the writer's
                      check bypassed), for the runtime's own check.

The same files are the seeds of the bundled_program fuzz target
(fuzz/corpus/bundled_program).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import torch

import torchlight
from torchlight.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from torchlight.devtools.bundled_program.core import BundledProgram
from torchlight.devtools.bundled_program.serialize import (
    serialize_from_bundled_program_to_flatbuffer)

OUT = Path(__file__).resolve().parent / "testdata"
SEEDS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "bundled_program"


class AddMul(torch.nn.Module):
    def forward(self, x, q):
        return 3 * x + 2 + q


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.linear(x)


class _Tables:
    """Stands in for a BundledProgram whose tables were edited by hand."""

    def __init__(self, tables):
        self.tables = tables

    def serialize_to_schema(self):
        return self.tables


def _export(model, inputs):
    torch._dynamo.reset()
    return torchlight.to_edge(torch.export.export(model, inputs)).to_executorch()


def main() -> int:
    torch.manual_seed(0)
    OUT.mkdir(exist_ok=True)
    model = AddMul()
    # Two distinct tensors: exporting with one tensor passed twice ties the inputs.
    prog = _export(model, (torch.zeros(2, 2, dtype=torch.int32),
                           torch.zeros(2, 2, dtype=torch.int32)))
    cases = []
    for _ in range(10):
        a = torch.randint(-100, 100, (2, 2), dtype=torch.int32)
        q = torch.randint(-100, 100, (2, 2), dtype=torch.int32)
        cases.append(MethodTestCase((a, q), (model(a, q),)))
    good = BundledProgram(prog, [MethodTestSuite("forward", cases)])
    (OUT / "add_mul.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(good))

    wrong = copy.deepcopy(good.serialize_to_schema())
    tensor = wrong.method_test_suites[0].test_cases[3].expected_outputs[0].val
    values = torch.frombuffer(bytearray(tensor.data), dtype=torch.int32).clone()
    values[2] += 1
    tensor.data = values.numpy().tobytes()
    (OUT / "add_mul_wrong.bpte").write_bytes(
        serialize_from_bundled_program_to_flatbuffer(_Tables(wrong)))

    short = copy.deepcopy(good.serialize_to_schema())
    del short.method_test_suites[0].test_cases[1].inputs[1]
    (OUT / "bad_input_count.bpte").write_bytes(
        serialize_from_bundled_program_to_flatbuffer(_Tables(short)))

    linear = Linear().eval()
    xs = [torch.randn(2, 4) for _ in range(4)]
    prog = _export(linear, (xs[0],))
    with torch.no_grad():
        cases = [MethodTestCase((v,), (linear(v),)) for v in xs]
    (OUT / "linear.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(
        BundledProgram(prog, [MethodTestSuite("forward", cases)])))
    SEEDS.mkdir(parents=True, exist_ok=True)
    for path in sorted(OUT.glob("*.bpte")):
        (SEEDS / path.name).write_bytes(path.read_bytes())
        print(f"{path.name}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
