"""PyTorch's pt2e flow without a delegate: export_for_training ->
prepare_pt2e(XNNPACKQuantizer) -> calibrate -> convert_pt2e -> export ->
to_edge -> to_executorch. The quantized_decomposed operators stay in the
program as upstream ExecuTorch's out variants (torchlight.kernels.quantized).

Checked: the program's operator names are upstream's quantized and portable
kernels (the "executorch-quantized" kernel target's list, taken from
upstream's library), the out variants' schemas, their eager kernels against
the functional operators, DuplicateDynamicQuantChainPass, and that programs
serialize and read back.
"""

from __future__ import annotations

import operator

import pytest
import torch
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
from torch.ao.quantization.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer, get_symmetric_quantization_config)

import torchlight
import torchlight.kernels.quantized as quantized
from torchlight import ops
from torchlight.backends.transforms.duplicate_dynamic_quant_chain import \
    DuplicateDynamicQuantChainPass
from torchlight.pte import pte_file

qd = torch.ops.quantized_decomposed
UPSTREAM = torchlight.EdgeCompileConfig(kernel_target="executorch-quantized")


class ConvLinear(torch.nn.Module):
    """A conv, and one activation feeding two linears (a shared dynamic chain)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(8, 6)
        self.fc2 = torch.nn.Linear(8, 6)

    def forward(self, x):
        y = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc1(y) + self.fc2(y)


def _quantize(model, inputs, per_channel, dynamic):
    torch._dynamo.reset()
    m = torch.export.export_for_training(model.eval(), inputs).module()
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=per_channel, is_dynamic=dynamic))
    m = prepare_pt2e(m, quantizer)
    for _ in range(4):
        m(*(torch.randn_like(x) for x in inputs))
    return convert_pt2e(m)


def _lower(quantized_module, inputs, compile_config=UPSTREAM):
    torch._dynamo.reset()
    ep = torch.export.export(quantized_module, inputs)
    edge = torchlight.to_edge(ep, compile_config=compile_config)
    return edge, edge.to_executorch(torchlight.ExecutorchBackendConfig(check_kernels=True))


@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_pt2e_without_delegate(per_channel, dynamic):
    x = (torch.randn(1, 3, 8, 8),)
    model = ConvLinear()
    q = _quantize(model, x, per_channel, dynamic)
    edge, prog = _lower(q, x)  # kernel check against upstream's lists: names are upstream's

    used = set(prog.operators())
    expected = set()
    if dynamic:
        expected |= {"quantized_decomposed::choose_qparams.Tensor_out",
                     "quantized_decomposed::quantize_per_tensor.Tensor_out",
                     "quantized_decomposed::dequantize_per_tensor.Tensor_out"}
    else:
        expected |= {"quantized_decomposed::quantize_per_tensor.out",
                     "quantized_decomposed::dequantize_per_tensor.out"}
    if per_channel:
        expected.add("quantized_decomposed::dequantize_per_channel.out")
    assert expected <= used, used
    # No functional quantized_decomposed op survives lowering.
    assert all(name.endswith(("out", "_out")) for name in used
               if name.startswith("quantized_decomposed::")), used

    # The weights are stored as int8 constants in the program.
    program = pte_file.read_pte(prog.buffer).program
    int8 = int(ops.scalar_type(torch.int8))
    plan = program.execution_plan[0]
    int8_constants = [v.val for v in plan.values
                      if getattr(v.val, "scalar_type", None) == int8
                      and getattr(v.val, "data_buffer_idx", 0) > 0]
    # Dynamic quantization covers linears only; static covers the conv too.
    assert len(int8_constants) == (2 if dynamic else 3), int8_constants

    # to_edge keeps the quantized graph's numerics (PyTorch's q/dq reference).
    for _ in range(3):
        xi = torch.randn(1, 3, 8, 8)
        torch.testing.assert_close(edge.exported_program().module()(xi), q(xi),
                                   rtol=0, atol=1e-6)
    # And quantization error against float stays small: within 10% of the
    # output's range (int8 q/dq on every activation and weight).
    xi = torch.randn(1, 3, 8, 8)
    ref = model(xi)
    assert (q(xi) - ref).abs().max() <= 0.1 * ref.abs().max() + 0.02


def test_xnnpack_delegate_pipeline_still_lowers():
    """With XnnpackPartitioner the q/dq patterns still go to the delegate."""
    from torchlight.backends.xnnpack import XnnpackPartitioner
    x = (torch.randn(1, 3, 8, 8),)
    q = _quantize(ConvLinear(), x, per_channel=True, dynamic=False)
    torch._dynamo.reset()
    edge = torchlight.to_edge_transform_and_lower(torch.export.export(q, x),
                                                  partitioner=[XnnpackPartitioner()])
    prog = edge.to_executorch()
    assert not [n for n in prog.operators() if n.startswith("quantized_decomposed::")]
    assert prog.program.execution_plan[0].delegates


FUNCTIONAL_TO_OUT = [
    (qd.quantize_per_tensor.default, "quantize_per_tensor.out"),
    (qd.quantize_per_tensor.tensor, "quantize_per_tensor.Tensor_out"),
    (qd.dequantize_per_tensor.default, "dequantize_per_tensor.out"),
    (qd.dequantize_per_tensor.tensor, "dequantize_per_tensor.Tensor_out"),
    (qd.quantize_per_channel.default, "quantize_per_channel.out"),
    (qd.dequantize_per_channel.default, "dequantize_per_channel.out"),
    (qd.choose_qparams.tensor, "choose_qparams.Tensor_out"),
    (qd.choose_qparams_per_token_asymmetric.default, "choose_qparams_per_token_asymmetric.out"),
    (qd.quantize_per_token.default, "quantize_per_token.out"),
    (qd.dequantize_per_token.default, "dequantize_per_token.out"),
    (qd.dequantize_per_channel_group.default, "dequantize_per_channel_group.out"),
    (qd.embedding_byte.default, "embedding_byte.out"),
    (qd.embedding_byte.dtype, "embedding_byte.dtype_out"),
    (qd.embedding_2bit.default, "embedding_2bit.out"),
    (qd.embedding_2bit.dtype, "embedding_2bit.dtype_out"),
    (qd.embedding_4bit.default, "embedding_4bit.out"),
    (qd.embedding_4bit.dtype, "embedding_4bit.dtype_out"),
    (qd.mixed_mm.default, "mixed_mm.out"),
    (qd.mixed_linear.default, "mixed_linear.out"),
    (qd.add.default, "add.out"),
]


@pytest.mark.parametrize("functional,expected", FUNCTIONAL_TO_OUT,
                         ids=[e for _, e in FUNCTIONAL_TO_OUT])
def test_out_variant_names(functional, expected):
    out = ops.out_variant(functional)
    assert out is not None and ops.qualified_name(out) == f"quantized_decomposed::{expected}"
    assert ops.is_out_variant(out)


def test_out_variant_names_are_upstreams():
    """Every out variant but the group-wise dequantize is in upstream's list."""
    from torchlight.kernel_check import target_kernels
    upstream = target_kernels("executorch-quantized")
    ours = set(quantized.out_variant_names())
    assert ours - upstream == {"quantized_decomposed::dequantize_per_channel_group.out"}
    assert {n for n in upstream if n.startswith("quantized_decomposed::")} <= ours


def test_out_variant_schemas_keep_upstream_quirks():
    # embedding_4bit.dtype_out takes dtype positionally, the others after `*`.
    args = {a.name: a for a in qd.embedding_4bit.dtype_out._schema.arguments}
    assert not args["dtype"].kwarg_only and args["out"].kwarg_only
    args = {a.name: a for a in qd.embedding_byte.dtype_out._schema.arguments}
    assert args["dtype"].kwarg_only
    returns = qd.choose_qparams.Tensor_out._schema.returns
    assert len(returns) == 2 and all(r.alias_info.is_write for r in returns)
    args = {a.name: a for a in qd.dequantize_per_channel.out._schema.arguments}
    assert str(args["zero_points"].type) == "Optional[Tensor]"


def _random_case(op):
    x = torch.randn(4, 16)
    q8 = torch.randint(-128, 128, (4, 16), dtype=torch.int8)
    s4, z4 = torch.rand(4) * 0.1 + 0.01, torch.randint(-3, 3, (4,))
    if op is qd.quantize_per_tensor.out:
        return (x, 0.05, 3, -128, 127, torch.int8), {}
    if op is qd.quantize_per_tensor.Tensor_out:
        return (x, torch.tensor([0.05]), torch.tensor([3]), -128, 127, torch.int8), {}
    if op is qd.dequantize_per_tensor.out:
        return (q8, 0.05, 3, -128, 127, torch.int8), {}
    if op is qd.quantize_per_channel.out:
        return (x, s4, z4, 0, -128, 127, torch.int8), {}
    if op is qd.dequantize_per_channel.out:
        return (q8, s4, z4, 0, -128, 127, torch.int8), {}
    if op is qd.quantize_per_token.out:
        s, z = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        return (x, s, z, -128, 127, torch.int8), {}
    if op is qd.dequantize_per_token.out:
        s, z = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        return (q8, s, z, -128, 127, torch.int8, torch.float32), {}
    if op is qd.dequantize_per_channel_group.out:
        w = torch.randint(-8, 8, (4, 16), dtype=torch.int8)
        return (w, torch.rand(4, 2), torch.zeros(4, 2), -8, 7, torch.int8, 8,
                torch.float32), {}
    raise AssertionError(op)


@pytest.mark.parametrize("op", [qd.quantize_per_tensor.out, qd.quantize_per_tensor.Tensor_out,
                                qd.dequantize_per_tensor.out, qd.quantize_per_channel.out,
                                qd.dequantize_per_channel.out, qd.quantize_per_token.out,
                                qd.dequantize_per_token.out, qd.dequantize_per_channel_group.out],
                         ids=lambda op: op._overloadpacket.__name__ + "." + op._overloadname)
def test_out_kernels_match_functional(op):
    """An out variant's eager kernel writes what the functional op returns,
    resizing its out tensor."""
    args, kwargs = _random_case(op)
    functional = getattr(op.overloadpacket, "tensor" if "Tensor" in op._overloadname
                         else "default")
    expected = functional(*args, **kwargs)
    out = torch.empty(0, dtype=expected.dtype)
    result = op(*args, out=out, **kwargs)
    assert result is out or result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_choose_qparams_out_writes_both():
    x = torch.randn(3, 10)
    scale, zp = torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.int64)
    qd.choose_qparams_per_token_asymmetric.out(x, torch.int8, scale_out=scale,
                                               zero_point_out=zp)
    ref_scale, ref_zp = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
    assert torch.equal(scale, ref_scale) and torch.equal(zp, ref_zp)


def _consumers_of_dequantize(gm):
    return [len([u for u in n.users]) for n in gm.graph.nodes
            if n.op == "call_function" and n.target is qd.dequantize_per_tensor.tensor]


def test_duplicate_dynamic_quant_chain():
    x = (torch.randn(2, 8),)

    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 4)
            self.b = torch.nn.Linear(8, 4)
            self.c = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.a(x) + self.b(x) * self.c(x)

    q = _quantize(TwoHeads(), x, per_channel=True, dynamic=True)
    before = _consumers_of_dequantize(q)
    assert max(before) == 3, before  # one shared chain feeds three linears
    expected = q(*x)
    result = DuplicateDynamicQuantChainPass()(q)
    assert result.modified
    after = _consumers_of_dequantize(result.graph_module)
    assert after == [1, 1, 1]
    chooses = [n for n in result.graph_module.graph.nodes
               if n.op == "call_function" and n.target is qd.choose_qparams.tensor]
    assert len(chooses) == 3
    torch.testing.assert_close(result.graph_module(*x), expected, rtol=0, atol=0)
    # Running it again changes nothing; the duplicated graph still lowers.
    assert not DuplicateDynamicQuantChainPass()(result.graph_module).modified
    _, prog = _lower(result.graph_module, x)
    assert "quantized_decomposed::choose_qparams.Tensor_out" in prog.operators()


def test_duplicate_pass_leaves_static_chains():
    x = (torch.randn(2, 8),)
    q = _quantize(torch.nn.Sequential(torch.nn.Linear(8, 8)), x, per_channel=False,
                  dynamic=False)
    nodes = len(q.graph.nodes)
    assert not DuplicateDynamicQuantChainPass()(q).modified
    assert len(q.graph.nodes) == nodes


def test_program_round_trips(tmp_path):
    x = (torch.randn(1, 3, 8, 8),)
    _, prog = _lower(_quantize(ConvLinear(), x, True, False), x)
    path = tmp_path / "q.pte"
    prog.save(path)
    again = pte_file.read_pte(path.read_bytes()).program
    names = sorted({op.qualified_name for op in again.execution_plan[0].operators})
    assert names == prog.operators()
