"""Out variants and view copies are found from torch's operator schemas."""

from __future__ import annotations

import pytest
import torch

from torchlight import ops

aten = torch.ops.aten


@pytest.mark.parametrize("functional,out", [
    (aten.add.Tensor, aten.add.out),
    (aten.add.Scalar, aten.add.Scalar_out),
    (aten.max.dim, aten.max.dim_max),                      # Two returns.
    (aten.native_layer_norm.default, aten.native_layer_norm.out),  # Three.
    (aten.full.default, aten.full.out),                    # Drops dtype/layout/device.
    (aten._to_copy.default, aten._to_copy.out),
    (aten.arange.start_step, aten.arange.start_out),
    (aten.convolution.default, aten.convolution.out),
    (aten.split_with_sizes_copy.default, aten.split_with_sizes_copy.out),  # Tensor[] out.
    (aten.add.out, aten.add.out),                          # Already out.
])
def test_out_variant_from_schema(functional, out):
    assert ops.out_variant(functional) is out


def test_no_out_variant():
    assert ops.out_variant(aten.lstm.input) is None


@pytest.mark.parametrize("view,copy", [
    (aten.view.default, aten.view_copy.default),
    (aten.permute.default, aten.permute_copy.default),
    (aten.slice.Tensor, aten.slice_copy.Tensor),
    (aten.select.int, aten.select_copy.int),
    (aten.expand.default, aten.expand_copy.default),
])
def test_view_copy_variant(view, copy):
    assert ops.is_view(view)
    assert ops.copy_variant(view) is copy
    assert ops.out_variant(copy) is not None


def test_names_written_to_programs():
    assert ops.operator_name(aten.add.out) == ("aten::add", "out")
    assert ops.qualified_name(aten.sym_size.int) == "aten::sym_size.int"
    assert ops.symbolic_operator_name(__import__("operator").mul) == \
        ("executorch_prim::mul", "Scalar")


def test_assertions_are_recognised():
    assert ops.is_assertion(aten._assert_scalar.default)
    assert not ops.is_assertion(aten.add.Tensor)
    assert ops.returns_symbolic(aten.sym_size.int)


class ViewsAndScalars(torch.nn.Module):
    def forward(self, x):
        y = x.permute(1, 0).reshape(-1)
        return y * 2, torch.max(x, dim=1)


def test_lowered_graph_has_only_out_variants_and_allocs():
    import torchlight

    ep = torch.export.export(ViewsAndScalars(), (torch.randn(3, 4),))
    prog = torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))
    graph = prog.method_graph().graph
    targets = [n.target for n in graph.nodes if n.op == "call_function"]
    for target in targets:
        assert target in (ops.alloc, __import__("operator").getitem) or ops.is_out_variant(target)
    assert aten.max.dim_max in targets
    assert aten.permute_copy.out in targets
    # max.dim_max returns two tensors: one TensorList return value.
    plan = prog.program.execution_plan[0]
    max_call = next(i.instr_args for i in plan.chains[0].instructions
                    if plan.operators[i.instr_args.op_index].qualified_name == "aten::max.dim_max")
    ret = plan.values[max_call.args[-1]].val
    assert type(ret).__name__ == "TensorList" and ret.items == max_call.args[-3:-1]
