"""MethodGraph: one method on its way from an ExportedProgram to a .pte plan.

The to_executorch passes (passes/) each take a MethodGraph and return it
transformed. It holds a private copy of the exported graph plus the facts of
the export signature the passes need, sorted by the role each placeholder
plays (user input, constant, mutable buffer), so no pass has to edit
torch.export's signature objects.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import sympy
import torch
import torch.fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from torchlight.errors import node_error


@dataclass
class MemorySummary:
    """What memory planning decided for one method."""

    algorithm: str
    alignment: int
    arena_sizes: List[int]      # Bytes of each arena (memory_id 1, 2, ...).
    num_planned: int            # Tensors given a place in an arena.
    unshared_bytes: int         # Sum of their aligned sizes: the arena without reuse.
    # Views placed in their base's memory (passes/alias_views.py): in total,
    # and how many of those still run their *_copy kernel (dynamic shapes:
    # it resizes the view and copies nothing). The others emit no instruction.
    aliased_views: int = 0
    resized_in_place_views: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(self.arena_sizes)


@dataclass
class MethodGraph:
    name: str
    graph_module: torch.fx.GraphModule
    # Placeholders of the method's inputs, in order.
    user_inputs: List[torch.fx.Node]
    # Placeholders whose value is fixed at export: parameters, unmutated
    # buffers, lifted constants.
    constants: Dict[torch.fx.Node, torch.Tensor]
    # Placeholders of buffers the method updates: fully qualified name and
    # initial value. Their state survives between calls.
    mutable_buffers: Dict[torch.fx.Node, Tuple[str, torch.Tensor]]
    # Mutable buffer placeholder -> the node computing its new value.
    buffer_writes: Dict[torch.fx.Node, torch.fx.Node]
    in_spec: Any
    out_spec: Any
    range_constraints: Dict[sympy.Symbol, Any] = field(default_factory=dict)
    memory: Optional[MemorySummary] = None

    @property
    def graph(self) -> torch.fx.Graph:
        return self.graph_module.graph

    def output_node(self) -> torch.fx.Node:
        return next(n for n in reversed(self.graph.nodes) if n.op == "output")

    def user_outputs(self) -> Sequence[Any]:
        return self.output_node().args[0]

    def placeholder_insertion_point(self) -> torch.fx.Node:
        """Where a new constant placeholder goes: before the first user input
        (constants come after parameters and buffers, as torch.export orders them)."""
        nodes = list(self.graph.nodes)
        if self.user_inputs:
            return self.user_inputs[0]
        return next(n for n in nodes if n.op != "placeholder")


def extract_method(ep: ExportedProgram, name: str) -> MethodGraph:
    """A MethodGraph for `ep` with a deep copy of its graph.

    Afterwards the output node holds only the user outputs; buffer updates
    are in `buffer_writes`. Raises ExportError for signature features a .pte
    cannot express (mutated user inputs, custom objects, tokens).
    """
    gm = copy.deepcopy(ep.graph_module)
    by_name = {n.name: n for n in gm.graph.nodes}
    signature = ep.graph_signature
    mutated = {s.target: s.arg.name for s in signature.output_specs
               if s.kind == OutputKind.BUFFER_MUTATION}

    user_inputs, constants, mutable = [], {}, {}
    for spec in signature.input_specs:
        node = by_name[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            user_inputs.append(node)
        elif spec.kind == InputKind.PARAMETER:
            constants[node] = ep.state_dict[spec.target]
        elif spec.kind == InputKind.BUFFER:
            value = (ep.state_dict[spec.target] if spec.persistent is not False
                     and spec.target in ep.state_dict else ep.constants[spec.target])
            if spec.target in mutated:
                mutable[node] = (spec.target, value)
            else:
                constants[node] = value
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            constants[node] = ep.constants[spec.target]
        else:
            raise node_error(node, f"inputs of kind {spec.kind.name} are not supported in .pte "
                                   f"programs")

    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    flat_outputs = list(output.args[0])
    writes, user_outputs = {}, []
    buffer_nodes = {fqn: node for node, (fqn, _) in mutable.items()}
    for spec, value in zip(signature.output_specs, flat_outputs):
        if spec.kind == OutputKind.USER_OUTPUT:
            user_outputs.append(value)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            writes[buffer_nodes[spec.target]] = value
        else:
            culprit = value if isinstance(value, torch.fx.Node) else output
            raise node_error(culprit, f"outputs of kind {spec.kind.name} (e.g. a mutated user "
                                      f"input) are not supported; return the new value instead")
    output.args = (tuple(user_outputs),)
    gm.recompile()

    call_spec = ep.call_spec
    return MethodGraph(name=name, graph_module=gm, user_inputs=user_inputs, constants=constants,
                       mutable_buffers=mutable, buffer_writes=writes, in_spec=call_spec.in_spec,
                       out_spec=call_spec.out_spec,
                       range_constraints=dict(ep.range_constraints))


def tensor_values(val: Any) -> List[torch.Tensor]:
    """The tensors in a node's meta["val"] (one, or a tuple/list of them)."""
    if isinstance(val, torch.Tensor):
        return [val]
    if isinstance(val, (list, tuple)):
        return [v for v in val if isinstance(v, torch.Tensor)]
    return []


def upper_bound(size: Any, method: MethodGraph, node: torch.fx.Node) -> int:
    """The largest value a (possibly symbolic) size can take.

    Raises ExportError, naming `node`, when a symbolic size has no finite
    upper bound (torch.export.Dim without max=).
    """
    if isinstance(size, int):
        return size
    expr = size.node.expr
    if expr.is_number:
        return int(expr)
    from torch.utils._sympy.value_ranges import bound_sympy

    ranges = {s: method.range_constraints[s] for s in expr.free_symbols
              if s in method.range_constraints}
    upper = bound_sympy(expr, ranges).upper if len(ranges) == len(expr.free_symbols) else None
    if upper is None or not upper.is_finite:
        shape_env = size.node.shape_env
        upper = shape_env.bound_sympy(expr).upper if shape_env is not None else None
    if upper is None or not upper.is_finite or upper > 2**31 - 1:
        raise node_error(node, f"size {expr} has no finite upper bound, and .pte tensors need one "
                               f"to be memory-planned; give its torch.export.Dim a max= "
                               f"(e.g. Dim('batch', max=64))")
    return int(upper)


def is_symbolic(size: Any) -> bool:
    return not isinstance(size, int) and not size.node.expr.is_number


def upper_bound_sizes(tensor: torch.Tensor, method: MethodGraph,
                      node: torch.fx.Node) -> List[int]:
    return [upper_bound(s, method, node) for s in tensor.shape]

