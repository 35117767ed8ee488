"""The Python runtime bindings: loading, metadata, errors."""

from __future__ import annotations

import pytest
import torch

from helpers import FIXTURES, export


class MulAdd(torch.nn.Module):
    def forward(self, x, y):
        return x * 3 + y


def test_method_metadata(runtime):
    prog = export(MulAdd(), (torch.randn(2, 3), torch.randn(2, 3)))
    module = runtime.load(prog.buffer)
    assert module.method_names() == ["forward"]
    meta = module.method_meta("forward")
    assert meta["name"] == "forward"
    assert [io["tag"] for io in meta["inputs"]] == ["Tensor", "Tensor"]
    tensor = meta["inputs"][0]["tensor"]
    assert tensor == {"scalar_type": 6, "sizes": [2, 3], "dim_order": [0, 1], "dynamism": 0,
                      "memory_planned": True, "nbytes": 24}
    assert meta["operators"] == ["aten::mul.out", "aten::add.out"]
    assert meta["planned_buffer_sizes"] == [prog.memory_summary().total_bytes]
    assert meta["backends"] == []
    assert meta["num_instructions"] == 2
    module.load_method("forward")
    assert module.planned_bytes("forward") == prog.memory_summary().total_bytes


def test_loads_files_and_runs_reference_fixtures(runtime):
    module = runtime.load(FIXTURES / "add_eh.pte")
    (out,) = module.forward(torch.tensor([1.0, 2.0, 3.0]))
    assert torch.equal(out, torch.tensor([2.0, 3.0, 4.0]))
    module = runtime.load(str(FIXTURES / "add.pte"), mmap=False)
    (out,) = module.forward(torch.tensor([1.5]), torch.tensor([2.0]))
    assert torch.equal(out, torch.tensor([3.5]))


def test_errors_carry_the_runtime_message(runtime):
    module = runtime.load(export(MulAdd(), (torch.randn(2, 3), torch.randn(2, 3))).buffer)
    with pytest.raises(RuntimeError, match="InvalidArgument: method 'forward' takes 2 inputs, "
                                           "1 were given"):
        module.run("forward", [torch.randn(2, 3)])
    with pytest.raises(RuntimeError, match="must have dtype float32, got float64"):
        module.run("forward", [torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 3)])
    with pytest.raises(RuntimeError, match="NotFound"):
        module.run("backward", [])
    with pytest.raises(RuntimeError, match="InvalidProgram|NotFound|AccessFailed"):
        runtime.load(b"not a program at all")


def test_registries(runtime):
    assert "TorchlightTestBackend" in runtime.registered_backends()
    assert "aten::add.out" in runtime.registered_kernels()
