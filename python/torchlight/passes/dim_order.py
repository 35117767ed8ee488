"""to_dim_order_ops: aten::_to_copy and aten::empty.memory_format become
their dim_order_ops forms, as upstream's to_edge does unless told to skip.

The layout argument changes from a memory format to a dim order. Our
emitter lays every planned tensor out contiguously, so a format that asks
for another layout (channels_last) becomes the identity order: the argument
then describes the out tensor the program really holds, which is what
kernels (ours and upstream's) check it against. None (preserve) stays None.
"""

from __future__ import annotations

import torch
import torch.fx
from torch.export import ExportedProgram

from torchlight import dim_order_ops

_TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def _dim_order(node: torch.fx.Node):
    memory_format = node.kwargs.get("memory_format")
    if memory_format in (None, torch.preserve_format):
        return None
    val = node.meta.get("val")
    return list(range(val.dim()))


def _replace(graph: torch.fx.Graph, node: torch.fx.Node, target, args) -> None:
    kwargs = {k: v for k, v in node.kwargs.items() if k in _TENSOR_OPTIONS or k == "non_blocking"}
    kwargs["dim_order"] = _dim_order(node)
    with graph.inserting_before(node):
        new = graph.call_function(target, args, kwargs)
    new.meta.update(node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)


def to_dim_order_ops(ep: ExportedProgram) -> ExportedProgram:
    """Rewrites `ep`'s graphs (and cond branches) in place; returns `ep`."""
    to_copy = dim_order_ops.to_dim_order_copy()
    empty = dim_order_ops.empty_dim_order()
    for module in ep.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        graph = module.graph
        for node in list(graph.nodes):
            if node.op != "call_function":
                continue
            if node.target == torch.ops.aten._to_copy.default:
                _replace(graph, node, to_copy, (node.args[0],))
            elif node.target == torch.ops.aten.empty.memory_format:
                _replace(graph, node, empty, (node.args[0],))
        module.recompile()
    return ep
