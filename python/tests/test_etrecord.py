"""Debug handles (to_edge), the emitter's instruction -> handle maps, and
ETRecord files (spec section 3): writing, reading, rejecting."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import torch

import torchlight
from torchlight.backends.xnnpack.partitioner import XnnpackPartitioner
from torchlight.devtools import ETRecord, generate_etrecord, parse_etrecord
from torchlight.devtools.etrecord import ETRecordError
from torchlight.pte import schema

from torchlight.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from torchlight.devtools.bundled_program.core import BundledProgram

from mapped_backend import MAPPED_BACKEND_ID, Adds, MappedPartitioner


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
    # A fused call (passes/fuse_llm_chains.py) keeps the handle of the chain it replaced.
    fused_from = {"torchlight::silu": {"mul", "sigmoid"},
                  "torchlight::rms_norm": {"pow", "mean", "add", "rsqrt", "mul"},
                  "torchlight::rope": {"select", "mul", "sub", "add", "unsqueeze", "cat"}}
    for index, handle in handle_map.items():
        op = plan.operators[instructions[index].instr_args.op_index]
        node_ops = {n.target._schema.name.split("::")[1] for n in nodes_by_handle[handle]}
        assert op.name.split("::")[1] in node_ops or op.name.endswith("_copy") or \
            node_ops <= fused_from.get(op.name, set()), (index, op, node_ops)
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


def test_backend_debug_map_becomes_delegate_map():
    ep = torch.export.export(Adds(), (torch.randn(3), torch.randn(3)))
    edge = torchlight.to_edge(ep).to_backend(MappedPartitioner())
    prog = edge.to_executorch()
    delegate_map = prog.delegate_map["forward"]
    (index,) = delegate_map
    entry = delegate_map[index]
    assert entry["name"] == MAPPED_BACKEND_ID
    handles = sorted(h for hs in entry["delegate_map"].values() for h in hs)
    assert handles == prog.debug_handle_map["forward"][index]
    assert len(entry["delegate_map"]) == 3  # mul, add, mul


def _etrecord_bytes(ep, edge, prog, **kw) -> bytes:
    buffer = io.BytesIO()
    generate_etrecord(buffer, edge, prog, exported_program=ep, **kw)
    return buffer.getvalue()


def test_etrecord_round_trip(tmp_path):
    ep, edge, prog = _export()
    x = _inputs()[0]
    expected = MODEL(x)
    cases = [MethodTestCase([x], [expected]), MethodTestCase([x + 1], [expected])]
    bundled = BundledProgram(prog, [MethodTestSuite("forward", cases)])
    path = tmp_path / "etrecord.bin"
    generate_etrecord(path, edge, prog, exported_program=ep, bundled_program=bundled,
                      extra_recorded_export_modules={"edge_after_transform": edge})
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert names[0] == "ETRECORD_V0" and z.getinfo("ETRECORD_V0").file_size == 0
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        for base in ("exported_program", "edge_dialect_exported_program/forward",
                     "edge_after_transform/forward"):
            assert {base + s for s in ("", "_state_dict", "_constants", "_example_inputs")} \
                <= set(names)
        stored_map = json.loads(z.read("debug_handle_map"))
        graph_json = json.loads(z.read("edge_dialect_exported_program/forward"))
    assert stored_map == {"forward": {str(k): v for k, v in
                                      prog.debug_handle_map["forward"].items()}}
    stored_nodes = graph_json["graph_module"]["graph"]["nodes"]
    assert all(isinstance(n["metadata"]["debug_handle"], str) for n in stored_nodes)

    record = parse_etrecord(path)
    assert record._debug_handle_map == stored_map
    assert record._instruction_id_to_num_outs_map == {"forward": {}}
    edge_ep = record.edge_dialect_program
    assert _handles(edge_ep) == _handles(edge.exported_program())
    conv = next(n for n in edge_ep.graph.nodes if n.name == "convolution")
    assert "self.conv(x)" in conv.meta["stack_trace"]
    assert any("conv" in path for path, _ in conv.meta["nn_module_stack"].values())
    # Handles were copied back onto the ATen program, silu keeping its own.
    aten = _handles(record.exported_program)
    assert aten["silu"] == _handles(edge_ep)["sigmoid"] and aten["conv2d"] == conv.meta["debug_handle"]
    assert record.export_graph_id == id(ep.graph)
    assert list(record.graph_map) == ["edge_after_transform/forward"]
    assert torch.equal(record._representative_inputs[0], x)
    assert [len(c) for c in record._reference_outputs["forward"]] == [1, 1]
    assert torch.equal(record._reference_outputs["forward"][1][0], expected)
    # The recorded program still runs and gives the model's answer.
    torch.testing.assert_close(_run(edge_ep, x), expected)


def test_delegated_program_is_recorded_with_partitions_inlined():
    ep, edge, prog = _export(XnnpackPartitioner())
    record = parse_etrecord(io.BytesIO(_etrecord_bytes(ep, edge, prog)))
    recorded = {h for n in record.edge_dialect_program.graph.nodes
                if (h := n.meta.get("debug_handle")) is not None}
    mapped = set()
    for value in prog.debug_handle_map["forward"].values():
        mapped |= set(value) if isinstance(value, list) else {value}
    assert mapped <= recorded
    x = _inputs()[0]
    torch.testing.assert_close(_run(record.edge_dialect_program, x), MODEL(x))


def test_several_methods_give_a_dict():
    eps = {"forward": torch.export.export(Net(), _inputs()),
           "other": torch.export.export(Adds(), (torch.randn(3), torch.randn(3)))}
    edge = torchlight.to_edge(eps)
    prog = edge.to_executorch()
    buffer = io.BytesIO()
    generate_etrecord(buffer, edge, prog)
    record = parse_etrecord(io.BytesIO(buffer.getvalue()))
    assert sorted(record.edge_dialect_program) == ["forward", "other"]
    assert sorted(record._debug_handle_map) == ["forward", "other"]
    assert record.exported_program is None


def test_not_an_etrecord(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"not a zip")
    with pytest.raises(ETRecordError, match="not a ZIP"):
        parse_etrecord(path)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("debug_handle_map", "{}")
    with pytest.raises(ETRecordError, match="no ETRECORD_V0 entry"):
        parse_etrecord(path)


def test_legacy_layout_is_read(tmp_path):
    """The 2023 layout (spec 3.5): one bare edge entry, only _state_dict
    companions, maps not keyed by method, no num-outs map."""
    ep, edge, prog = _export()
    current = zipfile.ZipFile(io.BytesIO(_etrecord_bytes(ep, edge, prog)))
    path = tmp_path / "legacy.bin"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ETRECORD_V0", "")
        for old, new in (("aten_dialect_output/forward", "exported_program"),
                         ("edge_dialect_exported_program", "edge_dialect_exported_program/forward")):
            z.writestr(old, current.read(new))
            z.writestr(old + "_state_dict", current.read(new + "_state_dict"))
        z.writestr("debug_handle_map", json.dumps({"0": 1, "1": [2, 3]}))
        z.writestr("delegate_map", "{}")
    record = parse_etrecord(path)
    assert record._debug_handle_map == {"forward": {"0": 1, "1": [2, 3]}}
    assert record._delegate_map == {"forward": {}}
    assert record._instruction_id_to_num_outs_map is None
    assert list(record.graph_map) == ["aten_dialect_output/forward"]
    assert _handles(record.edge_dialect_program) == _handles(edge.exported_program())


def test_corrupt_program_entry_is_named(tmp_path):
    ep, edge, prog = _export()
    current = zipfile.ZipFile(io.BytesIO(_etrecord_bytes(ep, edge, prog)))
    path = tmp_path / "bad.bin"
    with zipfile.ZipFile(path, "w") as z:
        for name in current.namelist():
            data = current.read(name)
            z.writestr(name, b"{not json" if name == "edge_dialect_exported_program/forward"
                       else data)
    with pytest.raises(ETRecordError, match="edge_dialect_exported_program/forward"):
        parse_etrecord(path)


def test_damaged_file_is_a_clean_error(tmp_path):
    ep, edge, prog = _export()
    data = _etrecord_bytes(ep, edge, prog)
    path = tmp_path / "cut.bin"
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(ETRecordError, match="truncated or damaged ETRecord"):
        parse_etrecord(path)
    damaged = bytearray(data)
    start = damaged.index(b'{"forward": {"0"')  # debug_handle_map, stored uncompressed
    damaged[start + 14] ^= 0x01
    path.write_bytes(bytes(damaged))
    with pytest.raises(ETRecordError, match="debug_handle_map"):
        parse_etrecord(path)


def test_save_refusals(tmp_path):
    ep, edge, prog = _export()
    with pytest.raises(ETRecordError, match="debug handle map"):
        ETRecord(edge_dialect_program=edge.exported_program()).save(tmp_path / "a")
    with pytest.raises(ETRecordError, match="reserved"):
        ETRecord(edge_dialect_program=edge.exported_program(), _debug_handle_map={},
                 graph_map={"my_delegate_map/forward": ep}).save(tmp_path / "b")
    with pytest.raises(ETRecordError, match="ExecutorchProgramManager"):
        generate_etrecord(tmp_path / "c", edge, object())


def test_upstream_module_paths():
    import executorch.devtools as devtools
    from executorch.devtools.etrecord import parse_etrecord as upstream_parse
    assert devtools.generate_etrecord is generate_etrecord and devtools.ETRecord is ETRecord
    assert upstream_parse is parse_etrecord
