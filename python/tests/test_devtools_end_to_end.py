"""The devtools chain as a user runs it: export with an ETRecord (with a
bundled program's inputs), run in the C++ runtime with an ETDump tracer and a
debug buffer, then read both with the Inspector. The other devtools tests use
synthetic traces; this one joins the real writer to the real reader."""

from __future__ import annotations

import io

import torch

from torchlight.exir import to_edge_transform_and_lower
from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from torchlight.devtools import Inspector, generate_etrecord
from torchlight.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from torchlight.devtools.bundled_program.core import BundledProgram


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.mean((2, 3))).softmax(-1)


def _traced_run(runtime, tmp_path, partitioner=None, runs=3):
    torch.manual_seed(0)
    model = ConvNet().eval()
    inputs = (torch.randn(1, 3, 10, 10),)
    ep = torch.export.export(model, inputs)
    edge = to_edge_transform_and_lower(
        ep, partitioner=[partitioner] if partitioner is not None else None)
    et = edge.to_executorch()
    bundled = BundledProgram(et, [MethodTestSuite(
        "forward", [MethodTestCase(inputs=inputs, expected_outputs=(model(*inputs),))])])
    etrecord = tmp_path / "etrecord.bin"
    generate_etrecord(etrecord, edge, et, exported_program=ep, bundled_program=bundled)
    etdump = tmp_path / "trace.etdp"
    module = runtime.load(et.buffer, etdump_path=etdump, debug_buffer_size=1 << 20)
    for _ in range(runs):
        (out,) = module.forward(*inputs)
    torch.testing.assert_close(out, model(*inputs), rtol=1e-5, atol=1e-6)
    return et, Inspector(etdump_path=etdump, etrecord=etrecord,
                         debug_buffer_path=module.debug_buffer_path)


def test_inspector_reads_the_runtimes_trace_of_a_cnn(runtime, tmp_path):
    et, inspector = _traced_run(runtime, tmp_path)
    execute = [b for b in inspector.event_blocks if b.name == "Execute"]
    assert len(execute) == 1  # Three runs with one signature merge into one block.
    kernel_events = [e for e in execute[0].events if e.name.startswith("native_call_")]
    # One row per kernel instruction, each timed in every run, each tied to
    # its source operator and this file's forward().
    operators = et.executorch_program.execution_plan[0].operators
    assert len(kernel_events) == len(et.debug_handle_map["forward"])
    names = {e.name for e in kernel_events}
    assert {"native_call_convolution.out", "native_call_relu.out", "native_call_mean.out",
            "native_call__softmax.out"} <= names, names
    assert len(operators) >= 5
    for event in kernel_events:
        assert len(event.perf_data.raw) == 3, event.name
        assert event.perf_data.min <= event.perf_data.p50 <= event.perf_data.max
        assert event.op_types, event.name
        assert any("test_devtools_end_to_end.py" in (t or "")
                   for t in event.stack_traces.values()), event.name
    assert inspector.find_total_for_module("conv") > 0

    table = io.StringIO()
    inspector.print_data_tabular(file=table)
    assert "native_call_convolution.out" in table.getvalue()
    assert "OPERATOR_CALL" not in table.getvalue()

    # Every intermediate the runtime logged matches PyTorch's on the same
    # inputs (fp32 kernels: 1e-10 in mean squared error).
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) >= 4
    assert max(max(g) for g in gaps["gap"]) < 1e-10, gaps[["runtime_ops", "gap"]]
    assert inspector.find_first_numeric_gap(1e-10) is None


def test_inspector_shows_the_xnnpack_delegates_rows(runtime, tmp_path):
    _, inspector = _traced_run(runtime, tmp_path, partitioner=XnnpackPartitioner(), runs=2)
    execute = [b for b in inspector.event_blocks if b.name == "Execute"][0]
    delegated = [e for e in execute.events if e.is_delegated_op]
    assert delegated, [e.name for e in execute.events]
    # XNNPACK's own operator names, one row per operator, each timed per run.
    assert any("Convolution" in e.name for e in delegated), [e.name for e in delegated]
    for event in delegated:
        assert len(event.perf_data.raw) == 2, event.name
    calls = [e for e in execute.events if e.name == "DELEGATE_CALL"]
    assert calls and all(e.delegate_backend_name == "XnnpackBackend" for e in calls)
    assert all(e.debug_handles for e in calls)
    df = inspector.to_dataframe()
    assert df["is_delegated_op"].any()
