"""plan_buffer_writes: decide how each updated buffer gets its new value back."""

from __future__ import annotations

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight.method_graph import MethodGraph

# Meta key on a node whose result must be stored into a mutable buffer's slot.
WRITE_INTO = "tl_write_into"


def _same_spec(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    va, vb = a.meta.get("val"), b.meta.get("val")
    return (isinstance(va, torch.Tensor) and isinstance(vb, torch.Tensor) and
            va.dtype == vb.dtype and tuple(va.shape) == tuple(vb.shape))


def _can_write_in_place(buffer: torch.fx.Node, value: torch.fx.Node,
                        order: dict) -> bool:
    """Whether `value` may be computed straight into `buffer`'s memory.

    Safe when the op is pointwise (each output element depends only on the
    same element of a same-shaped input, so reading and writing one slot is
    fine), the result has the buffer's dtype and shape, and nothing reads the
    old buffer after the op runs.
    """
    if value.op != "call_function" or not isinstance(value.target, OpOverload):
        return False
    if torch.Tag.pointwise not in value.target.tags or WRITE_INTO in value.meta:
        return False
    if not _same_spec(buffer, value):
        return False
    return all(order[user] < order[value] for user in buffer.users if user is not value)


def plan_buffer_writes(method: MethodGraph) -> MethodGraph:
    """For every mutable buffer the method updates, marks the node whose
    result must land in the buffer's own memory slot (meta "tl_write_into").

    That node is the op computing the new value when it is safe to run it in
    place (_can_write_in_place: e.g. `cache.add_(x)`); otherwise an
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
