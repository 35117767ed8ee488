"""Debug handles (to_edge) and the emitter's instruction -> handle maps."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import torch

import torchlight
from torchlight.backends.test_backend import TestBackend, TestBackendPartitioner
from torchlight.backends.xnnpack.partitioner import XnnpackPartitioner
from torchlight.delegation import PreprocessResult, register_backend
from torchlight.pte import schema


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = torch.nn.functional.silu(self.conv(x))  # silu decomposes into two ops
        return self.fc(y.mean((2, 3))).softmax(-1)


def _inputs():
    return (torch.randn(1, 2, 6, 6),)


MODEL = Net()


def _export(partitioner=None):
    ep = torch.export.export(MODEL, _inputs())
    edge = torchlight.to_edge(ep)
    if partitioner is not None:
        edge = edge.to_backend(partitioner)
    return ep, edge, edge.to_executorch()


def _run(ep, x):
    out = ep.module()(x)
    return out[0] if isinstance(out, (tuple, list)) else out


def _handles(ep):
    return {n.name: n.meta.get("debug_handle") for n in ep.graph.nodes}


def test_to_edge_gives_every_operator_a_handle():
    _, edge, _ = _export()
    nodes = [n for n in edge.exported_program().graph.nodes]
    calls = [n for n in nodes if n.op == "call_function"]
    assert all(isinstance(n.meta["debug_handle"], int) and n.meta["debug_handle"] > 0
               for n in calls)
    assert all("debug_handle" not in n.meta for n in nodes if n.op in ("placeholder", "output"))
    by_name = {n.name: n.meta["debug_handle"] for n in calls}
    # The two ops silu became share silu's handle; distinct sources differ.
    assert by_name["sigmoid"] == by_name["mul"]
    assert by_name["convolution"] != by_name["sigmoid"]
    assert len(set(by_name.values())) == len(calls) - 1


def test_debug_handle_map_names_each_instructions_node():
    _, edge, prog = _export()
    handle_map = prog.debug_handle_map["forward"]
    plan = prog.program.execution_plan[0]
    instructions = plan.chains[0].instructions
    nodes_by_handle = {}
    for n in edge.exported_program().graph.nodes:
        if n.op == "call_function":
            nodes_by_handle.setdefault(n.meta["debug_handle"], []).append(n)
    assert len(handle_map) == sum(isinstance(i.instr_args, schema.KernelCall)
                                  for i in instructions)
    for index, handle in handle_map.items():
        op = plan.operators[instructions[index].instr_args.op_index]
        node_ops = {n.target._schema.name.split("::")[1] for n in nodes_by_handle[handle]}
        assert op.name.split("::")[1] in node_ops or op.name.endswith("_copy"), (index, op, node_ops)
    assert prog.delegate_map == {"forward": {}}


def test_delegate_call_maps_to_its_partitions_handles():
    _, edge, prog = _export(XnnpackPartitioner())
    plan = prog.program.execution_plan[0]
    kinds = [type(i.instr_args).__name__ for i in plan.chains[0].instructions]
    handle_map = prog.debug_handle_map["forward"]
    delegate_indices = [i for i, k in enumerate(kinds) if k == "DelegateCall"]
    assert delegate_indices
    graph = edge.exported_program().graph_module
    for index in delegate_indices:
        call = plan.chains[0].instructions[index].instr_args
        assert isinstance(handle_map[index], list) and handle_map[index] == sorted(handle_map[index])
        outs = prog.instruction_id_to_num_outs_map["forward"][index]
        assert outs >= 1
    lowered = [m for m in graph.children() if hasattr(m, "original_module")]
    expected = sorted({n.meta["debug_handle"] for m in lowered
                       for n in m.original_module.graph.nodes if n.op == "call_function"})
    assert sorted(h for i in delegate_indices for h in handle_map[i]) == expected


class _MappedBackend(TestBackend):
    """The test backend, also reporting delegate debug id -> handles."""

    @staticmethod
    def preprocess(graph_module, compile_specs):
        blob = TestBackend.preprocess(graph_module, compile_specs).processed_bytes
        calls = [n for n in graph_module.graph.nodes if n.op == "call_function"]
        return PreprocessResult(blob, {i: [n.meta["debug_handle"]] for i, n in enumerate(calls)})


register_backend("MappedTestBackend", _MappedBackend)


class _MappedPartitioner(TestBackendPartitioner):
    def partition(self, exported_program):
        result = super().partition(exported_program)
        for spec in result.partition_tags.values():
            spec.backend_id = "MappedTestBackend"
        return result


class _Adds(torch.nn.Module):
    def forward(self, x, y):
        return (x * 2 + y) * y


def test_backend_debug_map_becomes_delegate_map():
    ep = torch.export.export(_Adds(), (torch.randn(3), torch.randn(3)))
    edge = torchlight.to_edge(ep).to_backend(_MappedPartitioner())
    prog = edge.to_executorch()
    delegate_map = prog.delegate_map["forward"]
    (index,) = delegate_map
    entry = delegate_map[index]
    assert entry["name"] == "MappedTestBackend"
    handles = sorted(h for hs in entry["delegate_map"].values() for h in hs)
    assert handles == prog.debug_handle_map["forward"][index]
    assert len(entry["delegate_map"]) == 3  # mul, add, mul
