"""to_edge: core ATen decomposition, specs on every node, preserved ops."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import torchlight

aten = torch.ops.aten


class Composite(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        return F.hardswish(self.linear(x)).mean(dim=-1)


def _targets(ep):
    return {n.target for n in ep.graph.nodes if n.op == "call_function"}


def test_decomposes_to_core_aten_with_specs():
    model = Composite().eval()
    x = torch.randn(2, 4)
    # preserve_ops=() decomposes everything, aten::linear included (kept by default).
    config = torchlight.EdgeCompileConfig(preserve_ops=())
    edge = torchlight.to_edge(torch.export.export(model, (x,)), compile_config=config)
    ep = edge.exported_program()
    for target in _targets(ep):
        assert torch.Tag.core in target.tags or target.is_view, target
    assert aten.linear.default not in _targets(ep)
    for node in ep.graph.nodes:
        if node.op in ("placeholder", "call_function"):
            assert isinstance(node.meta["val"], torch.Tensor), node
    with torch.no_grad():
        assert torch.allclose(ep.module()(x), model(x))


def test_preserved_ops_are_kept_and_lowered_to_their_out_variant():
    config = torchlight.EdgeCompileConfig(preserve_ops=[aten.linear.default])
    edge = torchlight.to_edge(torch.export.export(Composite(), (torch.randn(2, 4),)),
                              compile_config=config)
    assert aten.linear.default in _targets(edge.exported_program())
    prog = edge.to_executorch(torchlight.ExecutorchBackendConfig(check_kernels=False))
    assert "aten::linear.out" in prog.operators()


def test_methods_and_constant_methods():
    ep = torch.export.export(Composite(), (torch.randn(2, 4),))
    edge = torchlight.to_edge({"a": ep, "b": ep}, constant_methods={"version": "v1",
                                                                    "scale": 0.5})
    assert edge.methods == ["a", "b", "version", "scale"]
    prog = edge.to_executorch(torchlight.ExecutorchBackendConfig(check_kernels=False))
    program = prog.program
    assert program.plan("version").values[0].val == torchlight.pte.schema.String("v1")
    assert program.plan("scale").values[0].val == torchlight.pte.schema.Double(0.5)
