"""Upstream ExecuTorch's getting-started flows with `executorch` renamed to
`torchlight` in the imports and nothing else (the code inside each test,
after its imports, is the docs' code; models are smaller where the docs use
a pretrained network). Each runs on the C++ runtime and is compared with
eager PyTorch:
  - float programs: atol=rtol=1e-5 (portable kernels), 1e-3/1e-4 where
    XNNPACK reorders float sums (mobilenet_v2);
  - pt2e quantized programs: against the quantized module run eagerly
    (PyTorch's q/dq reference), within 3 output quantization steps (static)
    or 2e-2 (dynamic: activations re-quantized per run at int8).
Also the upstream spellings our API adds (pass objects, per-method options,
the executorch/ shim) and their errors.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

FLOAT_TOL = dict(atol=1e-5, rtol=1e-5)
PYTHON_DIR = Path(__file__).resolve().parents[1]


class Add(torch.nn.Module):
    def __init__(self):
        super(Add, self).__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        return x + y


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.mean(dim=(2, 3)))


# --- Getting started: export, to_edge, to_executorch, write the buffer --------------------


def test_export_to_edge_to_executorch(runtime, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import torch
    from torch.export import export
    from torchlight.exir import to_edge

    aten_dialect = export(Add(), (torch.ones(1), torch.ones(1)))
    edge_program = to_edge(aten_dialect)
    executorch_program = edge_program.to_executorch()
    with open("add.pte", "wb") as file:
        file.write(executorch_program.buffer)

    from torchlight.extension.pybindings.portable_lib import _load_for_executorch
    forward = _load_for_executorch("add.pte")
    x, y = torch.randn(1), torch.randn(1)
    outputs = forward.forward((x, y))
    assert len(outputs) == 1 and isinstance(outputs[0], torch.Tensor)
    torch.testing.assert_close(outputs[0], x + y, **FLOAT_TOL)


# --- XNNPACK delegation: to_edge_transform_and_lower + write_to_file ----------------------


def test_xnnpack_lowering_tutorial_mobilenet_v2(runtime, tmp_path, monkeypatch):
    """The XNNPACK tutorial, on torchvision's mobilenet_v2 (untrained:
    weights=None, the tests have no network)."""
    torchvision = pytest.importorskip("torchvision")
    monkeypatch.chdir(tmp_path)
    import torchvision.models as models
    from torch.export import export, ExportedProgram
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from torchlight.exir import (EdgeProgramManager, ExecutorchProgramManager,
                                 to_edge_transform_and_lower)
    from torchlight.exir.backend.backend_api import to_backend  # noqa: F401 (the docs import it)

    torch.manual_seed(0)
    mobilenet_v2 = models.mobilenetv2.mobilenet_v2(weights=None).eval()
    sample_inputs = (torch.randn(1, 3, 224, 224), )

    exported_program: ExportedProgram = export(mobilenet_v2, sample_inputs)
    edge: EdgeProgramManager = to_edge_transform_and_lower(
        exported_program,
        partitioner=[XnnpackPartitioner()],
    )
    exec_prog: ExecutorchProgramManager = edge.to_executorch()
    with open("xnnpack_mobilenetv2.pte", "wb") as file:
        exec_prog.write_to_file(file)

    # The Python runtime part of the getting-started guide.
    from torchlight.runtime import Runtime
    from typing import List

    runtime = Runtime.get()
    input_tensor: torch.Tensor = torch.randn(1, 3, 224, 224)
    program = runtime.load_program("xnnpack_mobilenetv2.pte")
    method = program.load_method("forward")
    output: List[torch.Tensor] = method.execute([input_tensor])
    eager_reference_output = mobilenet_v2(input_tensor)
    assert torch.allclose(output[0], eager_reference_output, rtol=1e-3, atol=1e-4)
    plan = exec_prog.executorch_program.execution_plan[0]
    assert [d.id for d in plan.delegates] == ["XnnpackBackend"]


def test_to_edge_transform_and_lower_small_net(runtime, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from torchlight.exir import to_edge_transform_and_lower

    model = SmallNet().eval()
    sample_inputs = (torch.randn(1, 3, 16, 16), )

    et_program = to_edge_transform_and_lower(
        torch.export.export(model, sample_inputs),
        partitioner=[XnnpackPartitioner()]
    ).to_executorch()

    with open("model.pte", "wb") as f:
        f.write(et_program.buffer)

    from torchlight.runtime import Runtime
    program = Runtime.get().load_program(Path("model.pte"))
    assert program.method_names == {"forward"}
    method = program.load_method("forward")
    assert method.metadata.uses_backend("XnnpackBackend")
    x = torch.randn(1, 3, 16, 16)
    torch.testing.assert_close(method.execute([x])[0], model(x), atol=1e-4, rtol=1e-4)


# --- pt2e quantization with XNNPACKQuantizer + XnnpackPartitioner -------------------------


def _quantize(model, example_inputs, is_dynamic):
    from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torch.ao.quantization.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
        XNNPACKQuantizer,
    )

    quantizer = XNNPACKQuantizer()
    operator_config = get_symmetric_quantization_config(is_per_channel=True,
                                                        is_dynamic=is_dynamic)
    quantizer.set_global(operator_config)
    m = prepare_pt2e(model, quantizer)
    # calibration
    m(*example_inputs)
    m = convert_pt2e(m)
    return m


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_pt2e_dynamic_quantization_xnnpack(runtime):
    from torch.export import export, export_for_training
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from torchlight.backends.xnnpack.utils.configs import get_xnnpack_edge_compile_config
    from torchlight.exir import ExecutorchBackendConfig, to_edge_transform_and_lower

    torch._dynamo.reset()
    model = Mlp().eval()
    sample_inputs = (torch.randn(4, 32),)
    quantized = _quantize(export_for_training(model, sample_inputs).module(), sample_inputs,
                          is_dynamic=True)

    edge = to_edge_transform_and_lower(
        export(quantized, sample_inputs),
        compile_config=get_xnnpack_edge_compile_config(),
        partitioner=[XnnpackPartitioner()]
    )
    exec_prog = edge.to_executorch(
        config=ExecutorchBackendConfig(extract_delegate_segments=False)
    )

    from torchlight.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
    module = _load_for_executorch_from_buffer(exec_prog.buffer)
    assert exec_prog.operators() == []  # everything runs in XNNPACK
    for _ in range(2):
        x = torch.randn(4, 32)
        got = module.run_method("forward", (x,))[0]
        torch.testing.assert_close(got, quantized(x), atol=2e-2, rtol=0)
        torch.testing.assert_close(got, model(x), atol=5e-2, rtol=0)


def test_pt2e_static_quantization_xnnpack(runtime):
    from torch.export import export, export_for_training
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from torchlight.exir import EdgeCompileConfig, ExecutorchBackendConfig
    from torchlight.exir import to_edge_transform_and_lower

    torch._dynamo.reset()
    model = SmallNet().eval()
    sample_inputs = (torch.randn(1, 3, 16, 16),)
    quantized = _quantize(export_for_training(model, sample_inputs).module(), sample_inputs,
                          is_dynamic=False)

    edge = to_edge_transform_and_lower(
        export(quantized, sample_inputs),
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
        partitioner=[XnnpackPartitioner()]
    )
    exec_prog = edge.to_executorch(
        config=ExecutorchBackendConfig(extract_delegate_segments=False)
    )

    from torchlight.runtime import Runtime
    method = Runtime.get().load_program(exec_prog.buffer).load_method("forward")
    step = max(float(n.args[1]) for n in quantized.graph.nodes
               if n.target == torch.ops.quantized_decomposed.quantize_per_tensor.default)
    got = method.execute(list(sample_inputs))[0]
    torch.testing.assert_close(got, quantized(*sample_inputs), atol=3 * step, rtol=0)


# --- A custom backend and partitioner written upstream-style ------------------------------


def test_custom_backend_and_partitioner_upstream_style(runtime):
    """In its own process: here, torchlight.backends.test_backend registers
    a backend under the id the flow's class is named after."""
    script = Path(__file__).parent / "upstream_flows" / "custom_backend_flow.py"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().splitlines()[-1] == "ok"


def test_registered_backend_wins_over_class_name():
    from torchlight import delegation
    from torchlight.backends.test_backend import BACKEND_ID, TestBackend
    from torchlight.exir.backend.backend_details import BackendDetails

    class UpstreamNamed(BackendDetails):
        @staticmethod
        def preprocess(edge_program, compile_specs):
            raise AssertionError("not called")

    assert delegation.backend_details("UpstreamNamed") is UpstreamNamed
    assert delegation.backend_details(BACKEND_ID) is TestBackend
    with pytest.raises(torchlight_export_error(), match="no BackendDetails subclass"):
        delegation.backend_details("NoSuchBackend")


def torchlight_export_error():
    from torchlight.errors import ExportError
    return ExportError


def test_upstream_partition_gets_tagged_constants_as_parameters():
    """tag_constant_data: a weight only the partition reads is one of the
    partition program's parameters, not a delegate input."""
    from torch.export import export
    from torchlight.exir import to_edge
    from torchlight.exir.backend.backend_details import BackendDetails, PreprocessResult
    from torchlight.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
    from torchlight.exir.backend.utils import tag_constant_data
    from torchlight.exir.dialects._ops import ops as exir_ops

    seen = []

    class RecordingBackend(BackendDetails):
        @staticmethod
        def preprocess(edge_program, compile_specs):
            seen.append(edge_program)
            return PreprocessResult(processed_bytes=b"blob")

    class MulPartitioner(Partitioner):
        def partition(self, ep):
            tags = {}
            for node in ep.graph.nodes:
                if node.op == "call_function" and node.target == exir_ops.edge.aten.mul.Tensor:
                    node.meta["delegation_tag"] = "mul"
                    tags["mul"] = DelegationSpec("RecordingBackend", [])
            tag_constant_data(ep)
            return PartitionResult(tagged_exported_program=ep, partition_tags=tags)

    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4))

        def forward(self, x):
            return x * self.w + 1

    model = Scale()
    edge = to_edge(export(model, (torch.randn(4),))).to_backend(MulPartitioner())
    (program,) = seen
    kinds = [spec.kind.name for spec in program.graph_signature.input_specs]
    assert kinds == ["PARAMETER", "USER_INPUT"]
    (param,) = program.graph_signature.parameters
    assert torch.equal(program.state_dict[param], model.w.detach())
    outer = edge.exported_program()
    assert len(outer.graph_signature.parameters) == 0  # the weight moved into the partition
    assert [n.op for n in outer.graph.nodes].count("placeholder") == 1


# --- Pass objects and options in upstream's spelling ---------------------------------------


class AddToSub:
    """An upstream-style pass (a callable on the graph module returning a
    PassResult): every aten.add.Tensor becomes aten.sub.Tensor."""

    def __call__(self, graph_module):
        from torchlight.exir.pass_base import PassResult
        from torchlight.exir.dialects._ops import ops as exir_ops
        changed = False
        for node in graph_module.graph.nodes:
            if node.op == "call_function" and node.target == exir_ops.edge.aten.add.Tensor:
                node.target = exir_ops.edge.aten.sub.Tensor
                changed = True
        graph_module.recompile()
        return PassResult(graph_module, changed)


def _run(buffer, *inputs):
    from torchlight.runtime import Runtime
    return Runtime.get().load_program(buffer).load_method("forward").execute(list(inputs))


@pytest.mark.parametrize("where", ["transform", "backend_config", "transform_passes"])
def test_upstream_passes_run_where_upstream_runs_them(runtime, where):
    from torch.export import export
    from torchlight.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
    from torchlight.exir.pass_base import PassBase, PassResult

    class SubPass(PassBase):  # the PassBase form of the same pass
        def call(self, graph_module):
            return AddToSub()(graph_module)

    x, y = torch.randn(3), torch.randn(3)
    ep = export(Add(), (x, y))
    if where == "transform":
        prog = to_edge(ep).transform([SubPass()]).to_executorch()
    elif where == "backend_config":
        prog = to_edge(ep).to_executorch(ExecutorchBackendConfig(passes=[AddToSub()]))
    else:
        prog = to_edge_transform_and_lower(ep, transform_passes={"forward": [AddToSub()]}) \
            .to_executorch()
    torch.testing.assert_close(_run(prog.buffer, x, y)[0], x - y, **FLOAT_TOL)
    assert isinstance(SubPass()(ep.graph_module), PassResult)


def test_memory_planning_pass_options_reach_the_planner(runtime):
    from torch.export import export
    from torchlight.exir import ExecutorchBackendConfig, to_edge
    from torchlight.exir.passes import MemoryPlanningPass

    x, y = torch.randn(8), torch.randn(8)
    edge = to_edge(export(Add(), (x, y)))
    planned = edge.to_executorch(ExecutorchBackendConfig())
    unplanned = edge.to_executorch(ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False)))
    per_method = edge.to_executorch(ExecutorchBackendConfig(
        memory_planning_pass={"forward": MemoryPlanningPass(alloc_graph_input=False)}))

    from torchlight.runtime import Runtime
    for prog, want in [(planned, True), (unplanned, False), (per_method, False)]:
        meta = Runtime.get().load_program(prog.buffer).metadata("forward")
        assert meta.input_tensor_meta(0).is_memory_planned() is want
        assert meta.input_tensor_meta(0).sizes() == [8]
        torch.testing.assert_close(_run(prog.buffer, x, y)[0], x + y, **FLOAT_TOL)


def test_unsupported_upstream_choices_say_so():
    from torch.export import export
    from torchlight.exir import ExecutorchBackendConfig, to_edge
    from torchlight.exir.passes import MemoryPlanningPass, ToOutVarPass
    from torchlight.exir.passes.sym_shape_eval_pass import HintBasedSymShapeEvalPass

    edge = to_edge(export(Add(), (torch.randn(2), torch.randn(2))))
    with pytest.raises(ValueError, match="HintBasedSymShapeEvalPass is not supported"):
        edge.to_executorch(ExecutorchBackendConfig(sym_shape_eval_pass=HintBasedSymShapeEvalPass()))
    with pytest.raises(ValueError, match="memory_planning_algo must be one of greedy, naive"):
        MemoryPlanningPass(memory_planning_algo="fancy")
    with pytest.raises(ValueError, match="ignore_to_out_var_failure=True"):
        ToOutVarPass(ignore_to_out_var_failure=True)
    with pytest.raises(ValueError, match="delegate_alignment=3"):
        edge.to_executorch(ExecutorchBackendConfig(delegate_alignment=3))


def test_upstream_config_fields_and_defaults():
    import inspect
    from torchlight.exir import (EdgeCompileConfig, ExecutorchBackendConfig, to_edge,
                                 to_edge_transform_and_lower)

    edge = EdgeCompileConfig()
    assert edge._check_ir_validity is True and edge._use_edge_ops is True
    assert edge._core_aten_ops_exception_list == [] and edge._skip_type_promotion is False
    backend = ExecutorchBackendConfig()
    assert backend.passes == [] and backend.extract_delegate_segments is True
    assert backend.segment_alignment == 128 and backend.remove_view_copy is True
    assert list(inspect.signature(to_edge_transform_and_lower).parameters) == [
        "programs", "transform_passes", "partitioner", "constant_methods", "compile_config"]
    params = inspect.signature(to_edge).parameters
    assert params["generate_etrecord"].default is False


def test_core_aten_exception_list_lets_an_op_through():
    """transform() checks the edge program again: linear (not core ATen) is
    rejected there unless preserved or in _core_aten_ops_exception_list."""
    from torch.export import export
    from torchlight.errors import ExportError
    from torchlight.exir import EdgeCompileConfig, to_edge

    linear = torch.ops.aten.linear.default
    edge = to_edge(export(torch.nn.Linear(2, 2), (torch.randn(2, 2),)),
                   compile_config=EdgeCompileConfig(preserve_ops=[linear]))
    with pytest.raises(ExportError, match="not a core ATen operator"):
        edge.transform([], EdgeCompileConfig(preserve_ops=()))
    checked = edge.transform([], EdgeCompileConfig(preserve_ops=(),
                                                   _core_aten_ops_exception_list=[linear]))
    targets = [n.target for n in checked.exported_program().graph.nodes]
    assert linear in targets


# --- The runtime API: what upstream's objects answer --------------------------------------


def test_runtime_program_method_and_errors(runtime, tmp_path):
    from torch.export import export
    from torchlight.exir import to_edge
    from torchlight.extension.pybindings import portable_lib
    from torchlight.runtime import Runtime, Verification

    class TwoMethods(torch.nn.Module):
        def forward(self, x):
            return x * 2

    prog = to_edge({"forward": export(TwoMethods(), (torch.randn(2, 3),)),
                    "double": export(TwoMethods(), (torch.randn(5),))}).to_executorch()
    path = tmp_path / "two.pte"
    with open(path, "wb") as f:
        prog.write_to_file(f)

    rt = Runtime.get()
    assert rt is Runtime.get()
    assert "XnnpackBackend" in rt.backend_registry.registered_backend_names
    assert rt.backend_registry.is_available("XnnpackBackend")
    assert not rt.backend_registry.is_available("NoSuchBackend")
    assert "aten::mul.out" in rt.operator_registry.operator_names
    for source in (str(path), path, path.read_bytes(), open(path, "rb")):
        program = rt.load_program(source, verification=Verification.Minimal)
        assert program.method_names == {"forward", "double"}
    meta = program.metadata("double")
    assert meta.name() == "double" and meta.num_inputs() == 1 and meta.num_outputs() == 1
    assert meta.output_tensor_meta(0).sizes() == [5] and meta.output_tensor_meta(0).dtype() == 6
    assert meta.output_tensor_meta(0).nbytes() == 20
    method = program.load_method("double")
    assert program.load_method("double") is method
    x = torch.randn(5)
    torch.testing.assert_close(method.execute((x,))[0], x * 2, **FLOAT_TOL)
    with pytest.raises(KeyError, match="no method 'backward'.*double, forward"):
        program.load_method("backward")
    with pytest.raises(IndexError, match="has 1 inputs, asked for input 3"):
        meta.input_tensor_meta(3)
    with pytest.raises(TypeError, match="sequence"):
        method.execute(x)
    with pytest.raises(TypeError, match="path to a .pte file, bytes, or a file object"):
        rt.load_program(42)

    m = portable_lib._load_for_executorch(str(path))
    assert sorted(m.method_names()) == ["double", "forward"]
    y = torch.randn(2, 3)
    torch.testing.assert_close(m.forward((y,))[0], y * 2, **FLOAT_TOL)
    torch.testing.assert_close(m.run_method("double", [x])[0], x * 2, **FLOAT_TOL)
    assert m.method_meta("forward").input_tensor_meta(0).sizes() == [2, 3]
    assert "aten::mul.out" in portable_lib._get_operator_names()
    with pytest.raises(TypeError, match="takes bytes"):
        portable_lib._load_for_executorch_from_buffer(str(path))


def test_executorch_program_manager_upstream_members(tmp_path):
    from torch.export import export
    from torchlight.exir import to_edge

    x, y = torch.randn(2), torch.randn(2)
    prog = to_edge(export(Add(), (x, y))).to_executorch()
    assert prog.executorch_program is prog.program
    assert prog.exported_program().graph_signature.user_inputs == ("x", "y")
    with pytest.raises(KeyError, match="no exported program for method 'other'"):
        prog.exported_program("other")
    buffer = io.BytesIO()
    prog.write_to_file(buffer)
    prog.write_to_file(tmp_path / "add.pte")
    assert buffer.getvalue() == prog.buffer == (tmp_path / "add.pte").read_bytes()


# --- One implementation under both names ----------------------------------------------------


@pytest.mark.parametrize("path, names", [
    ("exir", ["to_edge", "to_edge_transform_and_lower", "EdgeCompileConfig",
              "ExecutorchBackendConfig", "EdgeProgramManager", "ExecutorchProgramManager"]),
    ("exir.passes", ["MemoryPlanningPass", "ToOutVarPass"]),
    ("exir.backend.backend_details", ["BackendDetails", "PreprocessResult"]),
    ("exir.backend.partitioner", ["Partitioner", "PartitionResult", "DelegationSpec"]),
    ("exir.backend.compile_spec_schema", ["CompileSpec"]),
    ("exir.backend.backend_api", ["to_backend"]),
    ("exir.backend.utils", ["tag_constant_data"]),
    ("exir.dialects._ops", ["ops"]),
    ("backends.xnnpack.partition.xnnpack_partitioner", ["XnnpackPartitioner"]),
    ("backends.xnnpack.utils.configs", ["get_xnnpack_edge_compile_config"]),
    ("runtime", ["Runtime", "Program", "Method", "Verification"]),
    ("extension.pybindings.portable_lib", ["_load_for_executorch",
                                           "_load_for_executorch_from_buffer"]),
    ("backends.transforms.duplicate_dynamic_quant_chain", ["DuplicateDynamicQuantChainPass"]),
])
def test_executorch_shim_is_torchlight(path, names):
    import importlib
    ours = importlib.import_module(f"torchlight.{path}")
    shim = importlib.import_module(f"executorch.{path}")
    for name in names:
        assert getattr(shim, name) is getattr(ours, name), f"{path}.{name}"


def test_edge_ops_are_the_aten_ops_our_graphs_call():
    from torchlight.exir.dialects._ops import ops as exir_ops
    assert exir_ops.edge.aten.add.Tensor is torch.ops.aten.add.Tensor
    assert exir_ops.edge.quantized_decomposed is torch.ops.quantized_decomposed
    with pytest.raises(AttributeError, match="nosuchop"):
        exir_ops.edge.aten.nosuchop


def test_to_backend_both_forms():
    from torch.export import export
    from torchlight.exir import to_edge
    from torchlight.exir.backend.backend_api import to_backend
    from torchlight.exir.backend.backend_details import BackendDetails, PreprocessResult
    from torchlight.exir.backend.compile_spec_schema import CompileSpec
    from torchlight.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult

    class WholeProgramBackend(BackendDetails):
        @staticmethod
        def preprocess(edge_program, compile_specs):
            ops = [str(n.target) for n in edge_program.graph.nodes if n.op == "call_function"]
            return PreprocessResult(processed_bytes=",".join(ops).encode()
                                    + compile_specs[0].value)

    x, y = torch.randn(3), torch.randn(3)
    edge_program = to_edge(export(Add(), (x, y))).exported_program()
    lowered = to_backend("WholeProgramBackend", edge_program, [CompileSpec("k", b"!")])
    assert lowered.backend_id == "WholeProgramBackend"
    assert lowered.processed_bytes == b"aten.add.Tensor!"
    torch.testing.assert_close(lowered(x, y), x + y, **FLOAT_TOL)

    class AddPartitioner(Partitioner):
        def partition(self, ep):
            for node in ep.graph.nodes:
                if node.op == "call_function":
                    node.meta["delegation_tag"] = "all"
            return PartitionResult(ep, {"all": DelegationSpec("WholeProgramBackend",
                                                               [CompileSpec("k", b"?")])})

    delegated = to_backend(edge_program, AddPartitioner())
    calls = [n for n in delegated.graph.nodes if n.op == "call_function"]
    assert [n.target.__name__ for n in calls] == ["call_delegate", "getitem"]
    assert delegated.graph_module.lowered_module_0.processed_bytes == b"aten.add.Tensor?"
    with pytest.raises(TypeError, match="must be a Partitioner"):
        to_backend(edge_program, "WholeProgramBackend")


def test_a_pass_returning_a_new_module_keeps_its_attributes(runtime):
    """A pass that builds a new GraphModule with a constant of its own (a
    get_attr): the edge program gets the graph and the constant."""
    from torch.export import export
    from torchlight.exir import to_edge
    from torchlight.exir.pass_base import PassBase, PassResult

    class AddOffset(PassBase):
        def call(self, graph_module):
            graph = torch.fx.Graph()
            env = {}
            for node in graph_module.graph.nodes:
                if node.op == "output":
                    result = env[node.args[0][0]]
                    offset = graph.get_attr("extra.offset")
                    offset.meta["val"] = torch.empty(3)
                    shifted = graph.call_function(torch.ops.aten.add.Tensor, (result, offset))
                    shifted.meta["val"] = torch.empty(3)
                    graph.output((shifted,))
                else:
                    env[node] = graph.node_copy(node, lambda n: env[n])
            root = torch.nn.Module()
            root.extra = torch.nn.Module()
            root.extra.register_buffer("offset", torch.tensor([1.0, 2.0, 3.0]))
            return PassResult(torch.fx.GraphModule(root, graph), True)

    x, y = torch.randn(3), torch.randn(3)
    edge = to_edge(export(Add(), (x, y))).transform([AddOffset()])
    gm = edge.exported_program().graph_module
    assert torch.equal(gm.extra.offset, torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(gm(x, y)[0], x + y + torch.tensor([1.0, 2.0, 3.0]), **FLOAT_TOL)
