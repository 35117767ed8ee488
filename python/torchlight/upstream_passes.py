"""Upstream ExecuTorch's pass objects, as options of our pipeline.

Upstream configures to_executorch with pass instances
(ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(...)));
our passes are plain functions driven by config fields. These classes carry
upstream's constructor arguments, and program_manager reads them into our
options, so upstream's spelling configures the same pipeline.

run_passes applies upstream's PassType (a PassBase, or a callable on a
GraphModule returning a PassResult or nothing) to an ExportedProgram, as
EdgeProgramManager.transform, ExecutorchBackendConfig.passes and
to_edge_transform_and_lower's transform_passes do upstream.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.fx.passes.infra.pass_base import PassBase, PassResult

# Upstream's default alignment of planned tensors (exir/tensor.py ALIGNMENT).
ALIGNMENT = 16
MEMORY_PLANNING_ALGORITHMS = ("greedy", "naive")


class MemoryPlanningPass:
    """upstream: exir.passes.MemoryPlanningPass(memory_planning_algo="greedy",
    allow_lifetime_and_storage_overlap=False, alloc_graph_input=True,
    alloc_graph_output=True, alignment=16). Our planner runs inside
    to_executorch; this object only carries its options."""

    def __init__(self, memory_planning_algo: Optional[str] = "greedy",
                 allow_lifetime_and_storage_overlap: bool = False,
                 alloc_graph_input: bool = True, alloc_graph_output: bool = True,
                 alignment: int = ALIGNMENT):
        algorithm = memory_planning_algo if memory_planning_algo is not None else "greedy"
        if algorithm not in MEMORY_PLANNING_ALGORITHMS:
            raise ValueError(f"MemoryPlanningPass: memory_planning_algo must be one of "
                             f"{', '.join(MEMORY_PLANNING_ALGORITHMS)} (a callable algorithm is "
                             f"not supported), got {memory_planning_algo!r}")
        if alignment <= 0 or alignment & (alignment - 1):
            raise ValueError(f"MemoryPlanningPass: alignment must be a power of two, "
                             f"got {alignment}")
        self.memory_planning_algo = algorithm
        self.allow_lifetime_and_storage_overlap = allow_lifetime_and_storage_overlap
        self.alloc_graph_input = alloc_graph_input
        self.alloc_graph_output = alloc_graph_output
        self.alignment = alignment

    def __repr__(self) -> str:
        return (f"MemoryPlanningPass(memory_planning_algo={self.memory_planning_algo!r}, "
                f"alloc_graph_input={self.alloc_graph_input}, "
                f"alloc_graph_output={self.alloc_graph_output}, alignment={self.alignment})")


class ToOutVarPass:
    """upstream: exir.passes.ToOutVarPass(ignore_to_out_var_failure=False).
    Our out-variant lowering always runs and always fails on an operator
    without an out variant, so only the default is accepted."""

    def __init__(self, ignore_to_out_var_failure: bool = False):
        if ignore_to_out_var_failure:
            raise ValueError("ToOutVarPass(ignore_to_out_var_failure=True) is not supported: "
                             "an operator without an out variant cannot run in a .pte")
        self.ignore_to_out_var_failure = False


class ConstraintBasedSymShapeEvalPass:
    """upstream: plans dynamic dims at the upper bound of their constraint
    (torch.export.Dim(max=...)). This is what our planner does."""


class HintBasedSymShapeEvalPass:
    """upstream: plans dynamic dims at their example value. Not supported:
    to_executorch raises when it is asked for."""


def _takes_exported_program(fn: Callable) -> bool:
    """Whether a plain callable pass is ours (ExportedProgram -> ExportedProgram)
    rather than upstream's (GraphModule -> PassResult | None): ours are
    recognised by their first parameter's annotation."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    annotation = params[0].annotation
    return annotation is ExportedProgram or (isinstance(annotation, str)
                                             and annotation.endswith("ExportedProgram"))


def _copy_attribute(source: torch.nn.Module, dest: torch.nn.Module, target: str) -> None:
    """dest.<target> = source.<target> for a dotted target, making the
    intermediate submodules dest lacks."""
    *path, name = target.split(".")
    for part in path:
        source = getattr(source, part)
        if not hasattr(dest, part):
            setattr(dest, part, torch.nn.Module())
        dest = getattr(dest, part)
    value = getattr(source, name)
    if name in getattr(source, "_buffers", {}):
        dest.register_buffer(name, value)
    else:
        setattr(dest, name, value)


def run_pass(ep: ExportedProgram, p: Any) -> ExportedProgram:
    """One pass on a copy of `ep`: a PassBase or a callable on the graph
    module (upstream), or a callable annotated to take an ExportedProgram."""
    if not callable(p):
        raise TypeError(f"a pass must be a PassBase or a callable, got {type(p).__name__}")
    if not isinstance(p, PassBase) and _takes_exported_program(p):
        result = p(ep)
        if not isinstance(result, ExportedProgram):
            raise TypeError(f"pass {getattr(p, '__name__', p)!r} takes an ExportedProgram and "
                            f"must return one, got {type(result).__name__}")
        return result
    ep = copy.deepcopy(ep)
    gm = ep.graph_module
    result = p(gm)
    if isinstance(result, PassResult):
        new_gm = result.graph_module
    elif result is None or isinstance(result, torch.fx.GraphModule):
        new_gm = result or gm
    else:
        raise TypeError(f"pass {getattr(p, '__name__', type(p).__name__)!r} returned "
                        f"{type(result).__name__}; expected a PassResult, a GraphModule or None")
    if new_gm is not gm:
        # The pass built a new module: keep the program's signature on it.
        gm.graph = new_gm.graph
        for node in gm.graph.nodes:
            if node.op == "get_attr":
                _copy_attribute(new_gm, gm, node.target)
    gm.graph.lint()
    gm.recompile()
    return ep


def run_passes(ep: ExportedProgram, passes: Optional[Sequence[Any]]) -> ExportedProgram:
    for p in passes or ():
        ep = run_pass(ep, p)
    return ep


def passes_for(passes: Union[None, Sequence[Any], Mapping[str, Sequence[Any]]],
               method: str) -> Sequence[Any]:
    """The passes for `method`: one list for every method, or a dict per method."""
    if passes is None:
        return ()
    if isinstance(passes, Mapping):
        return list(passes.get(method, ()))
    return list(passes)


def option_for(option: Union[Any, Dict[str, Any]], method: str) -> Any:
    """upstream's per-method options (memory_planning_pass, sym_shape_eval_pass)
    may be one value or a dict by method name."""
    if isinstance(option, Mapping):
        return option.get(method)
    return option
