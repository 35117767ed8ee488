"""remove_assertions: drop run-time checks and dead code."""

from __future__ import annotations

from torch._ops import OpOverload

from torchlight import ops
from torchlight.method_graph import MethodGraph


def remove_assertions(method: MethodGraph) -> MethodGraph:
    """Removes nodes that only check a condition (aten::_assert_scalar,
    aten::sym_constrain_range_for_size, ...: ops with no result that write
    nothing), then every computation whose result nobody uses, such as the
    symbolic arithmetic that fed them.

    Afterwards every call_function node contributes to an output or to a
    buffer update. Shapes are still checked: the runtime rejects inputs
    outside the planned bounds in set_input.
    """
    graph = method.graph
    live_roots = set(method.buffer_writes.values())
    for node in reversed(list(graph.nodes)):
        if node.op != "call_function" or node.users or node in live_roots:
            continue
        target = node.target
        if isinstance(target, OpOverload) and ops.writes_arguments(target):
            continue  # Has an effect besides its result.
        graph.erase_node(node)
    method.graph_module.recompile()
    return method
