"""aten::linear kept whole by default (EdgeCompileConfig.preserve_ops): an
exported nn.Linear calls aten::linear.out on the weight as stored, with no
transposed copy of it (permute_copy), and runs in the C++ runtime with
eager's results (float32: atol 1e-5, rtol 1e-5)."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import torchlight
from helpers import export
from torchlight.config import DEFAULT_PRESERVE_OPS
from torchlight.pte import schema

aten = torch.ops.aten


class TwoLayers(torch.nn.Module):
    def __init__(self, bias: bool = True):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16, bias=bias)  # weight [16, 8]
        self.fc2 = torch.nn.Linear(16, 5, bias=bias)  # weight [5, 16]

    def forward(self, x):  # x: [..., 8]
        return self.fc2(torch.relu(self.fc1(x)))


def _instructions(prog):
    """(operator name, kernel call args) of every kernel call."""
    plan = prog.program.execution_plan[0]
    return [(plan.operators[i.instr_args.op_index].qualified_name, i.instr_args.args)
            for i in plan.chains[0].instructions if isinstance(i.instr_args, schema.KernelCall)]


def _constant_inputs(prog, op_name):
    """How many calls of `op_name` read a constant (a weight) as their first argument."""
    plan = prog.program.execution_plan[0]
    count = 0
    for name, args in _instructions(prog):
        value = plan.values[args[0]].val
        if name == op_name and isinstance(value, schema.Tensor) and value.data_buffer_idx > 0:
            count += 1
    return count


def test_linear_is_kept_by_default():
    assert aten.linear.default in torchlight.EdgeCompileConfig().preserve_ops
    assert tuple(DEFAULT_PRESERVE_OPS) == (aten.linear.default,)
    prog = export(TwoLayers(), (torch.randn(3, 8),))
    assert prog.operators() == ["aten::linear.out", "aten::relu.out"]
    # linear.out(input, weight, bias, out, return): the weight is the stored constant.
    plan = prog.program.execution_plan[0]
    calls = [args for name, args in _instructions(prog) if name == "aten::linear.out"]
    assert len(calls) == 2
    for args in calls:
        weight = plan.values[args[1]].val
        assert weight.data_buffer_idx > 0 and weight.sizes in ([16, 8], [5, 16])


@pytest.mark.parametrize("bias", [True, False])
def test_no_weight_is_copied(bias):
    prog = export(TwoLayers(bias), (torch.randn(2, 3, 8),))
    assert "aten::permute_copy.out" not in prog.operators()
    assert _constant_inputs(prog, "aten::linear.out") == 0  # input 0 is the activation
    # Decomposing (preserve_ops=()) gives the old form: a transposed copy of
    # each weight on every call, then mm/addmm.
    ep = torch.export.export(TwoLayers(bias), (torch.randn(2, 3, 8),))
    edge = torchlight.to_edge(ep, compile_config=torchlight.EdgeCompileConfig(preserve_ops=()))
    old = edge.to_executorch(torchlight.ExecutorchBackendConfig(check_kernels=False))
    assert "aten::linear.out" not in old.operators()
    assert _constant_inputs(old, "aten::permute_copy.out") == 2


@pytest.mark.parametrize("shape", [(8,), (3, 8), (2, 3, 8), (2, 1, 3, 8)])
@pytest.mark.parametrize("bias", [True, False])
def test_runs_like_eager(runtime, shape, bias):
    model = TwoLayers(bias).eval()
    x = torch.randn(shape)
    module = runtime.load(export(model, (x,)).buffer)
    for _ in range(2):
        x = torch.randn(shape)
        (actual,) = module.run("forward", [x])
        torch.testing.assert_close(actual, model(x).detach(), atol=1e-5, rtol=1e-5)


def test_dynamic_rows(runtime):
    model = TwoLayers().eval()
    rows = Dim("rows", min=1, max=32)
    prog = export(model, (torch.randn(4, 8),), dynamic_shapes=({0: rows},))
    assert prog.operators() == ["aten::linear.out", "aten::relu.out"]
    module = runtime.load(prog.buffer)
    for n in (1, 7, 32):
        x = torch.randn(n, 8)
        (actual,) = module.run("forward", [x])
        torch.testing.assert_close(actual, model(x).detach(), atol=1e-5, rtol=1e-5)


# Eager computes in the same dtype; results differ by the rounding of a
# different summation order (half precision: a few units in the last place).
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float16, 1e-2),
                                       (torch.bfloat16, 5e-2)])
def test_other_float_dtypes(runtime, dtype, tol):
    model = TwoLayers().to(dtype).eval()
    x = torch.randn(3, 8, dtype=dtype)
    module = runtime.load(export(model, (x,)).buffer)
    (actual,) = module.run("forward", [x])
    assert actual.dtype == dtype
    torch.testing.assert_close(actual, model(x).detach(), atol=tol, rtol=tol)
