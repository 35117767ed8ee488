"""plan_buffer_writes: decide how each updated buffer gets its new value back."""

from __future__ import annotations

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight.method_graph import MethodGraph

# Meta key on a node whose result must be stored into a mutable buffer's slot.
WRITE_INTO = "tl_write_into"

aten = torch.ops.aten
# Updates of part of their `self` argument (the rest is copied unchanged):
# with out = self's own memory they write just that part; their portable
# kernels skip copying self onto itself (kernels/portable/util/in_place.h).
_PARTIAL_UPDATES = {aten.index_put.default, aten.index_copy.default,
                    aten.slice_scatter.default, aten.select_scatter.default}


def _same_spec(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    va, vb = a.meta.get("val"), b.meta.get("val")
    return (isinstance(va, torch.Tensor) and isinstance(vb, torch.Tensor) and
            va.dtype == vb.dtype and tuple(va.shape) == tuple(vb.shape))


def _updates_buffer(buffer: torch.fx.Node, value: torch.fx.Node) -> bool:
    """`value` is a partial update (index_put, slice_scatter, ...) of the
    buffer itself, which it reads as `self` and nowhere else."""
    if value.target not in _PARTIAL_UPDATES or not value.args or value.args[0] is not buffer:
        return False
    others = []
    torch.fx.node.map_arg((value.args[1:], value.kwargs), others.append)
    return buffer not in others


def _can_write_in_place(buffer: torch.fx.Node, value: torch.fx.Node,
                        order: dict) -> bool:
    """Whether `value` may be computed straight into `buffer`'s memory.

    Safe when the result has the buffer's dtype and shape, nothing reads the
    old buffer after the op runs, and either the op is pointwise (each
    output element depends only on the same element of a same-shaped input,
    so reading and writing one slot is fine) or it updates part of the
    buffer itself (`cache.index_copy_(2, pos, k)` -> index_put(cache, ...)).
    """
    if value.op != "call_function" or not isinstance(value.target, OpOverload):
        return False
    if WRITE_INTO in value.meta:
        return False
    if torch.Tag.pointwise not in value.target.tags and not _updates_buffer(buffer, value):
        return False
    if not _same_spec(buffer, value):
        return False
    return all(order[user] < order[value] for user in buffer.users if user is not value)


def plan_buffer_writes(method: MethodGraph) -> MethodGraph:
    """For every mutable buffer the method updates, marks the node whose
    result must land in the buffer's own memory slot (meta "tl_write_into").

    That node is the op computing the new value when it is safe to run it in
    place (_can_write_in_place: e.g. `cache.add_(x)`, or
    `cache.index_copy_(dim, pos, k)` updating rows of a KV cache); otherwise an
    aten::copy(buffer, new_value) is added at the end of the graph and
    marked instead. Afterwards memory planning puts each marked node's out
    tensor into the buffer's slot, so the state persists across calls.
    """
    graph = method.graph
    order = {node: i for i, node in enumerate(graph.nodes)}
    output = method.output_node()
    for buffer, value in method.buffer_writes.items():
        if value is buffer:
            continue
        if isinstance(value, torch.fx.Node) and _can_write_in_place(buffer, value, order):
            value.meta[WRITE_INTO] = buffer
            continue
        with graph.inserting_before(output):
            copy = graph.call_function(torch.ops.aten.copy.default, (buffer, value))
        copy.meta["val"] = buffer.meta["val"]
        source = value if isinstance(value, torch.fx.Node) else buffer
        copy.meta["stack_trace"] = source.meta.get("stack_trace")
        copy.meta[WRITE_INTO] = buffer
    method.graph_module.recompile()
    return method
