"""Delegation end to end: partitioner -> preprocess -> .pte -> the C++
TestBackend registered in the runtime's BackendRegistry."""

from __future__ import annotations

import pytest
import torch

import torchlight
from helpers import export
from torchlight.backends.test_backend import BACKEND_ID, TestBackendPartitioner, version_spec
from torchlight.delegation import DELEGATION_TAG
from torchlight.pte import pte_file, schema


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))
        self.bias = torch.nn.Parameter(torch.randn(3))

    def forward(self, x, y):
        a = x * 2 + y          # Delegated (same shapes, a number).
        b = a * self.w - x     # Delegated (a parameter is a delegate input).
        c = b + self.bias      # Broadcasts: stays a kernel call.
        return c * c, a        # c * c: a second partition.


def _inputs():
    return torch.randn(4, 3), torch.randn(4, 3)


def test_delegated_program_matches_eager(runtime):
    model = Model()
    x, y = _inputs()
    prog = export(model, (x, y), partitioner=TestBackendPartitioner())
    program = prog.program
    plan = program.execution_plan[0]
    assert [d.id for d in plan.delegates] == [BACKEND_ID, BACKEND_ID]
    assert all(d.compile_specs == [schema.CompileSpec("version", b"1")] for d in plan.delegates)
    assert all(d.processed.location == schema.DataLocation.SEGMENT for d in plan.delegates)
    kinds = [type(i.instr_args).__name__ for i in plan.chains[0].instructions]
    assert kinds == ["DelegateCall", "KernelCall", "DelegateCall"]
    assert prog.operators() == ["aten::add.out"]
    # DelegateCall args: inputs then outputs.
    first = plan.chains[0].instructions[0].instr_args
    assert len(first.args) == 3 + 2

    module = runtime.load(prog.buffer)
    assert module.method_meta()["backends"] == [BACKEND_ID, BACKEND_ID]
    for _ in range(2):
        x, y = _inputs()
        with torch.no_grad():
            expected = model(x, y)
        actual = module.run("forward", [x, y])
        assert all(torch.equal(a, e) for a, e in zip(actual, expected))


def test_inline_delegate_data(runtime):
    model = Model()
    x, y = _inputs()
    config = torchlight.ExecutorchBackendConfig(extract_delegate_segments=False)
    prog = export(model, (x, y), config=config, partitioner=TestBackendPartitioner())
    data = prog.buffer
    f = pte_file.read_pte(data)
    plan = f.program.execution_plan[0]
    assert all(d.processed.location == schema.DataLocation.INLINE for d in plan.delegates)
    assert len(f.program.backend_delegate_data) == 2
    for blob in f.program.backend_delegate_data:
        assert blob.data[:4] == b"TLTB"
        assert data.find(bytes(blob.data)) % 16 == 0  # force_align: 16
    with torch.no_grad():
        expected = model(x, y)
    actual = runtime.load(data).run("forward", [x, y])
    assert all(torch.equal(a, e) for a, e in zip(actual, expected))


def test_compile_specs_reach_the_runtime_backend(runtime):
    prog = export(Model(), _inputs(),
                  partitioner=TestBackendPartitioner([version_spec(2)]))
    module = runtime.load(prog.buffer)
    with pytest.raises(RuntimeError, match="DelegateInvalidCompatibility.*'version' is '2'"):
        module.run("forward", list(_inputs()))


def test_lowered_program_still_runs_eagerly():
    model = Model()
    x, y = _inputs()
    ep = torch.export.export(model, (x, y))
    edge = torchlight.to_edge(ep).to_backend(TestBackendPartitioner())
    lowered = edge.exported_program()
    calls = [n for n in lowered.graph.nodes if n.op == "call_function"
             and getattr(n.target, "_torchlight_delegate", False)]
    assert len(calls) == 2
    assert all(isinstance(getattr(lowered.graph_module, n.args[0].target),
                          torchlight.LoweredBackendModule) for n in calls)
    # The original edge program is unchanged.
    assert not any(getattr(n.target, "_torchlight_delegate", False)
                   for n in torchlight.to_edge(ep).exported_program().graph.nodes)
    with torch.no_grad():
        expected = model(x, y)
        actual = lowered.module()(x, y)
    assert all(torch.allclose(a, e) for a, e in zip(actual, expected))


class _TagEverything(torchlight.Partitioner):
    """Tags the first and the last add, with something outside between them."""

    def __init__(self, backend_id=BACKEND_ID):
        self.backend_id = backend_id

    def partition(self, ep):
        nodes = [n for n in ep.graph.nodes if n.op == "call_function"]
        for node in (nodes[0], nodes[-1]):
            node.meta[DELEGATION_TAG] = "bad"
        return torchlight.PartitionResult(
            ep, {"bad": torchlight.DelegationSpec(self.backend_id, [version_spec()])})


class _Sandwich(torch.nn.Module):
    def forward(self, x):
        a = x + 1.0
        b = a * a.sum()    # Not delegable; depends on a, feeds the next add.
        return b + a


def test_non_convex_partition_is_rejected():
    ep = torch.export.export(_Sandwich(), (torch.randn(3),))
    with pytest.raises(torchlight.ExportError, match="partition 'bad' is not convex"):
        torchlight.to_edge(ep).to_backend(_TagEverything())


def test_unknown_backend_is_rejected():
    ep = torch.export.export(_Sandwich(), (torch.randn(3),))

    class TagFirst(torchlight.Partitioner):
        def partition(self, ep):
            first = next(n for n in ep.graph.nodes if n.op == "call_function")
            first.meta[DELEGATION_TAG] = "t"
            return torchlight.PartitionResult(ep, {"t": torchlight.DelegationSpec("NoSuch")})

    with pytest.raises(torchlight.ExportError, match="no backend is registered under 'NoSuch'"):
        torchlight.to_edge(ep).to_backend(TagFirst())


class AddMul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x, y):
        return (x + y) * self.w


def test_per_method_partitioners(runtime):
    model = AddMul()
    x, y = _inputs()
    programs = {"delegated": torch.export.export(model, (x, y)),
                "plain": torch.export.export(model, (x, y))}
    prog = torchlight.to_edge(programs).to_backend(
        {"delegated": TestBackendPartitioner()}).to_executorch()
    program = prog.program
    assert len(program.plan("delegated").delegates) == 1
    assert program.plan("plain").delegates == []
    module = runtime.load(prog.buffer)
    with torch.no_grad():
        expected = (model(x, y),)
    for method in ("delegated", "plain"):
        actual = module.run(method, [x, y])
        assert all(torch.equal(a, e) for a, e in zip(actual, expected))
