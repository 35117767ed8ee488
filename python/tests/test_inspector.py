"""The Inspector on synthetic ETDumps (written with our ETDump writer) of
small exported models with generated ETRecords: event blocks and timing
statistics, the join with ETRecord, tables, and the numeric comparison
finding an error injected into one logged intermediate output."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch

import torchlight
from torchlight.devtools import Inspector, generate_etrecord, parse_etrecord
from torchlight.devtools.etdump.schema_flatcc import (Bool, DebugEvent, ETDump, Event,
                                                      ProfileEvent, RunData, Tensor, Value,
                                                      ValueType)
from torchlight.devtools.etdump.serialize import serialize_to_etdump_flatcc
from torchlight.devtools.inspector import DebugBufferError, TimeScale
from torchlight.pte import schema
from torchlight.pte.schema import ScalarType

from torchlight.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from torchlight.devtools.bundled_program.core import BundledProgram

from mapped_backend import MAPPED_BACKEND_ID, Adds, MappedPartitioner


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.mean((2, 3))).softmax(-1)


MODEL = ConvNet().eval()
INPUTS = (torch.randn(1, 2, 6, 6),)
_SCALAR = {torch.float32: ScalarType.FLOAT, torch.int64: ScalarType.LONG,
           torch.int32: ScalarType.INT, torch.bool: ScalarType.BOOL}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(edge manager, program manager, ETRecord path) of ConvNet."""
    ep = torch.export.export(MODEL, INPUTS)
    edge = torchlight.to_edge(ep)
    prog = edge.to_executorch()
    path = tmp_path_factory.mktemp("etrecord") / "etrecord.bin"
    case = MethodTestCase(list(INPUTS), [MODEL(*INPUTS)])
    bundled = BundledProgram(prog, [MethodTestSuite("forward", [case])])
    generate_etrecord(path, edge, prog, exported_program=ep, bundled_program=bundled)
    return edge, prog, path


def _node_outputs(edge_ep, inputs):
    """handle -> [(node, value)] of the edge graph run eagerly: what a
    correct runtime logs for each instruction."""
    gm = edge_ep.module()
    found = {}

    class Capture(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            if node.op == "call_function" and "debug_handle" in node.meta:
                found.setdefault(node.meta["debug_handle"], []).append((node, result))
            return result

    with torch.no_grad():
        Capture(gm).run(*inputs)
    assert found, "the unlifted module lost the debug handles"
    return found


def _op_names(prog):
    plan = prog.program.execution_plan[0]
    names = {}
    for i, instruction in enumerate(plan.chains[0].instructions):
        args = instruction.instr_args
        if isinstance(args, schema.KernelCall):
            op = plan.operators[args.op_index]
            names[i] = (op.name, op.overload)
        elif isinstance(args, schema.DelegateCall):
            names[i] = ("DELEGATE_CALL", "")
    return names


def synthetic_trace(edge, prog, runs=3, inject=None, kernel_events=True, simulate_with=None):
    """(ETDump bytes, debug buffer) as the runtime would write them:
    a Default block, then `runs` Execute blocks, each instruction with a
    native_call_<op> and an OPERATOR_CALL span and its output logged into
    the debug buffer (64-byte aligned). Instruction i takes (i+1) us times
    the run number. `inject` = (instruction, delta) adds delta to that
    instruction's logged output. `simulate_with` is the program whose eager
    run gives the values (default: the edge program)."""
    outputs = _node_outputs(simulate_with or edge.exported_program(), INPUTS)
    handle_map = prog.debug_handle_map["forward"]
    names = _op_names(prog)
    buffer = bytearray()
    debug_events = []
    for index, (name, overload) in names.items():
        handle = handle_map[index]
        if isinstance(handle, list):
            # A delegate call logs every argument: an input, then its output
            # (the partition's last node, which has its highest handle).
            value = outputs[max(handle)][-1][1]
            offset = (len(buffer) + 63) // 64 * 64
            buffer.extend(bytes(offset - len(buffer)))
            buffer.extend(INPUTS[0].numpy().tobytes())
            debug_events.append(Event(debug_event=DebugEvent(
                chain_index=0, instruction_id=index, debug_entry=Value(
                    val=ValueType.Tensor, tensor=Tensor(ScalarType.FLOAT, list(INPUTS[0].shape),
                                                        list(INPUTS[0].stride()), offset)))))
        else:
            candidates = outputs[handle]
            short = name.split("::")[1]
            value = next((v for n, v in candidates
                          if n.target._schema.name.split("::")[1] in (short, short[:-5])),
                         candidates[-1][1])
        if isinstance(value, (tuple, list)):
            value = value[0]
        value = value.detach().contiguous()
        if inject is not None and inject[0] == index:
            value = value + inject[1]
        offset = (len(buffer) + 63) // 64 * 64
        buffer.extend(bytes(offset - len(buffer)))
        buffer.extend(value.numpy().tobytes())
        strides = list(value.stride())
        debug_events.append(Event(debug_event=DebugEvent(
            chain_index=0, instruction_id=index, debug_entry=Value(
                val=ValueType.Tensor, tensor=Tensor(_SCALAR[value.dtype], list(value.shape),
                                                    strides, offset)))))
    run_data = [RunData(name="Default", events=[
        Event(profile_event=ProfileEvent(name="Method::init", chain_index=-1, instruction_id=0,
                                         start_time=100, end_time=22584)),
        Event(profile_event=ProfileEvent(name="Program::load_method", chain_index=-1,
                                         instruction_id=0, start_time=50, end_time=24907))])]
    for run in range(1, runs + 1):
        events, clock = [], 1_000_000 * run
        for index, (name, overload) in names.items():
            elapsed = (index + 1) * 1000 * run
            if kernel_events and name != "DELEGATE_CALL":
                events.append(Event(profile_event=ProfileEvent(
                    name=f"native_call_{name.split('::')[1]}.{overload}", chain_index=0,
                    instruction_id=index, start_time=clock + 1, end_time=clock + 1 + elapsed)))
            events.append(Event(profile_event=ProfileEvent(
                name="OPERATOR_CALL" if name != "DELEGATE_CALL" else name, chain_index=0,
                instruction_id=index, start_time=clock, end_time=clock + elapsed + 2)))
            events.extend(e for e in debug_events
                          if e.debug_event.instruction_id == index)
            clock += elapsed + 10
        events.append(Event(profile_event=ProfileEvent(
            name="Method::execute", chain_index=-1, instruction_id=0,
            start_time=1_000_000 * run - 5, end_time=clock)))
        run_data.append(RunData(name="Execute", events=events))
    data = serialize_to_etdump_flatcc(ETDump(run_data=run_data), size_prefixed=True)
    return data, bytes(buffer)


def _inspector(tmp_path, edge, prog, etrecord, **kw):
    data, buffer = synthetic_trace(edge, prog, **{k: v for k, v in kw.items()
                                                   if k in ("runs", "inject", "kernel_events",
                                                            "simulate_with")})
    (tmp_path / "trace.etdp").write_bytes(data)
    (tmp_path / "debug.bin").write_bytes(buffer)
    return Inspector(etdump_path=tmp_path / "trace.etdp", etrecord=etrecord,
                     debug_buffer_path=tmp_path / "debug.bin")


def test_runs_merge_into_one_block_with_statistics(tmp_path, exported):
    edge, prog, etrecord = exported
    inspector = _inspector(tmp_path, edge, prog, etrecord, runs=3)
    assert [b.name for b in inspector.event_blocks] == ["Default", "Execute"]
    default, execute = inspector.event_blocks
    assert [e.name for e in default.events] == ["Method::init", "Program::load_method"]
    assert default.events[0].perf_data.raw == [pytest.approx(0.022484)]
    names = _op_names(prog)
    conv = next(e for e in execute.events if e.name == "native_call_convolution.out")
    index = conv.instruction_id
    raw = [(index + 1) * 1000 * run / 1e6 for run in (1, 2, 3)]
    assert conv.perf_data.raw == pytest.approx(raw)
    for stat, expected in (("p10", np.percentile(raw, 10)), ("p50", np.percentile(raw, 50)),
                           ("p90", np.percentile(raw, 90)), ("avg", np.mean(raw)),
                           ("min", min(raw)), ("max", max(raw))):
        assert getattr(conv.perf_data, stat) == pytest.approx(expected), stat
    assert conv.perf_data.p10 == pytest.approx(raw[0] + 0.2 * (raw[1] - raw[0]))
    operator_calls = [e for e in execute.events if e.name == "OPERATOR_CALL"]
    assert len(operator_calls) == len(names)
    assert execute.events[-1].name == "Method::execute"


def test_events_name_their_nodes(tmp_path, exported):
    edge, prog, etrecord = exported
    inspector = _inspector(tmp_path, edge, prog, etrecord, runs=1)
    execute = inspector.event_blocks[1]
    conv = next(e for e in execute.events if e.name == "native_call_convolution.out")
    assert conv.op_types == ["aten.convolution.default"]
    assert conv.debug_handles == prog.debug_handle_map["forward"][conv.instruction_id]
    (trace,) = conv.stack_traces.values()
    assert "self.conv(x)" in trace
    (stack,) = conv.module_hierarchy.values()
    assert any(path.endswith("conv") for path, _ in stack.values())
    assert conv.is_delegated_op is False and conv.delegate_backend_name is None
    assert isinstance(conv.debug_data[0], torch.Tensor)
    execute_span = execute.events[-1]
    assert execute_span.op_types == [] and execute_span.stack_traces == {}
    # The ETRecord's bundled expected output is the block's reference.
    torch.testing.assert_close(execute.reference_output[0], MODEL(*INPUTS))


def test_tables_and_module_totals(tmp_path, exported):
    edge, prog, etrecord = exported
    inspector = _inspector(tmp_path, edge, prog, etrecord, runs=2)
    df = inspector.to_dataframe()
    assert {"event_block_name", "event_name", "p10 (ms)", "p50 (ms)", "p90 (ms)", "avg (ms)",
            "min (ms)", "max (ms)", "op_types", "stack_traces", "module_hierarchy",
            "is_delegated_op", "delegate_backend_name", "debug_data"} <= set(df.columns)
    assert (df["event_name"] == "OPERATOR_CALL").sum() == len(_op_names(prog))
    out = io.StringIO()
    inspector.print_data_tabular(file=out)
    text = out.getvalue()
    assert "OPERATOR_CALL" not in text
    assert "native_call_convolution.out" in text and "Method::execute" in text
    # conv's kernel alone sits in module conv; fc's linear in fc.
    execute = inspector.event_blocks[1]
    conv = next(e for e in execute.events if e.name == "native_call_convolution.out")
    assert inspector.find_total_for_module("conv") == pytest.approx(conv.perf_data.avg)
    fc_events = [e for e in execute.events if e.name != "OPERATOR_CALL" and any(
        path.endswith("fc") for s in e.module_hierarchy.values() if s for path, _ in s.values())]
    assert fc_events
    assert inspector.find_total_for_module("fc") == pytest.approx(
        sum(e.perf_data.avg for e in fc_events))
    assert inspector.find_total_for_module("no_such_module") == 0.0


def test_numeric_gap_is_zero_for_a_faithful_trace(tmp_path, exported):
    edge, prog, etrecord = exported
    inspector = _inspector(tmp_path, edge, prog, etrecord, runs=1)
    df = inspector.calculate_numeric_gap("MSE")
    handles = {h for v in prog.debug_handle_map["forward"].values()
               for h in (v if isinstance(v, list) else [v])}
    assert len(df) == len(handles)
    assert all(g[0] < 1e-12 for g in df["gap"])
    assert inspector.find_first_numeric_gap(1e-9) is None
    assert all(g[0] == math.inf or g[0] > 100 for g in inspector.calculate_numeric_gap("SNR")["gap"])


@pytest.mark.parametrize("kernel_events", [True, False])
def test_numeric_gap_finds_an_injected_error(tmp_path, exported, kernel_events):
    edge, prog, etrecord = exported
    names = _op_names(prog)
    target = next(i for i, (n, _) in names.items() if n == "aten::relu")
    inspector = _inspector(tmp_path, edge, prog, etrecord, runs=1, inject=(target, 0.5),
                           kernel_events=kernel_events)
    mse = inspector.calculate_numeric_gap("MSE")
    row = mse[mse["instruction_id"] == target].iloc[0]
    assert row["gap"][0] == pytest.approx(0.25)
    assert row["aot_ops"] == ["aten.relu.default"]
    assert torch.allclose(row["runtime_intermediate_output"] - row["aot_intermediate_output"],
                          torch.full_like(row["aot_intermediate_output"], 0.5), atol=1e-6)
    others = mse[mse["instruction_id"] != target]
    assert all(g[0] < 1e-12 for g in others["gap"])
    l1 = inspector.calculate_numeric_gap("L1")
    numel = row["aot_intermediate_output"].numel()
    assert l1[l1["instruction_id"] == target].iloc[0]["gap"][0] == pytest.approx(0.5 * numel)
    first = inspector.find_first_numeric_gap(1e-6)
    assert first is not None and first["instruction_id"] == target
    assert "torch.relu" in next(iter(first["stacktraces"].values()))
    snr_first = inspector.find_first_numeric_gap(60.0, distance="SNR")
    assert snr_first["instruction_id"] == target


def test_numeric_gap_through_xnnpack_delegate_calls(tmp_path):
    from torchlight.backends.xnnpack.partitioner import XnnpackPartitioner
    ep = torch.export.export(MODEL, INPUTS)
    edge = torchlight.to_edge(ep).to_backend(XnnpackPartitioner())
    prog = edge.to_executorch()
    record = tmp_path / "etrecord.bin"
    case = MethodTestCase(list(INPUTS), [MODEL(*INPUTS)])
    bundled = BundledProgram(prog, [MethodTestSuite("forward", [case])])
    generate_etrecord(record, edge, prog, exported_program=ep, bundled_program=bundled)
    names = _op_names(prog)
    delegate = next(i for i, (n, _) in names.items() if n == "DELEGATE_CALL")
    # Delegated nodes run eagerly only in the recorded (inlined) program.
    inlined = parse_etrecord(record).edge_dialect_program
    clean = _inspector(tmp_path, edge, prog, record, runs=1, simulate_with=inlined)
    df = clean.calculate_numeric_gap("MSE")
    assert delegate in set(df["instruction_id"]) and all(g[0] < 1e-10 for g in df["gap"])
    call = next(e for e in clean.event_blocks[1].events if e.name == "DELEGATE_CALL")
    assert call.debug_handles == prog.debug_handle_map["forward"][delegate]
    assert len(call.op_types) >= 2  # every node of the partition
    broken = _inspector(tmp_path, edge, prog, record, runs=1, inject=(delegate, -1.0),
                        simulate_with=inlined)
    first = broken.find_first_numeric_gap(1e-6)
    assert first["instruction_id"] == delegate and first["runtime_event_name"] == "DELEGATE_CALL"
    assert first["gap"][0] == pytest.approx(1.0)


def test_numeric_gap_needs_values(tmp_path, exported):
    edge, prog, etrecord = exported
    data, _ = synthetic_trace(edge, prog, runs=1)
    with pytest.raises(ValueError, match="ETRecord"):
        Inspector(etdump_data=data).calculate_numeric_gap()
    record = parse_etrecord(etrecord)
    record._representative_inputs = None
    with pytest.raises(ValueError, match="representative inputs"):
        Inspector(etdump_data=data, etrecord=record).calculate_numeric_gap()
    with pytest.raises(ValueError, match="unknown distance"):
        Inspector(etdump_data=data, etrecord=etrecord).calculate_numeric_gap("cosine")


def test_debug_buffer_too_small_is_a_clean_error(tmp_path, exported):
    edge, prog, etrecord = exported
    data, buffer = synthetic_trace(edge, prog, runs=1)
    (tmp_path / "short.bin").write_bytes(buffer[:len(buffer) // 2])
    with pytest.raises(DebugBufferError, match=r"instruction \d+.*offset \d+.*debug buffer"):
        Inspector(etdump_data=data, debug_buffer_path=tmp_path / "short.bin")
    # Without a buffer, tensors read as zeros of the logged shape.
    inspector = Inspector(etdump_data=data)
    value = inspector.event_blocks[1].events[0].debug_data[0]
    assert isinstance(value, torch.Tensor) and not value.any()


def _profile(name, start, end, instr=0, chain=0, **kw):
    return Event(profile_event=ProfileEvent(name=name, chain_index=chain, instruction_id=instr,
                                            start_time=start, end_time=end, **kw))


def test_spec_worked_example_without_etrecord():
    """Spec 4's table for the tutorial's etdump.etdp: one sample per event."""
    trace = ETDump(run_data=[
        RunData(name="Default", events=[_profile("Method::init", 0, 22484, chain=-1),
                                        _profile("Program::load_method", 0, 24857, chain=-1)]),
        RunData(name="Execute", events=[
            _profile("native_call_convolution.out", 426786, 971569),
            _profile("OPERATOR_CALL", 425624, 972440),
            _profile("Method::execute", 0, 1898821, chain=-1)])])
    inspector = Inspector(etdump_data=serialize_to_etdump_flatcc(trace))
    values = {e.name: e.perf_data for b in inspector.event_blocks for e in b.events}
    assert values["Method::init"].avg == pytest.approx(0.022484)
    assert values["native_call_convolution.out"].p90 == pytest.approx(0.544783)
    assert values["OPERATOR_CALL"].min == pytest.approx(0.546816)
    assert values["Method::execute"].max == pytest.approx(1.898821)


def test_program_outputs_and_reference_case(tmp_path, exported):
    """A DebugEvent marked output is the block's run_output, not an event;
    bundled_input_index picks the ETRecord's reference case (-1: the last)."""
    edge, prog, etrecord = exported
    record = parse_etrecord(etrecord)
    cases = [[torch.full((1, 3), float(i))] for i in range(3)]
    record.update_reference_outputs({"forward": cases})
    value = torch.arange(3, dtype=torch.float32).reshape(1, 3)
    (tmp_path / "debug.bin").write_bytes(value.numpy().tobytes())
    output = Event(debug_event=DebugEvent(
        chain_index=2**64 - 1, instruction_id=0, debug_entry=Value(
            val=ValueType.Tensor, tensor=Tensor(ScalarType.FLOAT, [1, 3], [3, 1], 0),
            output=Bool(True))))
    trace = ETDump(run_data=[
        RunData(name="Execute", bundled_input_index=1, events=[_profile("a", 0, 5), output]),
        RunData(name="Execute", events=[_profile("a", 0, 5), output])])
    inspector = Inspector(etdump_data=serialize_to_etdump_flatcc(trace), etrecord=record,
                          debug_buffer_path=tmp_path / "debug.bin")
    first, second = inspector.event_blocks
    assert [e.name for e in first.events] == ["a"]
    assert torch.equal(first.run_output[0], value)
    assert torch.equal(first.reference_output[0], cases[1][0])
    assert second.bundled_input_index is None
    assert torch.equal(second.reference_output[0], cases[2][0])


def test_time_scales_and_wraparound():
    start = 2**32 - 10
    trace = ETDump(run_data=[RunData(name="Execute", events=[_profile("op", start, 5)])])
    data = serialize_to_etdump_flatcc(trace)
    (event,) = Inspector(etdump_data=data, source_time_scale="us",
                         target_time_scale="us").event_blocks[0].events
    assert event.perf_data.raw == [14]  # (2^32 - 1 - start) + end
    (event,) = Inspector(etdump_data=data, source_time_scale=TimeScale.S,
                         target_time_scale=TimeScale.MS).event_blocks[0].events
    assert event.perf_data.raw == [14000]
    with pytest.raises(ValueError, match="cycles"):
        Inspector(etdump_data=data, source_time_scale="cycles")


def test_different_runs_stay_separate_blocks():
    trace = ETDump(run_data=[RunData(name="Execute", events=[_profile("a", 0, 10)]),
                             RunData(name="Execute", events=[_profile("b", 0, 10)]),
                             RunData(name="Execute", events=[_profile("a", 0, 30)])])
    blocks = Inspector(etdump_data=serialize_to_etdump_flatcc(trace),
                       target_time_scale="ns").event_blocks
    assert [[e.name for e in b.events] for b in blocks] == [["a"], ["b"]]
    assert blocks[0].events[0].perf_data.raw == [10, 30]


def test_delegate_rows(tmp_path):
    ep = torch.export.export(Adds(), (torch.randn(3), torch.randn(3)))
    edge = torchlight.to_edge(ep).to_backend(MappedPartitioner())
    prog = edge.to_executorch()
    record_path = tmp_path / "etrecord.bin"
    generate_etrecord(record_path, edge, prog)
    (index,) = prog.delegate_map["forward"]
    inner = [Event(profile_event=ProfileEvent(chain_index=0, instruction_id=index,
                                              delegate_debug_id_int=i, delegate_debug_metadata=b"",
                                              start_time=100 * i, end_time=100 * i + 50))
             for i in range(3)]
    trace = ETDump(run_data=[RunData(name="Execute", events=inner + [
        _profile("DELEGATE_CALL", 0, 400, instr=index)])])
    inspector = Inspector(etdump_data=serialize_to_etdump_flatcc(trace, size_prefixed=True),
                          etrecord=record_path)
    events = inspector.event_blocks[0].events
    assert [e.name for e in events] == ["0", "1", "2", "DELEGATE_CALL"]
    nodes = [n for n in edge.exported_program().graph_module.lowered_module_0.original_module
             .graph.nodes if n.op == "call_function"]
    for i, event in enumerate(events[:3]):
        assert event.is_delegated_op and event.delegate_debug_identifier == i
        assert event.delegate_backend_name == MAPPED_BACKEND_ID
        assert event.debug_handles == [nodes[i].meta["debug_handle"]]
        assert event.op_types == [str(nodes[i].target)]
        assert event.perf_data.raw == [pytest.approx(50 / 1e6)]
        assert event.delegate_debug_metadatas == [b""]
    call = events[3]
    assert call.is_delegated_op is False and call.delegate_backend_name == MAPPED_BACKEND_ID
    assert sorted(call.op_types) == sorted(str(n.target) for n in nodes)
    text = io.StringIO()
    inspector.print_data_tabular(file=text)
    assert MAPPED_BACKEND_ID in text.getvalue()


def test_numeric_gap_prefers_a_delegates_inner_values(tmp_path):
    """When the backend logs each delegated node's output, those rows are
    compared and the DELEGATE_CALL (covering the same handles) is not."""
    x, y = torch.randn(3), torch.randn(3)
    ep = torch.export.export(Adds(), (x, y))
    edge = torchlight.to_edge(ep).to_backend(MappedPartitioner())
    prog = edge.to_executorch()
    record_path = tmp_path / "etrecord.bin"
    generate_etrecord(record_path, edge, prog, bundled_program=BundledProgram(
        prog, [MethodTestSuite("forward", [MethodTestCase([x, y], [Adds()(x, y)])])]))
    (index,) = prog.delegate_map["forward"]
    inner_values = [x * 2, x * 2 + y + 0.25, (x * 2 + y) * y]  # the add is off by 0.25
    buffer = bytearray()
    events = []

    def log(value, **ids):
        offset = (len(buffer) + 63) // 64 * 64
        buffer.extend(bytes(offset - len(buffer)) + value.numpy().tobytes())
        events.append(Event(debug_event=DebugEvent(chain_index=0, instruction_id=index, **ids,
                                                   debug_entry=Value(val=ValueType.Tensor,
                                                                     tensor=Tensor(
                                                                         ScalarType.FLOAT, [3],
                                                                         [1], offset)))))

    for i, value in enumerate(inner_values):
        events.append(Event(profile_event=ProfileEvent(
            chain_index=0, instruction_id=index, delegate_debug_id_int=i, start_time=0,
            end_time=10)))
        log(value, delegate_debug_id_int=i)
    events.append(_profile("DELEGATE_CALL", 0, 40, instr=index))
    for value in (x, y, inner_values[-1]):
        log(value)
    (tmp_path / "debug.bin").write_bytes(bytes(buffer))
    inspector = Inspector(etdump_data=serialize_to_etdump_flatcc(ETDump(run_data=[
        RunData(name="Execute", events=events)])), etrecord=record_path,
        debug_buffer_path=tmp_path / "debug.bin")
    df = inspector.calculate_numeric_gap("MSE")
    assert list(df["runtime_event_name"]) == ["0", "1", "2"]
    assert [g[0] for g in df["gap"]] == pytest.approx([0.0, 0.0625, 0.0])
    assert inspector.find_first_numeric_gap(1e-6)["runtime_event_name"] == "1"


def test_upstream_module_paths(exported):
    from executorch.devtools import Inspector as UpstreamInspector
    from executorch.devtools.inspector import TimeScale as UpstreamTimeScale
    assert UpstreamInspector is Inspector and UpstreamTimeScale is TimeScale
