"""The export pipeline's public verbs: to_edge, to_backend, to_executorch.

    ep = torch.export.export(model, example_inputs, dynamic_shapes=...)
    edge = torchlight.to_edge(ep)                  # or {method_name: ep}
    edge = edge.to_backend(partitioner)            # optional delegation
    prog = edge.to_executorch(ExecutorchBackendConfig(...))
    prog.save("model.pte")

to_executorch runs, per method, the passes in torchlight/passes in order
(see lower_method), then emits one program and checks its operators
against the runtime's kernel list.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, BinaryIO, Dict, List, Mapping, Optional, Sequence, Union

from torch.export import ExportedProgram

from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig
from torchlight.delegation import Partitioner, to_backend_program
from torchlight import ops
from torchlight.kernel_check import (TORCHLIGHT_TARGET, check_kernels, find_kernel_list, load_kernel_list,
                                     missing_kernels, target_kernels)
from torchlight.method_graph import MemorySummary, MethodGraph, extract_method
from torchlight.passes.alias_views import alias_views
from torchlight.passes.buffer_writes import plan_buffer_writes
from torchlight.passes.control_flow import lower_control_flow
from torchlight.passes.debug_handles import assign_debug_handles
from torchlight.passes.decompose import to_core_aten
from torchlight.passes.dim_order import to_dim_order_ops
from torchlight.passes.free_calls import plan_input_frees
from torchlight.passes.fuse_llm_chains import fuse_llm_chains
from torchlight.passes.fuse_quantized_linear import fuse_quantized_linears
from torchlight.passes.emit import MethodDebugInfo, emit_program
from torchlight.passes.in_place_calls import lower_in_place_calls
from torchlight.passes.memory_planning import plan_memory
from torchlight.passes.out_variants import to_out_variants
from torchlight.passes.remove_assertions import remove_assertions
from torchlight.passes.scalar_to_tensor import scalar_to_tensor
from torchlight.passes.verify import check_edge_program
from torchlight.passes.view_to_copy import view_to_copy
from torchlight.pte import schema
from torchlight.pte.pte_file import ProgramData, SerializeConfig, read_pte, serialize_pte
from torchlight import upstream_passes


def to_edge(programs: Union[ExportedProgram, Mapping[str, ExportedProgram]],
            constant_methods: Optional[Mapping[str, Any]] = None,
            compile_config: Optional[EdgeCompileConfig] = None,
            generate_etrecord: bool = False) -> "EdgeProgramManager":
    """Lowers exported programs to the edge dialect: core ATen operators, a
    dtype/shape spec on every node. A single program becomes method
    "forward"; a dict gives one method per entry. `constant_methods` adds
    methods that take nothing and return a fixed value. With
    `generate_etrecord` the manager keeps the exported programs
    (`etrecord_programs`); no ETRecord file is written.

    Raises ExportError listing every node that cannot be lowered.
    """
    config = compile_config or EdgeCompileConfig()
    if isinstance(programs, ExportedProgram):
        programs = {"forward": programs}
    preserve_ops = preserved_for_target(config.preserve_ops, config.kernel_target)
    edge = {name: _to_edge_method(ep, preserve_ops, config) for name, ep in programs.items()}
    manager = EdgeProgramManager(edge, constant_methods, config)
    if generate_etrecord:
        manager.etrecord_programs = dict(programs)
    return manager


def _to_edge_method(ep: ExportedProgram, keep: List, config: EdgeCompileConfig) \
        -> ExportedProgram:
    core = to_core_aten(ep, keep)
    exempt = keep + [op for op in config._core_aten_ops_exception_list if op not in keep]
    core = check_edge_program(core, exempt, config._check_ir_validity)
    if not config._skip_dim_order:
        core = to_dim_order_ops(core, target_kernels(config.kernel_target))
    assign_debug_handles(core.graph_module)  # What ETDump events map back to.
    return core


def preserved_for_target(preserve_ops, target: str) -> List:
    """The operators of `preserve_ops` the kernel target can run whole: for
    an upstream target, those whose out variant it has a kernel for (the
    portable library has no aten::linear.out, so linear is decomposed)."""
    names = target_kernels(target)
    if names is None:
        return list(preserve_ops)
    kept = []
    for op in preserve_ops:
        out = ops.out_variant(op)
        if out is not None and ops.qualified_name(out) in names:
            kept.append(op)
    return kept


def to_edge_transform_and_lower(
        programs: Union[ExportedProgram, Mapping[str, ExportedProgram]],
        transform_passes: Optional[Union[Sequence[Any], Mapping[str, Sequence[Any]]]] = None,
        partitioner: Optional[Union[Partitioner, Sequence[Partitioner],
                                    Mapping[str, Sequence[Partitioner]]]] = None,
        constant_methods: Optional[Mapping[str, Any]] = None,
        compile_config: Optional[EdgeCompileConfig] = None) -> "EdgeProgramManager":
    """to_edge, then to_backend with each partitioner in turn (ExecuTorch's
    verb). Operators a partitioner names in ops_to_not_decompose() (e.g.
    linear for XNNPACK) are kept whole by to_edge, so the partitioner sees
    them. `partitioner` is a list (or one partitioner), or a dict of lists
    per method. `transform_passes` (a list, or a dict of lists per method)
    run on each edge program before partitioning: upstream's passes (a
    PassBase, or a callable on the graph module), or callables whose first
    parameter is annotated ExportedProgram, returning the new program."""
    config = compile_config or EdgeCompileConfig()
    if isinstance(programs, ExportedProgram):
        programs = {"forward": programs}
    if partitioner is None:
        per_method = {name: [] for name in programs}
    elif isinstance(partitioner, Partitioner):
        per_method = {name: [partitioner] for name in programs}
    elif isinstance(partitioner, Mapping):
        per_method = {name: list(partitioner.get(name, [])) for name in programs}
    else:
        per_method = {name: list(partitioner) for name in programs}
    edge = {}
    for name, ep in programs.items():
        keep = preserved_for_target(config.preserve_ops, config.kernel_target)
        for p in per_method[name]:
            wanted = getattr(p, "ops_to_not_decompose", None)
            if wanted is not None:
                keep += [op for op in wanted(ep)[0] if op not in keep]
        core = _to_edge_method(ep, keep, config)
        core = upstream_passes.run_passes(core,
                                          upstream_passes.passes_for(transform_passes, name))
        for p in per_method[name]:
            core = to_backend_program(core, p)
        edge[name] = core
    return EdgeProgramManager(edge, constant_methods, config)


def lower_method(ep: ExportedProgram, name: str, config: ExecutorchBackendConfig,
                 fuse_quantized: bool = False, fuse_chains: bool = False) -> MethodGraph:
    """One edge method through every to_executorch pass, in order.
    `fuse_quantized` turns 8da4w linears into torchlight::linear_8da4w;
    `fuse_chains` RMSNorm, SiLU and RoPE chains into torchlight::rms_norm,
    torchlight::silu and torchlight::rope."""
    method = extract_method(ep, name)
    if fuse_quantized:
        method = fuse_quantized_linears(method)
    if fuse_chains:
        method = fuse_llm_chains(method)
    method = lower_in_place_calls(method)
    method = lower_control_flow(method)
    method = remove_assertions(method)
    method = view_to_copy(method)
    method = scalar_to_tensor(method)
    method = plan_buffer_writes(method)
    method = to_out_variants(method)
    config = method_config(config, name)  # upstream's pass objects, for this method
    if config.alias_views:
        method = alias_views(method, alloc_graph_output=config.alloc_graph_output)
    method = plan_memory(method, algorithm=config.memory_planning,
                         alignment=config.memory_alignment,
                         alloc_graph_input=config.alloc_graph_input,
                         alloc_graph_output=config.alloc_graph_output)
    if config.free_unplanned_inputs:
        method = plan_input_frees(method)
    return method


def method_config(config: ExecutorchBackendConfig, method: str) -> ExecutorchBackendConfig:
    """`config` with upstream's pass objects for `method` read into our
    fields (memory_planning_pass -> memory_planning, memory_alignment,
    alloc_graph_input/output; remove_view_copy=False -> no alias_views).
    Raises ValueError for the upstream choices we do not implement."""
    changes: Dict[str, Any] = {}
    planning = upstream_passes.option_for(config.memory_planning_pass, method)
    if planning is not None:
        if not isinstance(planning, upstream_passes.MemoryPlanningPass):
            raise ValueError(f"memory_planning_pass for '{method}' must be a "
                             f"torchlight.exir.passes.MemoryPlanningPass, got "
                             f"{type(planning).__name__}")
        changes.update(memory_planning=planning.memory_planning_algo,
                       memory_alignment=planning.alignment,
                       alloc_graph_input=planning.alloc_graph_input,
                       alloc_graph_output=planning.alloc_graph_output)
    shape_eval = upstream_passes.option_for(config.sym_shape_eval_pass, method)
    if isinstance(shape_eval, upstream_passes.HintBasedSymShapeEvalPass):
        raise ValueError("HintBasedSymShapeEvalPass is not supported: dynamic dims are planned "
                         "at their upper bound (ConstraintBasedSymShapeEvalPass)")
    mode = config.dynamic_memory_planning_mode
    if mode is not None and getattr(mode, "name", mode) != "UPPER_BOUND":
        raise ValueError(f"dynamic_memory_planning_mode {getattr(mode, 'name', mode)} is not "
                         f"supported: dynamic dims are planned at their upper bound")
    if config.delegate_alignment is not None:
        a = config.delegate_alignment
        if (a <= 0 or a & (a - 1) or not config.extract_delegate_segments
                or config.segment_alignment % a):
            raise ValueError(f"delegate_alignment={a} needs extract_delegate_segments=True and a "
                             f"power of two dividing segment_alignment "
                             f"({config.segment_alignment})")
    if not config.remove_view_copy:
        changes["alias_views"] = False
    return dataclasses.replace(config, **changes) if changes else config


class EdgeProgramManager:
    """Edge-dialect methods of one future program."""

    def __init__(self, programs: Mapping[str, ExportedProgram],
                 constant_methods: Optional[Mapping[str, Any]] = None,
                 compile_config: Optional[EdgeCompileConfig] = None):
        self._programs: Dict[str, ExportedProgram] = dict(programs)
        self._constant_methods = dict(constant_methods or {})
        self.compile_config = compile_config or EdgeCompileConfig()
        clash = set(self._programs) & set(self._constant_methods)
        if clash:
            raise ValueError(f"method names used twice: {', '.join(sorted(clash))}")

    @property
    def methods(self) -> List[str]:
        return list(self._programs) + list(self._constant_methods)

    @property
    def config_methods(self) -> List[str]:
        """The constant methods (upstream's name)."""
        return list(self._constant_methods)

    def exported_program(self, method_name: str = "forward") -> ExportedProgram:
        return self._programs[method_name]

    def transform(self, passes: Union[Sequence[Any], Mapping[str, Sequence[Any]]],
                  compile_config: Optional[EdgeCompileConfig] = None) -> "EdgeProgramManager":
        """A new manager with `passes` run on every method (a dict: a list per
        method), as upstream's transform: each pass is a PassBase or a callable
        on the graph module (see upstream_passes.run_pass). The result is
        checked again unless the config's _check_ir_validity is False."""
        config = compile_config or self.compile_config
        programs = {}
        for name, ep in self._programs.items():
            ep = upstream_passes.run_passes(ep, upstream_passes.passes_for(passes, name))
            exempt = list(config.preserve_ops) + list(config._core_aten_ops_exception_list)
            programs[name] = check_edge_program(ep, exempt, config._check_ir_validity)
        return EdgeProgramManager(programs, self._constant_methods, config)

    def to_backend(self, partitioner: Union[Partitioner, Mapping[str, Partitioner]]) \
            -> "EdgeProgramManager":
        """A new manager whose methods have each partition the partitioner
        tags replaced by a delegate call. A dict applies a partitioner per
        method; others are kept as they are."""
        programs = {}
        for name, ep in self._programs.items():
            p = partitioner.get(name) if isinstance(partitioner, Mapping) else partitioner
            programs[name] = ep if p is None else to_backend_program(ep, p)
        return EdgeProgramManager(programs, self._constant_methods, self.compile_config)

    def to_executorch(self, config: Optional[ExecutorchBackendConfig] = None) \
            -> "ExecutorchProgramManager":
        """Lowers every method to out variants, plans memory, emits the
        program, and checks its operators against the runtime's kernels
        (config.check_kernels). Raises ExportError (MissingKernelsError for
        operators without kernels)."""
        config = config or ExecutorchBackendConfig()
        # The fused kernels are torchlight's; upstream targets keep the
        # quantized_decomposed operators.
        ours = self.compile_config.kernel_target == TORCHLIGHT_TARGET
        fuse = config.fuse_quantized_linears and ours
        fuse_chains = config.fuse_llm_chains and ours
        programs = {name: upstream_passes.run_passes(
            ep, upstream_passes.passes_for(config.passes, name))
            for name, ep in self._programs.items()}
        methods = [lower_method(ep, name, config, fuse, fuse_chains)
                   for name, ep in programs.items()]
        debug: Dict[str, MethodDebugInfo] = {}
        data = emit_program(methods, self._constant_methods, config.emit_stacktrace, debug)
        check_kernels(data.program, config.check_kernels, config.kernel_list,
                      self.compile_config.kernel_target)
        return ExecutorchProgramManager(methods, data, config, programs, debug)


class ExecutorchProgramManager:
    """An emitted program: its bytes, and what was decided on the way."""

    def __init__(self, methods: List[MethodGraph], data: ProgramData,
                 config: ExecutorchBackendConfig,
                 exported_programs: Optional[Mapping[str, ExportedProgram]] = None,
                 debug: Optional[Mapping[str, MethodDebugInfo]] = None):
        self._methods = {m.name: m for m in methods}
        self._debug = dict(debug or {})
        self._exported_programs = dict(exported_programs or {})
        self._data = data
        self.config = config
        self._buffer: Optional[bytes] = None
        self._program: Optional[schema.Program] = None

    @property
    def methods(self) -> List[str]:
        return [plan.name for plan in self._data.program.execution_plan]

    @property
    def buffer(self) -> bytes:
        """The .pte file contents."""
        if self._buffer is None:
            c = self.config
            self._buffer = serialize_pte(self._data, SerializeConfig(
                segment_alignment=c.segment_alignment,
                constant_tensor_alignment=(c.constant_tensor_alignment
                                           if c.constant_tensor_alignment is not None else 16),
                extract_constants=c.extract_constants,
                extract_delegate_segments=c.extract_delegate_segments,
                extended_header=c.extended_header))
        return self._buffer

    def save(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "wb") as f:
            f.write(self.buffer)

    def write_to_file(self, open_file: Union[BinaryIO, str, os.PathLike]) -> None:
        """Writes the .pte bytes to an open binary file (upstream's
        signature), or to a path."""
        if isinstance(open_file, (str, os.PathLike)):
            self.save(open_file)
        else:
            open_file.write(self.buffer)

    def exported_program(self, method_name: str = "forward") -> ExportedProgram:
        """The edge program to_executorch lowered for `method_name` (after
        config.passes; upstream's also has out variants and memory planning
        applied in the graph, ours keeps those in method_graph())."""
        if method_name not in self._exported_programs:
            known = ", ".join(self._exported_programs) or "none"
            raise KeyError(f"no exported program for method '{method_name}' (methods: {known})")
        return self._exported_programs[method_name]

    @property
    def debug_handle_map(self) -> Dict[str, Dict[int, Any]]:
        """Per method, instruction index -> the node debug handle it runs (a
        list of handles for a delegate call); what ETRecord stores."""
        return {name: dict(d.debug_handle_map) for name, d in self._debug.items()}

    @property
    def delegate_map(self) -> Dict[str, Dict[int, Dict[str, Any]]]:
        """Per method, delegate instruction index -> {"name": backend id,
        "delegate_map": {delegate debug id: handles}} for backends that gave one."""
        return {name: dict(d.delegate_map) for name, d in self._debug.items()}

    @property
    def instruction_id_to_num_outs_map(self) -> Dict[str, Dict[int, int]]:
        return {name: dict(d.instruction_id_to_num_outs_map) for name, d in self._debug.items()}

    @property
    def executorch_program(self) -> schema.Program:
        """upstream's name for `program`."""
        return self.program

    @property
    def program(self) -> schema.Program:
        """The program as written (segments and offsets filled in)."""
        if self._program is None:
            self._program = read_pte(self.buffer).program
        return self._program

    def method_graph(self, method_name: str = "forward") -> MethodGraph:
        """The lowered graph of a method: out variants, allocs, planned offsets."""
        return self._methods[method_name]

    def memory_summary(self, method_name: str = "forward") -> MemorySummary:
        return self._methods[method_name].memory

    def operators(self) -> List[str]:
        """Every operator the program calls ("aten::add.out"), sorted."""
        return sorted({op.qualified_name for plan in self._data.program.execution_plan
                       for op in plan.operators})

    def missing_kernels(self, kernel_list=None) -> List[str]:
        """Operators with no kernel in `kernel_list` (default: the build's list)."""
        source = kernel_list if kernel_list is not None else find_kernel_list()
        if source is None:
            raise FileNotFoundError("no kernel list found; build the runtime first")
        return sorted(missing_kernels(self._data.program, load_kernel_list(source)))
