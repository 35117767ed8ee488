"""Unsupported constructs fail at export, naming the graph node, the
operator and the user's source line."""

from __future__ import annotations

import inspect

import pytest
import torch

import torchlight


def _line_of(fn, text):
    """"file:line" of the line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def _lower(model, inputs, dynamic_shapes=None):
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))


class Unbounded(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_dynamic_dim_without_upper_bound():
    with pytest.raises(torchlight.ExportError) as info:
        _lower(Unbounded(), (torch.randn(4, 3),), ({0: torch.export.Dim("b")},))
    message = str(info.value)
    assert "node 'mul' (aten::mul.Tensor)" in message
    assert _line_of(Unbounded.forward, "x * 2") in message
    assert "no finite upper bound" in message and "max=" in message


class MutatesInput(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


def test_mutated_user_input():
    with pytest.raises(torchlight.ExportError) as info:
        _lower(MutatesInput(), (torch.randn(3),))
    assert "USER_INPUT_MUTATION" in str(info.value)
    assert _line_of(MutatesInput.forward, "x.add_(1)") in str(info.value)


@torch.library.custom_op("tltest::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class CustomOp(torch.nn.Module):
    def forward(self, x):
        return twice(x) + 1


def test_operator_without_out_variant():
    with pytest.raises(torchlight.ExportError) as info:
        _lower(CustomOp(), (torch.randn(3),))
    message = str(info.value)
    assert "node 'twice' (tltest::twice)" in message
    assert _line_of(CustomOp.forward, "twice(x) + 1") in message
    assert "has no out variant" in message


class Loop(torch.nn.Module):
    """torch.cond is lowered (test_control_flow.py); loops are not."""

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        return while_loop(lambda i, v: i.sum() < 3, lambda i, v: (i + 1, v * 2),
                          (torch.zeros(1), x))[1]


def test_control_flow_is_reported():
    ep = torch.export.export(Loop(), (torch.randn(3),))
    with pytest.raises(torchlight.ExportError) as info:
        torchlight.to_edge(ep)
    assert "control flow (while_loop) is not supported" in str(info.value)
    assert _line_of(Loop.forward, "return while_loop") in str(info.value)


class SizeAsOperand(torch.nn.Module):
    def forward(self, x):
        return x + x.shape[0]


def test_symbolic_size_as_tensor_operand():
    with pytest.raises(torchlight.ExportError) as info:
        _lower(SizeAsOperand(), (torch.randn(4, 3),), ({0: torch.export.Dim("b", max=8)},))
    assert "argument 'other' is the symbolic value" in str(info.value)
    assert _line_of(SizeAsOperand.forward, "x.shape[0]") in str(info.value)


def test_problems_are_listed_together():
    class TwoCustom(torch.nn.Module):
        def forward(self, x):
            return twice(x) * twice(x + 1)

    with pytest.raises(torchlight.ExportError, match=r"\(2 problems\)") as info:
        _lower(TwoCustom(), (torch.randn(3),))
    assert str(info.value).count("has no out variant") == 2
