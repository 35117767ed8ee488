"""to_out_variants: every functional operator becomes its out= overload."""

from __future__ import annotations

import operator
from typing import List, Tuple

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight import ops
from torchlight.errors import raise_all
from torchlight.method_graph import MethodGraph, tensor_values, upper_bound_sizes
from torchlight.passes.buffer_writes import WRITE_INTO

# Meta keys: on an alloc, the storage whose slot it reuses (a mutable
# buffer's placeholder, or a planned alloc a view aliases, see
# alias_views.py) and the byte offset into it (default 0); on an alloc of a
# copy-free view, "static" (no instruction) or "resized" (its *_copy kernel
# still runs, to resize it); on an out-variant or delegate node, its allocs
# in output order.
ALIAS_OF = "tl_alias_of"
ALIAS_OFFSET = "tl_alias_offset"
VIEW_ALIAS = "tl_view_alias"
OUT_ALLOCS = "tl_out_allocs"
# Meta key on a call of an out variant that also writes mutable buffers
# passed as its arguments (passes/in_place_calls.py): those buffers.
MUTATES_BUFFERS = "tl_mutates_buffers"


def _make_alloc(method: MethodGraph, node: torch.fx.Node, val: torch.Tensor) -> torch.fx.Node:
    sizes = upper_bound_sizes(val, method, node)
    with method.graph.inserting_before(node):
        alloc = method.graph.call_function(ops.alloc, (tuple(sizes), val.dtype))
    alloc.meta["val"] = val
    alloc.meta["stack_trace"] = node.meta.get("stack_trace")
    return alloc


def _convert_operator(method: MethodGraph, node: torch.fx.Node, out_op: OpOverload) -> None:
    functional = node.target
    vals = node.meta["val"]
    out_args = ops.out_arguments(out_op)
    kept = {a.name for a in out_op._schema.arguments}
    kwargs = {k: v for k, v in node.kwargs.items() if k in kept}
    allocs: List[torch.fx.Node] = []
    if len(out_args) == 1 and isinstance(out_args[0].type, torch.ListType):
        # One Tensor(a!)[] out argument (split_copy.Tensor_out, ...).
        items = [_make_alloc(method, node, v) for v in vals]
        kwargs[out_args[0].name] = items
        allocs = items
    else:
        tensors = [vals] if len(functional._schema.returns) == 1 else list(vals)
        for arg, val in zip(out_args, tensors):
            alloc = _make_alloc(method, node, val)
            kwargs[arg.name] = alloc
            allocs.append(alloc)
    node.target = out_op
    node.kwargs = kwargs
    node.meta[OUT_ALLOCS] = allocs
    buffer = node.meta.get(WRITE_INTO)
    if buffer is not None:
        allocs[0].meta[ALIAS_OF] = buffer


def to_out_variants(method: MethodGraph) -> MethodGraph:
    """Gives every tensor a node that owns its memory.

    Each functional operator becomes its out= overload (ops.out_variant,
    found from torch's schemas) whose out arguments are `ops.alloc` nodes
    inserted just before it, one per result, carrying the result's
    dtype and upper-bound shape. Delegate calls get allocs for their results
    too. Symbolic-size operators (aten::sym_size.int, Python arithmetic on
    sizes) stay as they are. An alloc that must land in a mutable buffer's
    slot is marked ALIAS_OF that buffer. Calls that already are out variants
    writing buffers in place (MUTATES_BUFFERS) get allocs for their out=
    arguments.

    Raises ExportError listing every operator with no out variant.
    """
    problems: List[Tuple[torch.fx.Node, str]] = []
    for node in list(method.graph.nodes):
        if node.op != "call_function" or ops.is_alloc(node):
            continue
        target = node.target
        if target is operator.getitem or ops.is_symbolic_function(target):
            continue
        if getattr(target, "_torchlight_control_flow", False):
            continue  # A jump marker (passes/control_flow.py).
        if ops.is_delegate_call(target):
            allocs = [_make_alloc(method, node, v) for v in tensor_values(node.meta["val"])]
            node.kwargs = {"out": tuple(allocs)}
            node.meta[OUT_ALLOCS] = allocs
            continue
        if not isinstance(target, OpOverload):
            problems.append((node, "is not an operator torchlight can lower"))
            continue
        if ops.returns_symbolic(target):
            continue
        if MUTATES_BUFFERS in node.meta and ops.is_out_variant(target):
            _convert_operator(method, node, target)  # Allocs for its out= results.
            continue
        if ops.writes_arguments(target):
            problems.append((node, "writes one of its arguments in place; only functional "
                                   "programs (as torch.export produces) can be lowered"))
            continue
        out_op = ops.out_variant(target)
        if out_op is None:
            problems.append((node, f"has no out variant: no overload of "
                                   f"{target._schema.name} takes out= tensors for the same "
                                   f"arguments"))
            continue
        _convert_operator(method, node, out_op)
    raise_all(problems, "operators cannot be converted to out variants")
    method.graph_module.recompile()
    return method
