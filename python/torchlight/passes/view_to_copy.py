"""view_to_copy: views become copies (aten::view -> aten::view_copy)."""

from __future__ import annotations

from typing import List, Tuple

import torch.fx
from torch._ops import OpOverload

from torchlight import ops
from torchlight.errors import raise_all
from torchlight.method_graph import MethodGraph


def view_to_copy(method: MethodGraph) -> MethodGraph:
    """Replaces every view operator by its `<name>_copy` twin with the same
    overload (found by name in torch.ops, e.g. aten::permute.default ->
    aten::permute_copy.default).

    Afterwards no two values share memory unless a later pass decides so,
    which keeps the passes in between simple: alias_views (after
    to_out_variants) turns the copies that can share their base's bytes
    (reshapes, outer selects and slices of planned intermediates) back into
    aliases. Raises ExportError for a view with no copying twin.
    """
    problems: List[Tuple[torch.fx.Node, str]] = []
    for node in method.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, OpOverload):
            continue
        if not ops.is_view(node.target):
            continue
        replacement = ops.copy_variant(node.target)
        if replacement is None:
            problems.append((node, "is a view with no copying variant "
                                   f"({node.target._schema.name}_copy) to lower it to"))
            continue
        node.target = replacement
    raise_all(problems, "views cannot be lowered")
    method.graph_module.recompile()
    return method
