"""to_dim_order_ops: aten::_to_copy and aten::empty.memory_format become
their dim_order_ops forms, as upstream's to_edge does by default (release
0.5's MemoryFormatOpsPass; EdgeCompileConfig._skip_dim_order=True keeps the
aten forms).

The layout argument changes from a memory format to a dim order, written
as upstream writes it: no memory_format argument means contiguous (the
identity order, written out), preserve_format means None. One difference:
our emitter lays every planned tensor out contiguously, so a format asking
for another layout (channels_last) also becomes the identity order, the
layout the out tensor really has, which is what kernels (ours and
upstream's) check the argument against. Upstream would write (0, 2, 3, 1)
and plan a channels-last out tensor; the values are the same.

A kernel target that lacks an operator's dim_order form (upstream's
portable list has no _empty_dim_order.out) keeps the aten form there.
"""

from __future__ import annotations

from typing import Optional, Set

import torch
import torch.fx
from torch.export import ExportedProgram

from torchlight import dim_order_ops

_TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def _dim_order(node: torch.fx.Node):
    # Upstream's default when the argument is absent is contiguous_format.
    memory_format = node.kwargs.get("memory_format", torch.contiguous_format)
    if memory_format in (None, torch.preserve_format):
        return None
    return list(range(node.meta["val"].dim()))


def _replace(graph: torch.fx.Graph, node: torch.fx.Node, target, args) -> None:
    kwargs = {k: v for k, v in node.kwargs.items() if k in _TENSOR_OPTIONS or k == "non_blocking"}
    kwargs["dim_order"] = _dim_order(node)
    with graph.inserting_before(node):
        new = graph.call_function(target, args, kwargs)
    new.meta.update(node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)


def to_dim_order_ops(ep: ExportedProgram, target_kernels: Optional[Set[str]] = None
                     ) -> ExportedProgram:
    """Rewrites `ep`'s graphs (and cond branches) in place; returns `ep`.
    `target_kernels`: the kernel names of an upstream target (None: ours,
    which has every dim_order kernel)."""
    replacements = {
        torch.ops.aten._to_copy.default: (dim_order_ops.to_dim_order_copy(),
                                          "dim_order_ops::_to_dim_order_copy.out"),
        torch.ops.aten.empty.memory_format: (dim_order_ops.empty_dim_order(),
                                             "dim_order_ops::_empty_dim_order.out"),
    }
    for module in ep.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        graph = module.graph
        for node in list(graph.nodes):
            if node.op != "call_function" or node.target not in replacements:
                continue
            target, kernel = replacements[node.target]
            if target_kernels is None or kernel in target_kernels:
                _replace(graph, node, target, (node.args[0],))
        module.recompile()
    return ep
